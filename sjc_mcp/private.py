"""The files sjc keeps for itself (the hooks' session state, the decision log and its anchor) are trusted
only as ssh trusts ``~/.ssh``: regular files this user owns that no one else can write, in a folder this
user owns that no one else can write, under folders owned by this user or root that no one else can
write (a sticky folder such as ``/tmp`` excepted: others cannot rename or remove what is in it).

A note, a state file or a log another user could plant or edit would let them speak to the model at the
next turn, mark a compaction judged or forge the audit; a FIFO or a device in a file's place would hang
the reader. So what fails these checks is neither read nor written: readers see nothing, writers get an
``OSError`` naming the problem (the hook and the log writer turn it into one line and carry on).

Without ``os.getuid`` (Windows) ownership is not checked; a file must still be a regular one.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

UID = os.getuid() if hasattr(os, "getuid") else None
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def _whose(st: os.stat_result) -> str:
    return f"owned by uid {st.st_uid}"


def folder_problem(folder: str | os.PathLike[str], link_ok: bool = True) -> str | None:
    """Why ``folder`` is no place for sjc's own files (missing, not a folder, another's, writable by others,
    or under such a folder; with ``link_ok`` False, a link), or None when it is."""
    if not link_ok and os.path.islink(folder):
        return f"{folder} is a link (sjc keeps these files only in a folder of its own, never through a link)"
    try:
        real = Path(os.path.realpath(folder))
        st = os.stat(real)
    except OSError as exc:
        return f"{folder} cannot be checked ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if UID is None:
        return None
    if st.st_uid != UID:
        return f"{folder} is not yours ({_whose(st)})"
    if st.st_mode & _OTHERS_WRITE:
        return f"{folder} can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    for up in real.parents:
        try:
            ust = os.stat(up)
        except OSError as exc:
            return f"{up} cannot be checked ({exc.strerror or exc})"
        if ust.st_uid not in (UID, 0):
            return f"{up}, above {folder}, is another user's ({_whose(ust)})"
        if ust.st_mode & _OTHERS_WRITE and not ust.st_mode & stat.S_ISVTX:
            return f"{up}, above {folder}, can be written by others (mode {stat.S_IMODE(ust.st_mode):o})"
    return None


def ensure_folder(folder: str | os.PathLike[str], link_ok: bool = True) -> Path:
    """``folder``, created (mode 0700) if missing; an ``OSError`` when it is no place for sjc's files."""
    p = Path(folder)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    problem = folder_problem(p, link_ok)
    if problem is not None:
        raise OSError(errno.EPERM, f"not using {problem}")
    return p


def file_problem(st: os.stat_result, path: str | os.PathLike[str]) -> str | None:
    """Why the file whose status is ``st`` is not one of sjc's own, or None when it can be."""
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    if UID is not None and st.st_uid != UID:
        return f"{path} is not yours ({_whose(st)})"
    if UID is not None and st.st_mode & _OTHERS_WRITE:
        return f"{path} can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def open_own(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor of ``path`` (never through a link at its last step, never blocking on a FIFO) once it
    is known to be a regular file this user owns that no one else can write; else an ``OSError``. With
    ``os.O_CREAT`` in ``flags`` a missing file is created with ``mode``. Blocking mode is restored."""
    fd = os.open(path, flags | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, mode)
    try:
        problem = file_problem(os.fstat(fd), path)
        if problem is not None:
            raise OSError(errno.EPERM, f"not using {problem}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_own(path: str | os.PathLike[str], limit: int = 64 << 20, link_ok: bool = True) -> bytes | None:
    """The bytes of one of sjc's own files, or None when it is missing, not trustworthy (``open_own``) or
    in a folder that is not (``folder_problem``), or larger than ``limit``."""
    if folder_problem(Path(path).parent, link_ok) is not None:
        return None
    try:
        fd = open_own(path)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None
