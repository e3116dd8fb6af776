"""Per-session hook state on disk (the hook is a new process at every event).

Everything lives in ``<sjc's state folder>/sessions/`` (``~/.local/state/sjc/sessions`` on Linux), found
without loading the config, so an event with nothing to do costs no more than starting Python:

- ``<session>.json``: what PreCompact noted, which compactions were judged (so a boundary is judged
  once however many events fire) and whether their note reached the model. Updates take a lock and
  replace the file atomically.
- ``<session>.recent.json``: what the host handed the latest hooks that the transcript may not hold
  yet (Claude Code writes a batch's tool results to the file only after the compaction that follows
  it), overwritten by each event.
- ``<session>.note``: a note for the model waiting to be handed over; taken exactly once (renamed
  away first, so two hooks running at once cannot both take it).
- ``<session>.judging.*``: one per judgment running in the background (the hook payload it judges);
  removed when it ends.

A session's files go once nothing has touched them for ``KEEP_DAYS`` (``sweep``, run after a judgment at
most once a day), so the folder does not grow with every session ever run.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import time
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


def sessions_dir() -> Path:
    from sjc_mcp import paths

    return paths.state_dir() / "sessions"


def _name(session_id: str) -> str:
    return _SAFE.sub("_", session_id or "unknown")[:120]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (mode 0600) so a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


KEEP_DAYS = 30


def sweep(folder: Path, keep_s: float = KEEP_DAYS * 86400, every_s: float = 86400) -> int:
    """Remove the files in ``folder`` untouched for ``keep_s`` seconds, at most once per ``every_s`` (a
    ``.swept`` file keeps the time); the number removed. Never raises: a file that cannot go stays."""
    mark = folder / ".swept"
    now = time.time()
    try:
        if now - mark.stat().st_mtime < every_s:
            return 0
    except OSError:
        pass
    removed = 0
    try:
        mark.touch(mode=0o600)  # creates it, or sets its time to now
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for e in entries:
        if e.name == ".swept":
            continue
        with contextlib.suppress(OSError):
            if e.is_file(follow_symlinks=False) and now - e.stat(follow_symlinks=False).st_mtime > keep_s:
                os.unlink(e.path)
                removed += 1
    return removed


class SessionState:
    def __init__(self, folder: Path, session_id: str) -> None:
        self.folder = folder
        self.name = _name(session_id)
        self.path = folder / f"{self.name}.json"

    @classmethod
    def of(cls, session_id: str) -> SessionState:
        return cls(sessions_dir(), session_id)

    def read(self) -> dict[str, Any]:
        return json_object(self.path)

    @contextlib.contextmanager
    def update(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            data = self.read()
            yield data
            write_atomic(self.path, json.dumps(data, ensure_ascii=False))
        finally:
            os.close(lock)

    # -- what the latest events were handed ------------------------------------------------------------
    @property
    def recent_path(self) -> Path:
        return self.folder / f"{self.name}.recent.json"

    def read_recent(self) -> dict[str, Any]:
        return json_object(self.recent_path)

    def write_recent(self, key: str, value: Any) -> None:
        """Set one key of the recent file (last writer wins; a lost race only loses a hint)."""
        data = self.read_recent()
        data[key] = value
        write_atomic(self.recent_path, json.dumps(data, ensure_ascii=False))

    def drop_recent(self) -> None:
        with contextlib.suppress(OSError):
            self.recent_path.unlink()

    # -- compactions being judged in the background -------------------------------------------------------
    def judging_path(self) -> Path:
        """A new marker for one judgment: it exists while that judgment runs."""
        return self.folder / f"{self.name}.judging.{os.getpid()}.{time.monotonic_ns()}"

    def judging(self, fresh_s: float = 60.0) -> list[Path]:
        """The judgments of this session still running (a marker older than ``fresh_s`` was left by one
        that died)."""
        now = time.time()
        out = []
        with contextlib.suppress(OSError):
            for p in self.folder.glob(f"{glob.escape(self.name)}.judging.*"):
                with contextlib.suppress(OSError):
                    if now - p.stat().st_mtime < fresh_s:
                        out.append(p)
        return out

    # -- the note waiting for the model ------------------------------------------------------------------
    @property
    def note_path(self) -> Path:
        return self.folder / f"{self.name}.note"

    def note_waiting(self) -> bool:
        return self.note_path.exists()

    def put_note(self, note: dict[str, Any]) -> None:
        """Leave a note for the model (it replaces an older one: that summary is gone)."""
        write_atomic(self.note_path, json.dumps(note, ensure_ascii=False))

    def take_note(self) -> dict[str, Any] | None:
        """The waiting note, taken: no other caller gets it. None when there is none."""
        claimed = self.note_path.with_name(f".{self.note_path.name}.taken{os.getpid()}")
        try:
            os.rename(self.note_path, claimed)
        except OSError:
            return None
        try:
            data = json.loads(claimed.read_text())
            return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None
        except (OSError, ValueError):
            return None
        finally:
            with contextlib.suppress(OSError):
                claimed.unlink()
