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
most once a day), so the folder does not grow with every session ever run. The sweep removes only files
named as sjc names them, owned by this user, from the folder itself, never through a link.

The folder and every file in it are trusted only as ``sjc_mcp.private`` says (this user's, writable by no
one else, regular files): another user's note would speak to the model. What fails is not read (an empty
state) and not written (an ``OSError``, which the hook reports and survives).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import stat
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
    """Write ``text`` to ``path`` (mode 0600) so a reader sees the old file or the new one, never half; in a
    folder of sjc's own (``private.ensure_folder``), else an ``OSError``."""
    from sjc_mcp.private import ensure_folder, open_own

    ensure_folder(path.parent, link_ok=False)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # one a killed run of the same pid left
    fd = open_own(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _object(raw: bytes | None) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def own_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, one of sjc's own files; {} when it is missing, unreadable, not to be
    trusted (``private.read_own``: another user's, writable by others, a FIFO) or not an object."""
    from sjc_mcp.private import read_own

    return _object(read_own(path, link_ok=False))


def json_object(path: Path) -> dict[str, Any]:
    """The JSON object in any file (a host's settings); {} when it is missing, unreadable, not a regular
    file (a FIFO is not waited on) or not an object."""
    from sjc_mcp.regular_file import read_regular

    try:
        return _object(read_regular(path, 64 << 20))
    except OSError:  # missing, unreadable, no regular file (NotRegular) or larger than 64 MB (TooLarge)
        return {}


KEEP_DAYS = 30


# what sjc writes in the sessions folder: <session>.json, .lock, .recent.json, .note, .judging.<pid>.<ns>,
# and the temporary names of an atomic write (.<name>.tmp<pid>) or a taken note (.<name>.note.taken<pid>)
_OURS = re.compile(
    r"(?:[A-Za-z0-9._-]{1,120}\.(?:json|lock|note|judging\.\d+\.\d+)"
    r"|\.[A-Za-z0-9._-]{1,120}\.(?:tmp|note\.taken)\d+)"
)


def sweep(folder: Path, keep_s: float = KEEP_DAYS * 86400, every_s: float = 86400) -> int:
    """Remove sjc's files in ``folder`` untouched for ``keep_s`` seconds, at most once per ``every_s`` (a
    ``.swept`` file keeps the time); the number removed. Only the folder itself is swept, never through a
    link, and only when it is sjc's own (``private.folder_problem``); only files named as sjc names them,
    regular, this user's. Never raises: a file that cannot go stays."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        dfd = os.open(folder, flags)  # a link in the folder's place fails here
    except OSError:
        return 0
    try:
        return _sweep_at(dfd, folder, keep_s, every_s)
    except (OSError, NotImplementedError):
        return 0
    finally:
        os.close(dfd)


def _sweep_at(dfd: int, folder: Path, keep_s: float, every_s: float) -> int:
    from sjc_mcp.private import UID, folder_problem

    if not os.path.samestat(os.fstat(dfd), os.lstat(folder)) or folder_problem(folder, link_ok=False) is not None:
        return 0
    now = time.time()
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    with contextlib.suppress(FileNotFoundError):
        if now - os.stat(".swept", dir_fd=dfd, follow_symlinks=False).st_mtime < every_s:
            return 0
    os.close(os.open(".swept", os.O_WRONLY | os.O_CREAT | nofollow, 0o600, dir_fd=dfd))
    os.utime(".swept", dir_fd=dfd, follow_symlinks=False)  # now: the next sweep is a day away
    removed = 0
    for name in os.listdir(dfd):
        if name == ".swept" or not _OURS.fullmatch(name):
            continue
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (UID is not None and st.st_uid != UID):
                continue
            if now - st.st_mtime > keep_s:
                os.unlink(name, dir_fd=dfd)
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

    def _trusted(self) -> bool:
        """Whether the folder is sjc's own (``private.folder_problem``): nothing in another is renamed or removed."""
        from sjc_mcp.private import folder_problem

        return folder_problem(self.folder, link_ok=False) is None

    def read(self) -> dict[str, Any]:
        return own_json(self.path)

    @contextlib.contextmanager
    def update(self) -> Iterator[dict[str, Any]]:
        from sjc_mcp.private import ensure_folder, open_own

        ensure_folder(self.path.parent, link_ok=False)
        lock = open_own(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
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
        return own_json(self.recent_path)

    def write_recent(self, key: str, value: Any) -> None:
        """Set one key of the recent file (last writer wins; a lost race only loses a hint)."""
        data = self.read_recent()
        data[key] = value
        write_atomic(self.recent_path, json.dumps(data, ensure_ascii=False))

    def drop_recent(self) -> None:
        if not self._trusted():
            return
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
        if not self._trusted():
            return None
        try:
            os.rename(self.note_path, claimed)
        except OSError:
            return None
        try:
            data = own_json(claimed)
            return data if isinstance(data.get("text"), str) else None
        finally:
            with contextlib.suppress(OSError):
                claimed.unlink()
