"""The backups sjc makes of a host's files before it changes them (``<name>.sjc-backup-<time>``), looked at
again by ``sjc uninstall``: each backup that holds nothing the file does not hold now, besides sjc's own
entries, is removed (the file has it all); every other backup is kept and named, with why, so nothing a
user might want back is lost without a word. What "sjc's own entries" are is the host's: its hook entries,
its plugin's settings, the hooks' trust in Codex's config.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError
from sjc_mcp.setup import settings_file

Same = Callable[[str], bool]  # whether a backup's text holds nothing the file does not hold now, but sjc's


def tidy(path: Path, same: Same, dry_run: bool = False) -> tuple[list[str], list[Path]]:
    """Remove ``path``'s backups for which ``same`` holds: the lines that say what went and what stays, and
    the backups that went."""
    gone: list[Path] = []
    lines: list[str] = []
    for copy in settings_file.backups_of(path):
        try:
            text = settings_file.read_text(copy)
            redundant = text is not None and same(text)
            why = f"it holds settings {path.name} does not hold now"
        except (InputError, ValueError) as exc:
            redundant, why = False, f"it cannot be read ({exc})"
        if not redundant:
            verb = "would be kept" if dry_run else "kept"
            lines.append(f"{copy}: {verb}: {why}; compare the two, then delete it")
            continue
        if not dry_run:
            try:
                copy.unlink()
            except OSError as exc:
                lines.append(f"{copy}: could not be removed ({exc.strerror or exc})")
                continue
        gone.append(copy)
    if gone:
        verb = "would remove" if dry_run else "removed"
        lines.insert(
            0,
            f"{path.parent}: {verb} the {len(gone)} backup(s) sjc made of {path.name} "
            f"({', '.join(c.name for c in gone)}): each held nothing it does not hold now, besides sjc's own entries",
        )
    return lines, gone


def told(message: str, tidied: list[tuple[list[str], list[Path]]]) -> str:
    """``message`` without the "(backup: …)" of backups that went, then what became of the backups."""
    for _, gone in tidied:
        for copy in gone:
            message = message.replace(f" (backup: {copy})", "").replace(f" ({copy})", "")
    return "\n".join([message, *(line for lines, _ in tidied for line in lines)])


def json_same(path: Path, strip: Callable[[dict[str, Any]], dict[str, Any]]) -> Same:
    """For a JSON settings file: a backup whose object, sjc's entries stripped (``strip``), is the file's
    object now (an empty one when the file is gone), stripped likewise. A file that is no plain JSON object
    (OpenClaw's may be JSON5): a backup that is the file now, byte for byte."""
    try:
        text = settings_file.read_text(path)
        now = strip(settings_file.parse_json(text, path)) if text else {}
    except InputError:
        return bytes_same(path)

    def same(old: str) -> bool:
        return strip(settings_file.parse_json(old, path)) == now

    return same


def codex_config_same(config: Path, now: str, keys: set[str], moves: dict[str, str]) -> Same:
    """For Codex's config.toml (``now``: its text after the uninstall): a backup that is that text, or is
    once the trust of sjc's hooks (``keys``; other hooks' tables renamed by ``moves``) is out of it, as
    uninstall takes it out."""
    from sjc_mcp.setup import codex_trust

    def same(old: str) -> bool:
        return old == now or codex_trust.untrust_text(old, keys, moves, config)[0] == now

    return same


def bytes_same(path: Path) -> Same:
    """For a file sjc cannot strip its part from (Hermes' config.yaml): a backup that is the file now."""
    now = path.read_bytes() if path.is_file() else b""

    def same(old: str) -> bool:
        return old.encode("utf-8") == now

    return same
