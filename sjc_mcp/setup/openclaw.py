"""``sjc install openclaw`` / ``sjc uninstall openclaw``: sjc's plugin in OpenClaw's config.

OpenClaw reads ``$OPENCLAW_CONFIG_PATH``, else ``openclaw.json`` in its state folder (``$OPENCLAW_STATE_DIR``,
else ``~/.openclaw``). Installing adds exactly this, every other key kept as it was:

- ``plugins.load.paths``: the plugin's folder in this installed package (``sjc_mcp/plugins/openclaw``);
- ``plugins.entries.sjc``: ``{"enabled": true, "config": {"command": <the sjc-hook installed with this sjc>}}``;
- ``plugins.allow``: ``"sjc"``, only where the config has an allow list (OpenClaw then loads nothing else);
- ``agents.defaults.compaction.provider``: ``"sjc"`` (which makes OpenClaw use its safeguard mode).

The file is backed up before the first change and written atomically; installing twice changes nothing.
Uninstalling takes those keys out; when what is left is what the file held before the install (nothing else
was changed since), the backup itself is put back, byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError
from sjc_mcp.setup import settings_file
from sjc_mcp.setup.hook_entries import hook_command

PLUGIN_ID = "sjc"


def plugin_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "plugins" / "openclaw"


def config_path() -> Path:
    override = os.environ.get("OPENCLAW_CONFIG_PATH", "").strip()
    if override:
        return Path(override).expanduser()
    state = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
    if state:
        return Path(state).expanduser() / "openclaw.json"
    home = Path.home()
    if not (home / ".openclaw").exists() and (home / ".clawdbot").exists():  # OpenClaw's former name
        legacy = home / ".clawdbot"
        return legacy / ("openclaw.json" if (legacy / "openclaw.json").exists() else "clawdbot.json")
    return home / ".openclaw" / "openclaw.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        return settings_file.read_json(path)
    except InputError:
        raise InputError(
            f"{path} is not plain JSON (OpenClaw also reads JSON5, which sjc does not edit): add "
            f'plugins.load.paths ["{plugin_dir()}"], plugins.entries.sjc {{"enabled": true}} and '
            'agents.defaults.compaction.provider "sjc" by hand'
        ) from None


def _obj(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise InputError(f"{where} in OpenClaw's config is not an object")
    return value


def merged(cfg: dict[str, Any], command: str) -> dict[str, Any]:
    out = json.loads(json.dumps(cfg))
    plugins = _obj(out, "plugins", "plugins")
    load = _obj(plugins, "load", "plugins.load")
    paths = load.setdefault("paths", [])
    if not isinstance(paths, list):
        raise InputError("plugins.load.paths in OpenClaw's config is not a list")
    if str(plugin_dir()) not in paths:
        paths.append(str(plugin_dir()))
    entries = _obj(plugins, "entries", "plugins.entries")
    found = entries.get(PLUGIN_ID)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    own = entry.get("config")
    entries[PLUGIN_ID] = {
        **entry,
        "enabled": True,
        "config": {**(own if isinstance(own, dict) else {}), "command": command},
    }
    if isinstance(plugins.get("allow"), list) and PLUGIN_ID not in plugins["allow"]:
        plugins["allow"].append(PLUGIN_ID)
    compaction = _obj(_obj(_obj(out, "agents", "agents"), "defaults", "agents.defaults"), "compaction", "compaction")
    other = compaction.get("provider")
    if other not in (None, PLUGIN_ID):
        raise InputError(
            f"agents.defaults.compaction.provider is already {other!r} in OpenClaw's config; sjc's plugin would "
            "replace it: remove it first, or use sjc proxy instead"
        )
    compaction["provider"] = PLUGIN_ID
    return out


def _prune_empty(obj: dict[str, Any], *keys: str) -> None:
    """Drop ``obj[keys[0]][keys[1]]…`` when it became empty, and each parent left empty by that."""
    if not keys or not isinstance(obj.get(keys[0]), dict):
        return
    _prune_empty(obj[keys[0]], *keys[1:])
    if not obj[keys[0]]:
        del obj[keys[0]]


def removed(cfg: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(cfg))
    plugins = out.get("plugins")
    if isinstance(plugins, dict):
        load = plugins.get("load")
        if isinstance(load, dict) and isinstance(load.get("paths"), list):
            load["paths"] = [p for p in load["paths"] if not _ours(p)]
            if not load["paths"]:
                del load["paths"]
        if isinstance(plugins.get("entries"), dict):
            plugins["entries"].pop(PLUGIN_ID, None)
        if isinstance(plugins.get("allow"), list) and PLUGIN_ID in plugins["allow"]:
            plugins["allow"] = [a for a in plugins["allow"] if a != PLUGIN_ID]
        for key in ("load", "entries"):
            _prune_empty(plugins, key)
        _prune_empty(out, "plugins")
    agents = out.get("agents")
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    comp = defaults.get("compaction") if isinstance(defaults, dict) else None
    if isinstance(comp, dict) and comp.get("provider") == PLUGIN_ID:
        del comp["provider"]
        _prune_empty(out, "agents", "defaults", "compaction")
    return out


def _ours(path: Any) -> bool:
    if not isinstance(path, str):
        return False
    p = Path(path)
    return p == plugin_dir() or (
        p.name == "openclaw" and p.parent.name == "plugins" and p.parent.parent.name == "sjc_mcp"
    )


def install(dry_run: bool = False, command: str | None = None) -> tuple[Path, str]:
    path = config_path()
    before = _read(path)
    after = merged(before, command or hook_command())
    if after == before:
        return path, f"{path}: sjc's plugin already installed; nothing changed"
    if dry_run:
        return path, json.dumps(after, indent=2)
    saved = settings_file.write_json(path, after)
    restart = "restart OpenClaw (openclaw gateway restart) to load it"
    return (
        path,
        f"{path}: sjc's plugin installed as compaction provider{f' (backup: {saved})' if saved else ''}; {restart}",
    )


def _put(path: Path, data: bytes) -> None:
    """``data`` as the file's bytes, in one step (a reader never sees half a file)."""
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.sjc-backup-*"), key=lambda p: p.stat().st_mtime, reverse=True)


def uninstall(dry_run: bool = False) -> tuple[Path, str]:
    path = config_path()
    before = _read(path)
    after = removed(before)
    if after == before:
        return path, f"{path}: sjc's plugin not found; nothing changed"
    if dry_run:
        return path, json.dumps(after, indent=2)
    for copy in _backups(path):  # the file as it was before the install, when nothing else changed since
        try:
            if json.loads(copy.read_text() or "{}") == after:
                saved = settings_file.backup(path)
                _put(path, copy.read_bytes())
                return path, f"{path}: sjc's plugin removed; the file is as it was before the install (backup: {saved})"
        except (OSError, ValueError):
            continue
    if not after:
        saved = settings_file.backup(path)
        path.unlink()
        return path, f"{path}: sjc's plugin removed, file was otherwise empty and is gone (backup: {saved})"
    kept = settings_file.write_json(path, after)
    return path, f"{path}: sjc's plugin removed (backup: {kept})"
