"""sjc's entries in a host's hook settings: which events run ``sjc-hook HOST``, which entries are sjc's,
and the settings with exactly those entries merged in or taken out (everything else kept as it was)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError
from sjc_mcp.hook import HOSTS

# a hook command is sjc's when it runs ``sjc-hook`` (or, as earlier versions installed it, ``sjc hook``)
MARKS = ("sjc-hook", "sjc hook")

# event -> matcher (None: no matcher key), per host: from the hook hosts' one table
EVENTS: dict[str, dict[str, str | None]] = {
    host: {event: matcher for event, (matcher, _) in events.items()} for host, (_, _, events) in HOSTS.items()
}


def hook_command() -> str:
    """The absolute path of the ``sjc-hook`` installed with this sjc, so the hook runs whatever PATH the
    host has; the bare name when it cannot be found."""
    here = Path(sys.argv[0]).resolve().parent if sys.argv and sys.argv[0] else None
    for folder in [str(here) if here else None, os.path.dirname(sys.executable), None]:
        found = shutil.which("sjc-hook", path=folder) if folder is not None else shutil.which("sjc-hook")
        if found:
            return str(Path(found).absolute())
    return "sjc-hook"


def hook_block(host: str, command: str | None = None, timeout: int = 30) -> dict[str, list[dict[str, Any]]]:
    """The hook entries of ``host``; ``command``: the hook program (default: this install's ``sjc-hook``)."""
    cmd = f"{command or hook_command()} {host}"
    out: dict[str, list[dict[str, Any]]] = {}
    for event, matcher in EVENTS[host].items():
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": cmd, "timeout": timeout}]
        out[event] = [group]
    return out


def is_ours(h: Any) -> bool:
    return isinstance(h, dict) and any(mark in str(h.get("command", "")) for mark in MARKS)


def _strip_ours(groups: list[Any]) -> list[Any]:
    """``groups`` without sjc's hooks (a group that held only ours goes; others keep their other hooks)."""
    kept = []
    for g in groups:
        if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(is_ours(h) for h in g["hooks"]):
            rest = [h for h in g["hooks"] if not is_ours(h)]
            if rest:
                kept.append({**g, "hooks": rest})
        else:
            kept.append(g)
    return kept


def merge(settings: dict[str, Any], block: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """``settings`` with exactly ``block`` as sjc's hooks: ours for events this version no longer uses
    (or with another command, matcher or timeout) are replaced; everything else stays as it was."""
    out = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError("the settings file has a 'hooks' value that is not an object; fix it by hand first")
    for event in [e for e in hooks if e not in block and isinstance(hooks[e], list)]:
        kept = _strip_ours(hooks[event])
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    for event, groups in block.items():
        current = hooks.setdefault(event, [])
        if not isinstance(current, list):
            raise InputError(f"hooks.{event} in the settings file is not a list; fix it by hand first")
        ours = [g for g in current if isinstance(g, dict) and any(is_ours(h) for h in g.get("hooks") or [])]
        if ours == groups:
            continue
        current[:] = [*_strip_ours(current), *groups]
    return out


def remove(settings: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept = _strip_ours(hooks[event])
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out
