"""``sjc install`` / ``sjc uninstall``: merge the hook entries into a host's settings and take them out.

Only entries whose command runs ``sjc hook`` are ours; every other key and hook is kept as it was.
The settings file is backed up before the first change and written atomically; installing twice
changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError

MARK = "sjc hook"

# event -> matcher (None: no matcher key), per host
EVENTS: dict[str, dict[str, str | None]] = {
    "claude-code": {"PreCompact": "manual|auto", "SessionStart": "compact", "PostCompact": "manual|auto"},
    "codex": {"PostCompact": None, "UserPromptSubmit": None},
}


def sjc_command() -> str:
    """The absolute path of this ``sjc``, so the hook runs whatever PATH the host has."""
    exe = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0].endswith("sjc") else None
    if exe is None or not exe.exists():
        found = shutil.which("sjc") or shutil.which("sjc", path=os.path.dirname(sys.executable))
        exe = Path(found) if found else None
    return str(exe) if exe else "sjc"


def hook_block(host: str, command: str | None = None, timeout: int = 30) -> dict[str, list[dict[str, Any]]]:
    cmd = f"{command or sjc_command()} hook {host}"
    out: dict[str, list[dict[str, Any]]] = {}
    for event, matcher in EVENTS[host].items():
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": cmd, "timeout": timeout}]
        out[event] = [group]
    return out


def settings_path(host: str, scope: str, cwd: Path | None = None) -> Path:
    cwd = cwd or Path.cwd()
    if host == "claude-code":
        return (Path.home() / ".claude" if scope == "user" else cwd / ".claude") / "settings.json"
    if host == "codex":
        return (Path.home() / ".codex" if scope == "user" else cwd / ".codex") / "hooks.json"
    raise InputError(f"unknown host {host!r}; choose claude-code or codex")


def _is_ours(h: Any) -> bool:
    return isinstance(h, dict) and MARK in str(h.get("command", ""))


def merge(settings: dict[str, Any], block: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError("the settings file has a 'hooks' value that is not an object; fix it by hand first")
    for event, groups in block.items():
        current = hooks.setdefault(event, [])
        if not isinstance(current, list):
            raise InputError(f"hooks.{event} in the settings file is not a list; fix it by hand first")
        if any(_is_ours(h) for g in current if isinstance(g, dict) for h in g.get("hooks", [])):
            continue
        current.extend(groups)
    return out


def remove(settings: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(_is_ours(h) for h in g["hooks"]):
                rest = [h for h in g["hooks"] if not _is_ours(h)]
                if rest:
                    kept_groups.append({**g, "hooks": rest})
            else:
                kept_groups.append(g)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text() or "{}")
    except ValueError:
        raise InputError(f"{path} is not valid JSON; fix it or move it away first") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object")
    return data


def _write(path: Path, data: dict[str, Any]) -> Path | None:
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(f"{path.name}.sjc-backup-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return backup


def install(host: str, scope: str = "user", dry_run: bool = False, command: str | None = None) -> tuple[Path, str]:
    path = settings_path(host, scope)
    before = _read(path)
    after = merge(before, hook_block(host, command))
    if after == before:
        return path, f"{path}: sjc hooks already installed; nothing changed"
    if dry_run:
        return path, json.dumps(after, indent=2)
    backup = _write(path, after)
    return path, f"{path}: sjc hooks installed" + (f" (backup: {backup})" if backup else "")


def uninstall(host: str, scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    path = settings_path(host, scope)
    before = _read(path)
    after = remove(before)
    if after == before:
        return path, f"{path}: no sjc hooks found; nothing changed"
    if dry_run:
        return path, json.dumps(after, indent=2)
    if not after:  # nothing but our hooks was there: leave no empty settings file behind
        backup = path.with_name(f"{path.name}.sjc-backup-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
        path.unlink()
        return path, f"{path}: sjc hooks removed, file was otherwise empty and is gone (backup: {backup})"
    backup = _write(path, after)
    return path, f"{path}: sjc hooks removed (backup: {backup})"
