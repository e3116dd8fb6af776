"""Reading a file that must be a regular file: opened without waiting (a FIFO in its place is not waited
on), checked to be a regular file, its size bounded, then read. The one way sjc reads the files a user or a
host names (inputs, settings files, the config, a host's JSON, the log's anchor); each caller says in its
own words what went wrong.
"""

from __future__ import annotations

import os
import stat


class NotRegular(OSError):
    """What is at the path is no regular file: a folder (``folder``), a FIFO, a socket or a device."""

    def __init__(self, path: str | os.PathLike[str], folder: bool) -> None:
        super().__init__(f"{os.fspath(path)} is not a regular file")
        self.folder = folder


class TooLarge(OSError):
    """The file holds more than the reader's limit (``size`` bytes)."""

    def __init__(self, path: str | os.PathLike[str], size: int) -> None:
        super().__init__(f"{os.fspath(path)} is larger than the limit")
        self.size = size


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``; with a ``limit``, at most ``limit + 1`` of them (a file
    that grows while it is read shows as longer than the limit). ``NotRegular`` or ``TooLarge`` (both
    ``OSError``s) when it is no regular file or is larger than ``limit``; the ``OSError`` of opening or
    reading it otherwise (a folder is ``NotRegular`` where the system will not open one, too)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise NotRegular(path, folder=True) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path, folder=stat.S_ISDIR(st.st_mode))
        if limit is not None and st.st_size > limit:
            raise TooLarge(path, st.st_size)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read() if limit is None else fh.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)
