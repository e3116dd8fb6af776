"""Host transcript readers, one module per host, into one model (``hosts.base``).

``read_boundary(path, index=None, host=None)`` detects the host from the file's first record unless
told, and returns compaction ``index`` (newest by default) with its span and previous summary.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts import claude_code, codex, gemini, generic, hermes, openclaw
from sjc_mcp.hosts.base import Boundary, Item

READERS = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
    "hermes": hermes,
    "openclaw": openclaw,
    "generic": generic,
}


def meaning(host: str, items: list[Item]) -> list[Item]:
    """Items given as plain roles (a labelled case's span, a caller's history) as ``host`` means them: what it
    injects into user turns is no one's words, its tool outputs unwrapped, as its transcript reader reads them."""
    module = READERS.get(host)
    return module.meaning(items) if module is not None else items


def check_file(path: str | Path) -> None:
    """A one-line ``TranscriptError`` unless ``path`` is a regular file: a FIFO or a device (``/dev/zero``)
    would hang the reader or never end, a folder is no transcript."""
    shown = str(path)
    if "\x00" in shown:
        raise TranscriptError("transcript path contains a NUL byte")
    if "#" in shown and not os.path.lexists(shown):  # Hermes: FILE#SESSION_ID names a session in FILE
        shown = shown.rpartition("#")[0]
    try:
        st = os.stat(shown)
    except FileNotFoundError:
        raise TranscriptError(f"transcript not found: {shown}") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise TranscriptError(f"transcript {shown} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise TranscriptError(f"transcript {shown} is not a regular file (a FIFO, socket or device)")


def detect(path: str | Path) -> str:
    check_file(path)
    if hermes.looks_like(path):  # a SQLite file (or FILE#SESSION) with Hermes' tables
        return "hermes"
    p = Path(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(1 << 16)
    except FileNotFoundError:
        raise TranscriptError(f"transcript not found: {p}") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {p}: {exc.strerror}") from None
    if openclaw.is_database(head):
        return "openclaw"
    text = head.decode("utf-8", "replace").lstrip()
    if text.startswith("{") and '"messages"' in text[:2048] and '"sessionId"' in text[:2048]:
        return "gemini"
    records = []
    for line in text.splitlines()[:50]:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict):
            records.append(rec)
    if not records:
        return "generic"
    if codex.looks_like(records[0]):
        return "codex"
    if any(openclaw.looks_like(r) for r in records[:5]):
        return "openclaw"
    if any(gemini.looks_like(r) for r in records):
        return "gemini"
    if any(claude_code.looks_like(r) for r in records):
        return "claude-code"
    return "generic"


def read_boundary(path: str | Path, index: int | None = None, host: str | None = None) -> Boundary:
    check_file(path)
    host = host or detect(path)
    try:
        reader = READERS[host]
    except KeyError:
        raise TranscriptError(f"no transcript reader for host {host!r}; choose one of: {', '.join(READERS)}") from None
    return _unicode(reader.read_boundary(path, index))


def _unicode(b: Boundary) -> Boundary:
    """The boundary with every text made writable as UTF-8 (``text.unicode_text``): a transcript a JavaScript
    host wrote may hold half a surrogate pair where it cut a string."""
    from sjc_mcp.text import unicode_text

    b.summary = unicode_text(b.summary)
    b.previous_summary = unicode_text(b.previous_summary) if b.previous_summary else b.previous_summary
    b.task = unicode_text(b.task) if b.task else b.task
    b.first_prompt = unicode_text(b.first_prompt) if b.first_prompt else b.first_prompt
    for it in (*b.span, *b.retained):
        it.content = unicode_text(it.content)
    return b


def boundary_count(path: str | Path, host: str | None = None) -> int:
    check_file(path)
    return READERS[host or detect(path)].boundary_count(path)


__all__ = ["Boundary", "Item", "boundary_count", "check_file", "detect", "read_boundary"]
