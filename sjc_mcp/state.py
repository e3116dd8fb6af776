"""Per-session hook state on disk (the hook is a new process at every event).

``<decision log folder>/sessions/<session id>.json`` holds what PreCompact noted, which compactions
were judged (so a boundary is judged once however many events fire) and any correction still to
be delivered. Updates take a lock and replace the file atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def summary_key(summary: str) -> str:
    """The same for a Claude Code summary as stored in the transcript and as PostCompact's raw text."""
    from sjc_mcp.summary import split_summary

    parsed = split_summary(summary)
    body = "\n".join(" ".join(e.text.split()) for e in parsed.entries if e.section != "Analysis")
    return hashlib.sha256((body or summary).encode()).hexdigest()[:24]


class SessionState:
    def __init__(self, folder: Path, session_id: str) -> None:
        self.path = folder / f"{_SAFE.sub('_', session_id or 'unknown')[:120]}.json"

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    @contextlib.contextmanager
    def update(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            data = self.read()
            yield data
            tmp = self.path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(data, ensure_ascii=False))
            os.replace(tmp, self.path)
        finally:
            os.close(lock)
