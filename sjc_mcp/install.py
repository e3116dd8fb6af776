"""``sjc install`` / ``sjc uninstall``: merge the hook entries into a host's settings and take them out.

Only entries whose command runs ``sjc hook`` are ours; every other key and hook is kept as it was.
The settings file is backed up before the first change and written atomically; installing twice
changes nothing.

Codex keeps its hooks in ``$CODEX_HOME/hooks.json`` (``~/.codex`` by default) and runs a new or
changed hook only once it is trusted: ``config.toml`` in ``$CODEX_HOME`` then holds, per hook,

    [hooks.state."<hooks.json path>:<event_in_snake_case>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

where the hash is SHA-256 of the hook's identity as compact JSON with sorted keys:
``{"event_name", "hooks": [{"async", "command", "timeout", "type"}], "matcher" (only when set)}``
(Codex 0.171.0: its ``codex app-server`` ``hooks/list`` reports this hash as ``currentHash`` and the
hook as ``trusted`` once config.toml holds it). ``--trust`` writes these tables for the sjc hooks,
as Codex's own hook review does; ``uninstall`` takes them out again with the hooks.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from sjc_mcp import paths
from sjc_mcp.errors import InputError

MARK = "sjc hook"

# event -> matcher (None: no matcher key), per host
EVENTS: dict[str, dict[str, str | None]] = {
    "claude-code": {
        "PreCompact": "manual|auto",
        "PostCompact": "manual|auto",
        "UserPromptSubmit": None,
        "PostToolBatch": None,
    },
    # Codex 0.171.0 at a compaction: PreCompact, the compaction request, PostCompact, then
    # SessionStart(source "compact") whose additionalContext reaches the very next model request.
    # UserPromptSubmit hands over a note only if SessionStart could not.
    "codex": {"PostCompact": None, "SessionStart": "compact", "UserPromptSubmit": None},
}

CODEX_TRUST_HINT = (
    "Codex runs a new or changed hook only after it is trusted, and skips an untrusted one without a "
    "word: run `sjc install codex --trust` (it writes the hooks' trust to {config}, as Codex's hook "
    "review does), or review them with /hooks in Codex."
)


CODEX_PROJECT_HINT = (
    "Codex reads a project's .codex/hooks.json only once the project is trusted "
    '([projects."{project}"] trust_level = "trusted" in {config}; Codex asks when it first opens the folder).'
)


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
        return (paths.codex_home() if scope == "user" else cwd / ".codex") / "hooks.json"
    raise InputError(f"unknown host {host!r}; choose claude-code or codex")


def _is_ours(h: Any) -> bool:
    return isinstance(h, dict) and MARK in str(h.get("command", ""))


def _strip_ours(groups: list[Any]) -> list[Any]:
    """``groups`` without sjc's hooks (a group that held only ours goes; others keep their other hooks)."""
    kept = []
    for g in groups:
        if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(_is_ours(h) for h in g["hooks"]):
            rest = [h for h in g["hooks"] if not _is_ours(h)]
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
        ours = [g for g in current if isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks") or [])]
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


def _backup(path: Path) -> Path:
    """A copy of ``path`` under a name no earlier backup has (``.sjc-backup-<time>``, then ``-2``, ``-3``…):
    a backup is never overwritten, however quickly installs and uninstalls follow each other."""
    stem = f"{path.name}.sjc-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 10_000):
        backup = path.with_name(stem if n == 1 else f"{stem}-{n}")
        try:
            with backup.open("xb") as out, path.open("rb") as src:  # "x": fails if the name is taken
                shutil.copyfileobj(src, out)
        except FileExistsError:
            continue
        shutil.copystat(path, backup)
        return backup
    raise InputError(f"cannot find a free backup name for {path}")


def _write_text(path: Path, text: str) -> Path | None:
    backup = _backup(path) if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return backup


def _write(path: Path, data: dict[str, Any]) -> Path | None:
    return _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


# ---- Codex hook trust ------------------------------------------------------------------------------


def _snake(event: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", event).lower()


def codex_trust_hash(event: str, handler: dict[str, Any], matcher: str | None = None) -> str:
    """The hash Codex records for a trusted command hook (its ``currentHash``)."""
    identity: dict[str, Any] = {
        "event_name": _snake(event),
        "hooks": [
            {
                "async": bool(handler.get("async", False)),
                "command": str(handler.get("command", "")),
                "timeout": int(handler.get("timeout", 600)),  # Codex's default
                "type": "command",
            }
        ],
    }
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _positions(settings: dict[str, Any]) -> list[tuple[str, int, int, Any, Any]]:
    """(event, group index, handler index, group, handler) of every hook handler, in file order."""
    out = []
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for h, handler in enumerate(group["hooks"]):
                    out.append((event, g, h, group, handler))
    return out


def _hooks_file_id(path: Path) -> str:
    return str(path.resolve())  # Codex names the file by its canonical path (symlinks resolved)


def codex_trust_entries(path: Path, settings: dict[str, Any]) -> dict[str, str]:
    """``{key: trusted_hash}`` for the sjc hooks in the hooks.json at ``path`` holding ``settings``."""
    src = _hooks_file_id(path)
    out = {}
    for event, g, h, group, handler in _positions(settings):
        if _is_ours(handler):
            matcher = group.get("matcher")
            out[f"{src}:{_snake(event)}:{g}:{h}"] = codex_trust_hash(event, handler, matcher)
    return out


def _codex_key_moves(path: Path, before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """Keys of the other hooks whose position changes when ours are taken out: old key -> new key."""
    src = _hooks_file_id(path)
    old: dict[str, list[str]] = {}
    for event, g, h, _group, handler in _positions(before):
        if not _is_ours(handler):
            old.setdefault(event, []).append(f"{src}:{_snake(event)}:{g}:{h}")
    new: dict[str, list[str]] = {}
    for event, g, h, _group, _handler in _positions(after):
        new.setdefault(event, []).append(f"{src}:{_snake(event)}:{g}:{h}")
    return {o: n for event in old for o, n in zip(old[event], new.get(event, []), strict=False) if o != n}


_STATE_HEADER = re.compile(r"""^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]""")
_ANY_HEADER = re.compile(r"^[ \t]*\[")


def _toml_key(raw: str) -> str | None:
    if raw.startswith("'"):
        return raw[1:-1]
    try:
        key = json.loads(raw)
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _state_tables(lines: list[str]) -> dict[str, tuple[int, int]]:
    """``[hooks.state."KEY"]`` tables: key -> (header line, one past its last non-blank line)."""
    out: dict[str, tuple[int, int]] = {}
    for i, line in enumerate(lines):
        m = _STATE_HEADER.match(line)
        if not m:
            continue
        key = _toml_key(m.group(1))
        end = i + 1
        j = i + 1
        while j < len(lines) and not _ANY_HEADER.match(lines[j]):
            if lines[j].strip():
                end = j + 1
            j += 1
        if key is not None:
            out[key] = (i, end)
    return out


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}); fix it first") from None


def _trust_state(data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _toml_table(key: str, trusted_hash: str) -> list[str]:
    return [f"[hooks.state.{json.dumps(key, ensure_ascii=False)}]\n", f"trusted_hash = {json.dumps(trusted_hash)}\n"]


def trust_text(text: str, wanted: dict[str, str], path: Path) -> tuple[str, list[str]]:
    """``text`` (a Codex config.toml) with every key of ``wanted`` trusted at its hash; and the keys changed."""
    state = _trust_state(_parse_toml(text, path))
    lines = text.splitlines(keepends=True)
    tables = _state_tables(lines)
    changed = []
    add: list[str] = []
    for key, digest in wanted.items():
        current = state.get(key)
        if isinstance(current, dict) and current.get("trusted_hash") == digest:
            continue
        changed.append(key)
        if key in tables:  # a stale hash (the hook changed): replace that one line, keep the rest of the table
            start, end = tables[key]
            body = [ln for ln in lines[start + 1 : end] if not re.match(r"[ \t]*trusted_hash[ \t]*=", ln)]
            lines[start:end] = [lines[start], *body, _toml_table(key, digest)[1]]
            tables = _state_tables(lines)
        elif key in state:
            raise InputError(
                f"{path} trusts {key} in a form sjc does not edit; trust the sjc hooks with /hooks in Codex instead"
            )
        else:
            add += ["\n", *_toml_table(key, digest)] if (lines or add) else _toml_table(key, digest)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    out = "".join(lines + add)
    check = _trust_state(_parse_toml(out, path))
    if any(not isinstance(check.get(k), dict) or check[k].get("trusted_hash") != v for k, v in wanted.items()):
        raise InputError(f"could not write the hook trust into {path}; trust the sjc hooks with /hooks in Codex")
    return out, changed


def untrust_text(text: str, keys: set[str], moves: dict[str, str], path: Path) -> tuple[str, list[str]]:
    """``text`` without the ``[hooks.state."KEY"]`` tables of ``keys`` (with the blank line sjc wrote before
    each), and the tables of ``moves`` renamed to their new keys; and the keys taken out."""
    _parse_toml(text, path)
    lines = text.splitlines(keepends=True)
    removed = []
    for key in keys:
        tables = _state_tables(lines)
        if key not in tables:
            continue
        start, end = tables[key]
        if start > 0 and not lines[start - 1].strip():
            start -= 1
        del lines[start:end]
        removed.append(key)
    tables = _state_tables(lines)
    staying = set(tables) - set(moves)
    for old, new in moves.items():  # headers are renamed in place: every line index stays valid
        if old in tables and new not in staying:
            lines[tables[old][0]] = _toml_table(new, "")[0]
    out = "".join(lines)
    _parse_toml(out, path)
    return out, removed


def _codex_config() -> Path:
    return paths.codex_home() / "config.toml"


def _codex_trust(hooks_path: Path, settings: dict[str, Any]) -> tuple[Path, str, str, int]:
    """(config.toml, its text now, its text with the sjc hooks trusted, how many changed); raises on a
    config.toml it cannot edit, before anything is written."""
    config = _codex_config()
    text = config.read_text() if config.exists() else ""
    out, changed = trust_text(text, codex_trust_entries(hooks_path, settings), config)
    return config, text, out, len(changed)


def _apply_trust(plan: tuple[Path, str, str, int], dry_run: bool) -> str:
    config, text, out, changed = plan
    if not changed:
        return f"{config}: the sjc hooks are trusted already"
    if dry_run:
        return f"{config}: would add\n" + (out[len(text) :] if out.startswith(text) else out)
    backup = _write_text(config, out)
    return f"{config}: trusted {changed} sjc hook(s) for Codex" + (f" (backup: {backup})" if backup else "")


def _codex_untrusted(hooks_path: Path, settings: dict[str, Any]) -> bool:
    config = _codex_config()
    if not config.exists():
        return True
    try:
        state = _trust_state(_parse_toml(config.read_text(), config))
    except InputError:
        return True
    wanted = codex_trust_entries(hooks_path, settings)
    return any(not isinstance(state.get(k), dict) or state[k].get("trusted_hash") != v for k, v in wanted.items())


def _codex_project_trusted(project: Path) -> bool:
    config = _codex_config()
    try:
        projects = _parse_toml(config.read_text(), config).get("projects")
    except (OSError, InputError):
        return False
    entry = projects.get(str(project.resolve())) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def _codex_untrust(hooks_path: Path, before: dict[str, Any], after: dict[str, Any]) -> tuple[Path, str, str, int]:
    """(config.toml, its text now, its text without the sjc hooks' trust, how many removed)."""
    config = _codex_config()
    if not config.exists():
        return config, "", "", 0
    text = config.read_text()
    keys = set(codex_trust_entries(hooks_path, before))
    out, removed = untrust_text(text, keys, _codex_key_moves(hooks_path, before, after), config)
    return config, text, out, len(removed)


def _apply_untrust(plan: tuple[Path, str, str, int], dry_run: bool) -> str | None:
    config, text, out, removed = plan
    if out == text:
        return None
    if dry_run:
        return f"{config}: would remove the trust of {removed} sjc hook(s)"
    if not out.strip():
        backup = _backup(config)
        config.unlink()
        return f"{config}: sjc hook trust removed, file was otherwise empty and is gone (backup: {backup})"
    backup = _write_text(config, out)
    return f"{config}: trust of {removed} sjc hook(s) removed (backup: {backup})"


# ---- the commands ----------------------------------------------------------------------------------


def install(
    host: str, scope: str = "user", dry_run: bool = False, command: str | None = None, trust: bool = False
) -> tuple[Path, str]:
    if trust and host != "codex":
        raise InputError("--trust is for codex: Claude Code runs the hooks in its settings without a trust step")
    path = settings_path(host, scope)
    before = _read(path)
    after = merge(before, hook_block(host, command))
    trust_plan = _codex_trust(path, after) if trust else None  # a config.toml it cannot edit: nothing written
    if after == before:
        message = f"{path}: sjc hooks already installed; nothing changed"
    elif dry_run:
        message = json.dumps(after, indent=2)
    else:
        backup = _write(path, after)
        message = f"{path}: sjc hooks installed" + (f" (backup: {backup})" if backup else "")
    if host == "codex":
        if trust_plan is not None:
            message += "\n" + _apply_trust(trust_plan, dry_run)
        elif _codex_untrusted(path, after):
            message += "\n" + CODEX_TRUST_HINT.format(config=_codex_config())
        if scope == "project" and not _codex_project_trusted(path.parent.parent):
            message += "\n" + CODEX_PROJECT_HINT.format(project=path.parent.parent.resolve(), config=_codex_config())
    return path, message


def uninstall(host: str, scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    path = settings_path(host, scope)
    before = _read(path)
    after = remove(before)
    untrust_plan = _codex_untrust(path, before, after) if host == "codex" else None
    lines = []
    if after == before:
        lines.append(f"{path}: no sjc hooks found; nothing changed")
    elif dry_run:
        lines.append(json.dumps(after, indent=2))
    elif not after:  # nothing but our hooks was there: leave no empty settings file behind
        backup = _backup(path)
        path.unlink()
        lines.append(f"{path}: sjc hooks removed, file was otherwise empty and is gone (backup: {backup})")
    else:
        backup = _write(path, after)
        lines.append(f"{path}: sjc hooks removed (backup: {backup})")
    if untrust_plan is not None:
        untrusted = _apply_untrust(untrust_plan, dry_run)
        if untrusted:
            lines.append(untrusted)
    return path, "\n".join(lines)
