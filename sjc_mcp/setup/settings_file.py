"""A host's settings file as sjc edits it: read, backed up before a change, written atomically, and left
as it was found in everything sjc does not change.

- Only a regular file is read (a FIFO or a device in its place is refused at once, never waited on), and
  only as UTF-8 (anything else is a one-line error: sjc does not guess an encoding it would write back).
- A JSON file is written back in its own style: line ends (LF or CRLF), final newline or none, indent,
  separators, ``\\uXXXX`` escapes or not, a BOM; so ``sjc install`` then ``sjc uninstall`` gives back the
  bytes it started from. A text file (Codex's config.toml) is edited line by line (``codex_trust``).
- A link is edited through: the file it points to is rewritten, the link stays. The file keeps its mode
  (a 0600 file stays 0600) and, where the user may set it, its owner and group.
- A backup is never overwritten (``.sjc-backup-<time>``, then ``-2``, ``-3``…); a write goes to a temporary
  file beside the target and replaces it in one step, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError

BOM = "\ufeff"
MAX_SETTINGS = 64 << 20


def read_text(path: Path) -> str | None:
    """The text of the settings file at ``path`` (line ends as they are), or None when there is none; a
    one-line ``InputError`` for a folder, a FIFO or device, an unreadable file, or text that is not UTF-8."""
    from sjc_mcp.regular_file import NotRegular, TooLarge, read_regular

    try:
        data = read_regular(path, MAX_SETTINGS)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(f"{path} is a link to a file that does not exist; fix or remove the link first") from None
        return None
    except NotRegular as exc:
        if exc.folder:
            raise InputError(f"{path} is a folder, not a settings file; move it away first") from None
        raise InputError(
            f"{path} is not a regular file (a FIFO, socket or device); sjc edits only regular files"
        ) from None
    except TooLarge:
        raise InputError(f"{path} is larger than {MAX_SETTINGS:,} bytes; not a settings file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); sjc edits only "
            "UTF-8 files: convert it first"
        ) from None


@dataclass(frozen=True)
class Style:
    """How a JSON file is written: what ``sjc install`` keeps of the file it edits."""

    newline: str = "\n"
    final_newline: bool = True
    indent: str | None = "  "
    item_sep: str = ", "
    key_sep: str = ": "
    ensure_ascii: bool = False
    bom: bool = False


_INDENT = re.compile(r"\n([ \t]+)\S")


def style_of(text: str | None) -> Style:
    """The style of a JSON text (the defaults for a new file)."""
    if not text or not text.strip():
        return Style()
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    newline = "\r\n" if "\r\n" in body else "\n"
    m = _INDENT.search(body.replace("\r\n", "\n"))
    indent = m.group(1) if m else None
    key_sep = ": " if re.search(r'"\s*:\s', body) or not re.search(r'":', body) else ":"
    item_sep = "," if indent is not None or not re.search(r",\s", body) else ", "
    raw_non_ascii = re.search(r"[^\x00-\x7f]", body) is not None
    ensure_ascii = not raw_non_ascii and any(int(h, 16) >= 0x80 for h in re.findall(r"\\u([0-9a-fA-F]{4})", body))
    return Style(
        newline=newline,
        final_newline=body.endswith("\n"),
        indent=indent,
        item_sep=item_sep,
        key_sep=key_sep,
        ensure_ascii=ensure_ascii,
        bom=bom,
    )


def dump_json(data: Any, style: Style) -> str:
    """``data`` as JSON text in ``style``."""
    text = json.dumps(
        data, indent=style.indent, separators=(style.item_sep, style.key_sep), ensure_ascii=style.ensure_ascii
    )
    if style.newline != "\n":
        text = text.replace("\n", style.newline)
    return (BOM if style.bom else "") + text + (style.newline if style.final_newline else "")


def parse_json(text: str | None, path: Path) -> dict[str, Any]:
    if text is None or not text.strip(BOM + " \t\r\n"):
        return {}
    try:
        data = json.loads(text.removeprefix(BOM))
    except (ValueError, RecursionError):
        raise InputError(f"{path} is not valid JSON; fix it or move it away first") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object")
    return data


def read_json(path: Path) -> dict[str, Any]:
    return parse_json(read_text(path), path)


def backups_of(path: Path) -> list[Path]:
    """The backups sjc made of ``path``, oldest first."""
    import glob

    return sorted(path.parent.glob(f"{glob.escape(path.name)}.sjc-backup-*"), key=lambda p: p.stat().st_mtime_ns)


_backups = backups_of


def backup_holding(path: Path, same: Any) -> bytes | None:
    """The bytes of the newest backup of ``path`` for which ``same(text)`` holds, or None: what to give back
    when sjc takes out all it added to a file it did not create."""
    for copy in reversed(_backups(path)):
        with contextlib.suppress(InputError):
            text = read_text(copy)
            if text is not None and same(text):
                return text.encode("utf-8")
    return None


def backup(path: Path) -> Path:
    """A copy of ``path`` under a name no earlier backup has (``.sjc-backup-<time>``, then ``-2``, ``-3``…):
    a backup is never overwritten, however quickly installs and uninstalls follow each other."""
    stem = f"{path.name}.sjc-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 10_000):
        copy = path.with_name(stem if n == 1 else f"{stem}-{n}")
        try:
            with copy.open("xb") as out, path.open("rb") as src:  # "x": fails if the name is taken
                shutil.copyfileobj(src, out)
        except FileExistsError:
            continue
        shutil.copystat(path, copy)
        return copy
    raise InputError(f"cannot find a free backup name for {path}")


def write_bytes(path: Path, data: bytes) -> Path | None:
    """Replace the file at ``path`` (through a link: the file it points to) with ``data``, keeping its mode
    and, where allowed, its owner; a backup first when it exists. Returns the backup."""
    exists = os.path.lexists(path)
    saved = backup(path) if exists else None
    target = Path(os.path.realpath(path))  # a link is edited through and stays a link
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.sjc-tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)  # umask applies
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if exists:
            st = os.stat(target)
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if hasattr(os, "chown"):
                with contextlib.suppress(OSError):
                    os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return saved


def write_text(path: Path, text: str) -> Path | None:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, data: dict[str, Any], style: Style | None = None) -> Path | None:
    return write_text(path, dump_json(data, style or Style()))
