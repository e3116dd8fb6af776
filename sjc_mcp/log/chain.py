"""The decision log: append-only JSONL, one record per judged summary, chained by hash, anchored.

Each record carries ``prev`` (the previous record's ``hash``) and its own ``hash``: SHA-256 of the
record's canonical JSON without ``hash``. The chain shows a record altered, removed or moved; it
cannot show records cut off the end, so beside the log sits ``<log>.anchor``: the number of records
and the last hash, rewritten (temporary file, then rename) after every append. A cut tail leaves the
anchor pointing past the end of the log.

Log and anchor are sjc's own files (``sjc_mcp.private``): written only as regular files this user owns
that no one else can write, in a folder this user owns that no one else can write; anything else there
(another user's file, a FIFO, a device) is refused with an ``OSError`` naming it, never written or waited on.

Appends take an exclusive ``flock`` on the log, read the last hash, write the whole line in one
``write`` and update the anchor before releasing the lock, so processes appending at once never
interleave, lose a line, fork the chain or race on the anchor. Log and anchor are created 0600.

Every record leaves with a ``session`` and a ``boundary_id``: when the caller gives no boundary id,
one is derived from the judged entries (``h:`` and a hash of their sections and text hashes), so a
``judge`` and a ``prune`` of the same summary land on the same boundary.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
DERIVED_PREFIX = "h:"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends stay atomic, the chain is best effort
    fcntl = None  # type: ignore[assignment]


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body)).hexdigest()


def anchor_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path).expanduser()
    return p.with_name(p.name + ".anchor")


def read_anchor(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The anchor beside the log: ``{"records": n, "hash": last}``, or None if absent or unreadable."""
    from sjc_mcp.regular_file import read_regular

    try:
        data = json.loads(read_regular(anchor_path(path), 1 << 16))  # a FIFO in its place is not waited on
    except (OSError, ValueError):  # missing, unreadable, no regular file, over 64 KB, no JSON
        return None
    if isinstance(data, dict) and isinstance(data.get("records"), int) and isinstance(data.get("hash"), str):
        return data
    return None


def _write_anchor(path: Path, records: int, last: str) -> None:
    from sjc_mcp.private import open_own

    target = anchor_path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # a writer that stopped half way left it (the log's lock is held: no one else writes it)
    fd = open_own(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, json.dumps({"v": 1, "records": records, "hash": last}).encode() + b"\n")
    finally:
        os.close(fd)
    try:
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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


def _count_records(fd: int) -> int:
    """Chained records in the log (a slow path: only when the anchor is missing or stale)."""
    os.lseek(fd, 0, os.SEEK_SET)
    count = 0
    with os.fdopen(os.dup(fd), "rb") as fh:
        for raw in fh:
            if b'"hash"' not in raw:
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("hash"), str):
                count += 1
    return count


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def derived_boundary_id(record: dict[str, Any]) -> str | None:
    """A boundary id from what was judged: the entries' sections and text hashes, else the tool results."""
    entries = record.get("entries") or []
    if entries:
        parts = [
            f"{e.get('section')}\x1f{e.get('text_sha') or hashlib.sha256(str(e.get('text')).encode()).hexdigest()}"
            for e in entries
            if isinstance(e, dict)
        ]
    elif record.get("results"):
        parts = [canonical(r).decode() for r in record["results"] if isinstance(r, dict)]
    else:
        return None
    return DERIVED_PREFIX + hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:16]


def _fill_ids(rec: dict[str, Any]) -> None:
    if not rec.get("session"):
        rec["session"] = f"no-session:{rec.get('source') or rec.get('surface') or rec.get('op') or 'unknown'}"
    if rec.get("boundary_id") is None:
        derived = derived_boundary_id(rec)
        if derived is None:  # nothing judged (a status record): the event itself is the boundary
            body = {k: v for k, v in rec.items() if k not in ("prev", "hash")}
            derived = DERIVED_PREFIX + hashlib.sha256(canonical(body)).hexdigest()[:16]
        rec["boundary_id"] = derived


def _open_log(path: str | os.PathLike[str]) -> int:
    """The log opened for appending (created 0600 in a folder created 0700): a regular file of this user's
    in a folder of this user's (``private``), never a FIFO or device waited on; else an ``OSError``."""
    from sjc_mcp.private import ensure_folder, open_own

    p = Path(path).expanduser()
    ensure_folder(p.parent)
    real = os.path.realpath(p)  # a link the user made to their own log is followed; where it leads is checked
    if real != os.path.abspath(p):
        ensure_folder(Path(real).parent)
    return open_own(real, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)


