"""Compiled regular expressions kept between processes.

``re.compile`` parses a pattern and emits its matching code in pure Python: the offline judge's ~85
patterns take ~25 ms of every process that judges (the hook's judgment, ``sjc prune``, the MCP
server's first call), more than reading a 2 MB span. ``rx`` compiles a fixed pattern once per
machine: it keeps what the compiler hands the regex engine (``_sre.compile``'s arguments: flags, code,
groups) in the user cache (``$XDG_CACHE_HOME/sjc``, else ``~/.cache/sjc``), one file per Python build,
and later processes hand the engine those arguments directly (~10 us a pattern).

What is kept is checked when it is made: the pattern built from the kept arguments must equal what
``re.compile`` returns (patterns compare by flags and code), else it is not kept. The engine validates
code it is handed, and the file is read only by the Python build that wrote it (the key holds its
version and the engine's magic number). Anything unexpected (no cache folder, an unreadable or
corrupt file, another Python implementation) falls back to ``re.compile``: the cache can make a
process faster, never different. Patterns made per call (from an entry's values) go to ``re.compile``:
only patterns fixed in the source belong here. ``SJC_REGEX_CACHE=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, AnyStr

# A file holding more than this many patterns (those of older versions pile up) is rewritten with only
# the patterns the writing process used.
MAX_KEPT = 4096

_table: dict[tuple[Any, int], tuple[Any, ...]] | None = None  # (pattern, flags) -> _sre.compile's arguments
_added: dict[tuple[Any, int], tuple[Any, ...]] = {}
_used: set[tuple[Any, int]] = set()


def rx(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)`` for a pattern fixed in the source, from the cache when it holds it."""
    flags = int(flags)
    key = (pattern, flags)
    try:
        table = _load()
        if table is None:
            return re.compile(pattern, flags)
        _used.add(key)
        args = table.get(key)
        if args is not None:
            import _sre

            try:
                return _sre.compile(pattern, *args)  # type: ignore[no-any-return]
            except Exception:  # kept code the engine refuses (it checks what it is handed): made again
                pass
        return _compile_and_keep(pattern, flags)
    except Exception:  # a cache fault is never the caller's: compile as if there were no cache
        return re.compile(pattern, flags)


def cache_path() -> str | None:
    """This Python build's file, or None when there is no cache folder (or the cache is off)."""
    if os.environ.get("SJC_REGEX_CACHE", "1") == "0" or sys.implementation.name != "cpython":
        return None
    import _sre

    from sjc_mcp.paths import cache_dir

    folder = cache_dir()
    return os.path.join(folder, f"regex-{sys.hexversion:08x}-{_sre.MAGIC}.marshal") if folder else None


def _load() -> dict[tuple[Any, int], tuple[Any, ...]] | None:
    global _table
    if _table is None:
        path = cache_path()
        if path is None:
            return None
        table: dict[tuple[Any, int], tuple[Any, ...]] = {}
        try:
            import marshal

            with open(path, "rb") as fh:
                data = marshal.loads(fh.read())
            if isinstance(data, dict):
                table = {k: v for k, v in data.items() if _well_formed(k, v)}
        except (OSError, EOFError, ValueError, TypeError):
            pass  # none yet, or unreadable: made again and written at exit
        _table = table
        import atexit

        atexit.register(_write)
    return _table


def _well_formed(key: Any, args: Any) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 2
        and isinstance(key[0], (str, bytes))
        and isinstance(key[1], int)
        and isinstance(args, tuple)
        and len(args) == 5
        and isinstance(args[0], int)
        and isinstance(args[1], list)
        and isinstance(args[2], int)
        and isinstance(args[3], dict)
        and isinstance(args[4], tuple)
    )


def _compile_and_keep(pattern: AnyStr, flags: int) -> re.Pattern[AnyStr]:
    """Compile as ``re._compiler.compile`` does, keeping the engine's arguments when the result is the
    pattern ``re.compile`` makes."""
    import _sre

    compiled = re.compile(pattern, flags)
    if sys.version_info >= (3, 11):
        from re import _compiler, _parser
    else:  # pragma: no cover - Python 3.10
        import sre_compile as _compiler
        import sre_parse as _parser
    parsed = _parser.parse(pattern, flags)
    code = [int(c) for c in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    args = (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
    if _sre.compile(pattern, *args) == compiled:
        _added[(pattern, flags)] = args
    return compiled


def _write() -> None:
    """At exit, when this process compiled a pattern the file did not hold: the file with it (best
    effort, atomic: a reader sees the old file or the new one)."""
    if not _added or _table is None:
        return
    path = cache_path()
    if path is None:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        import marshal

        merged = {**_table, **_added}
        if len(merged) > MAX_KEPT:
            merged = {k: v for k, v in merged.items() if k in _used}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(merged))
        os.replace(tmp, path)
    except Exception:  # a cache that cannot be written is only slower next time
        with contextlib.suppress(OSError):
            os.unlink(tmp)
