"""Reading the caller's input files for the CLI: one-line errors, never a traceback.

Files are read as bytes and decoded as UTF-8 without touching line ends (CRLF, lone CR, a BOM come
through as they are), so kept text stays byte-identical. Text that is not UTF-8 is refused with one
line, never silently replaced: a summary is what is kept or lost, so no guessing. Only regular files
are read: a FIFO, a device or anything under /proc, /sys or /dev is refused at once instead of hanging.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from sjc_mcp.errors import InputError, first_error
from sjc_mcp.models import Source, evidence_source
from sjc_mcp.regular_file import NotRegular, TooLarge, read_regular
from sjc_mcp.text import unicode_text

MAX_INPUT = 200_000_000
_SPECIAL = ("/proc/", "/sys/", "/dev/")


def read_regular_bytes(path: str | os.PathLike[str], what: str, limit: int = MAX_INPUT) -> bytes:
    """The bytes of a regular file, or a one-line ``InputError`` (missing, a folder, a FIFO or device,
    a file under /proc, /sys or /dev, unreadable, larger than ``limit``)."""
    shown = str(path)
    if "\x00" in shown:
        raise InputError(f"{what} path contains a NUL byte")
    real = os.path.realpath(shown)
    if real.startswith(_SPECIAL):
        raise InputError(f"{what} {shown} is a system file ({real}); give a regular file")
    try:
        return read_regular(shown, limit)
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {shown}") from None
    except NotRegular as exc:
        if exc.folder:
            raise InputError(f"{what} path is a folder, not a file: {shown}") from None
        raise InputError(
            f"{what} {shown} is not a regular file (a FIFO, socket or device); give a regular file"
        ) from None
    except TooLarge:
        raise InputError(f"{what} {shown} is larger than {limit:,} bytes") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {shown}: {exc.strerror}") from None


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); convert it to UTF-8 first"
        ) from None


def read_text(path: str | None, what: str) -> str | None:
    """The text of ``path`` ('-' is stdin), line ends as they are; None when ``path`` is None."""
    if path is None:
        return None
    if path == "-":
        if sys.stdin is None or not hasattr(sys.stdin, "buffer"):
            raise InputError(f"no {what}: stdin is closed; give it as a file")
        return decode(sys.stdin.buffer.read(MAX_INPUT + 1), f"{what} on stdin")
    return decode(read_regular_bytes(path, what), f"{what} file {path}")


def evidence_files(paths: list[str]) -> list[Source]:
    out = []
    for p in paths:
        # tool output may hold anything: undecodable bytes are marked, not refused (it is evidence, not kept text)
        text = read_regular_bytes(p, "evidence").decode("utf-8", errors="replace")
        out.append(Source(kind="tool_output", name=Path(p).name, content=text))
    return out


def evidence_jsonl(path: str) -> list[Source]:
    text = read_text(path, "evidence-jsonl")
    assert text is not None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise InputError(f"{path}:{n}: not a JSON object") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{n}: expected an object {{kind, name, content}}")
        try:
            src = evidence_source(obj)
        except Exception as exc:
            raise InputError(f"{path}:{n}: {first_error(exc)}") from None
        src.content = unicode_text(src.content)  # a "\\ud83d" escape on its own: half an emoji, made U+FFFD
        out.append(src)
    return out