def append(path: str | os.PathLike[str], record: dict[str, Any]) -> dict[str, Any]:
    """Append ``record`` (adding ``time``, ids, ``prev`` and ``hash``) and return what was written.

    The line goes out in one ``write``: whole or, on a short write (disk full), not at all.
    """
    fd = _open_log(path)
    p = Path(path).expanduser()
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        rec = dict(record)
        rec.setdefault("time", now_iso())
        _fill_ids(rec)
        last = _last_hash(fd)
        anchor = read_anchor(p)
        if anchor is not None and anchor["hash"] == last:
            count = anchor["records"]
        else:  # no anchor yet (a new or older log), or a writer stopped between the log and the anchor
            count = _count_records(fd) if last != GENESIS else 0
        rec["prev"] = last
        rec["hash"] = record_hash(rec)
        line = canonical(rec) + b"\n"
        size = os.fstat(fd).st_size
        written = os.write(fd, line)
        if written != len(line):
            os.ftruncate(fd, size)
            raise OSError(f"short write to the decision log ({written} of {len(line)} bytes); record dropped")
        try:
            _write_anchor(p, count + 1, rec["hash"])
        except OSError as exc:  # the record is in; `sjc audit --verify` will say the anchor lags
            import sys

            print(f"sjc: could not update the decision log's anchor {anchor_path(p)}: {exc}", file=sys.stderr)
        return rec
    finally:
        os.close(fd)  # closing releases the lock


def append_many(path: str | os.PathLike[str], records: list[dict[str, Any]]) -> int:
    """Append ``records`` in order as ``append`` would, one after another, under one lock, with one anchor
    update at the end (for bulk writers: a replay, a benchmark's log). Returns how many were written."""
    fd = _open_log(path)
    p = Path(path).expanduser()
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        last = _last_hash(fd)
        anchor = read_anchor(p)
        if anchor is not None and anchor["hash"] == last:
            count = anchor["records"]
        else:
            count = _count_records(fd) if last != GENESIS else 0
        lines = []
        for record in records:
            rec = dict(record)
            rec.setdefault("time", now_iso())
            _fill_ids(rec)
            rec["prev"] = last
            rec["hash"] = last = record_hash(rec)
            lines.append(canonical(rec) + b"\n")
        data = b"".join(lines)
        size = os.fstat(fd).st_size
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                os.ftruncate(fd, size)
                raise OSError("short write to the decision log; records dropped")
            view = view[written:]
        _write_anchor(p, count + len(lines), last)
        return len(lines)
    finally:
        os.close(fd)


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


def regular_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as a log (missing, a folder, a FIFO or device), or None."""
    try:
        st = os.stat(Path(path).expanduser())
    except FileNotFoundError:
        return f"no decision log at {path}"
    except OSError as exc:
        return f"cannot read the decision log {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return f"{path} is a folder, not a decision log"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file (a FIFO, socket or device), not a decision log"
    return None


def read(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """Yield ``(line number, record or None if corrupt, raw line)`` for every line of the log (a regular
    file: see ``regular_file_problem``)."""
    p = Path(path).expanduser()
    fast = _fast_loads()
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        for n, raw in enumerate(fh, 1):
            raw = raw.rstrip("\n")
            if not raw.strip():
                continue
            try:
                rec = fast(raw)
            except ValueError:
                try:  # what the fast parser refuses, the standard one may still read (a lone surrogate escape)
                    rec = json.loads(raw)
                except ValueError:
                    yield n, None, raw
                    continue
            yield n, (rec if isinstance(rec, dict) else None), raw


def _fast_loads() -> Any:
    """``msgspec.json.decode`` (C, several times faster than ``json.loads`` on a large log)."""
    import msgspec

    decode = msgspec.json.decode

    def loads(raw: str) -> Any:
        try:
            return decode(raw)
        except msgspec.DecodeError as exc:  # a ValueError, as json.loads raises
            raise ValueError(str(exc)) from None

    return loads


class Timer(contextlib.AbstractContextManager["Timer"]):
    def __enter__(self) -> Timer:
        self.t0 = time.perf_counter()
        self.ms = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.ms = (time.perf_counter() - self.t0) * 1000
