"""The decision log: append-only JSONL, one record per judged summary, chained by hash.

Each record carries ``prev`` (the previous record's ``hash``) and its own ``hash``: SHA-256 of the
record's canonical JSON without ``hash``. Appends take an exclusive ``flock`` on the log, read the
last hash and write the whole line in one ``write``, so processes appending at once never
interleave, lose a line or fork the chain.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

GENESIS = "0" * 64

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends stay atomic, the chain is best effort
    fcntl = None  # type: ignore[assignment]


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body)).hexdigest()


def _last_hash(fd: int) -> str:
    size = os.fstat(fd).st_size
    if size == 0:
        return GENESIS
    block = min(size, 1 << 16)
    while True:
        os.lseek(fd, size - block, os.SEEK_SET)
        data = os.read(fd, block)
        lines = data.rstrip(b"\n").split(b"\n")
        candidates = lines if block == size else lines[1:]
        for raw in reversed(candidates):
            try:
                rec = json.loads(raw)
                if isinstance(rec, dict) and isinstance(rec.get("hash"), str):
                    return rec["hash"]
            except ValueError:
                continue
        if block == size:
            return GENESIS
        block = min(size, block * 4)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def append(path: str | os.PathLike[str], record: dict[str, Any]) -> dict[str, Any]:
    """Append ``record`` (adding ``time``, ``prev`` and ``hash``) and return what was written."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        rec = dict(record)
        rec.setdefault("time", now_iso())
        rec["prev"] = _last_hash(fd)
        rec["hash"] = record_hash(rec)
        line = canonical(rec) + b"\n"
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        return rec
    finally:
        os.close(fd)  # closing releases the lock


def append_status(path: str | os.PathLike[str], status: str, errors: list[str], meta: dict[str, Any]) -> None:
    """Record an event that produced no judgment (disabled, error, timeout, nothing); never raises."""
    record = {
        "v": 1,
        **{k: v for k, v in meta.items() if v is not None},
        "status": status,
        "errors": errors,
        "entries": [],
        "kept": 0,
        "pruned": 0,
        "unjudged": 0,
    }
    try:
        append(path, record)
    except OSError as exc:
        import sys

        print(f"sjc: could not write the decision log {path}: {exc}", file=sys.stderr)


def read(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """Yield ``(line number, record or None if corrupt, raw line)`` for every line of the log."""
    p = Path(path).expanduser()
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        for n, raw in enumerate(fh, 1):
            raw = raw.rstrip("\n")
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                yield n, None, raw
                continue
            yield n, (rec if isinstance(rec, dict) else None), raw


class Timer(contextlib.AbstractContextManager["Timer"]):
    def __enter__(self) -> Timer:
        self.t0 = time.perf_counter()
        self.ms = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.ms = (time.perf_counter() - self.t0) * 1000
