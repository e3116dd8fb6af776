"""Which transcript paths a long-running surface (the MCP server) may read."""

from __future__ import annotations

import os
from pathlib import Path

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError


def check_allowed(path: str, config: Config, cwd: str | None = None) -> Path:
    """The resolved path if it lies under one of ``config.allowed_roots``; else a clear ``InputError``."""
    if "\x00" in path:  # no file name holds one (the path would not even resolve)
        raise InputError("transcript path contains a NUL byte")
    base = Path(cwd or os.getcwd())
    target = Path(path).expanduser()
    target = (base / target if not target.is_absolute() else target).resolve()
    roots = []
    for raw in config.allowed_roots:
        r = Path(raw).expanduser()
        roots.append((base / r if not r.is_absolute() else r).resolve())
    if not any(target == r or r in target.parents for r in roots):
        shown = ", ".join(str(r) for r in roots)
        raise InputError(
            f"transcript {target} is outside the allowed roots ({shown}); add its folder to "
            f"allowed_roots in the config to allow it"
        )
    if target.exists() and not target.is_file():  # a FIFO or device would hang the reader; a folder is no file
        raise InputError(f"transcript {target} is not a regular file")
    return target


def within(path: Path, config: Config, cwd: str | None = None) -> bool:
    """Whether ``path`` (symlinks resolved) lies under one of the allowed roots: for files a transcript
    points to, such as Claude Code's spilled ``tool-results/*.txt``."""
    try:
        check_allowed(str(path), config, cwd)
    except InputError:
        return False
    return True
