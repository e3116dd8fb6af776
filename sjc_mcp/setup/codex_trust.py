"""Codex's trust of the sjc hooks: the hashes it records, and its ``config.toml`` edited to hold them.

Codex keeps its hooks in ``$CODEX_HOME/hooks.json`` (``~/.codex`` by default) and runs a new or
changed hook only once it is trusted: ``config.toml`` in ``$CODEX_HOME`` then holds, per hook,

    [hooks.state."<hooks.json path>:<event_in_snake_case>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

where the hash is SHA-256 of the hook's identity as compact JSON with sorted keys:
``{"event_name", "hooks": [{"async", "command", "timeout", "type"}], "matcher" (only when set)}``
(Codex 0.171.0: its ``codex app-server`` ``hooks/list`` reports this hash as ``currentHash`` and the
hook as ``trusted`` once config.toml holds it). ``sjc install codex --trust`` writes these tables for the
sjc hooks, as Codex's own hook review does; ``uninstall`` takes them out again with the hooks (and renames
the tables of the other hooks whose position in hooks.json moves). Only those tables are touched: the
rest of config.toml stays byte for byte, and a config.toml sjc cannot edit safely is an error before
anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from sjc_mcp import paths
from sjc_mcp.errors import InputError
from sjc_mcp.setup import settings_file
from sjc_mcp.setup.hook_entries import is_ours

TRUST_HINT = (
    "Codex runs a new or changed hook only after it is trusted, and skips an untrusted one without a "
    "word: run `sjc install codex --trust` (it writes the hooks' trust to {config}, as Codex's hook "
    "review does), or review them with /hooks in Codex."
)


PROJECT_HINT = (
    "Codex reads a project's .codex/hooks.json only once the project is trusted "
    '([projects."{project}"] trust_level = "trusted" in {config}; Codex asks when it first opens the folder).'
)


def _snake(event: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, handler: dict[str, Any], matcher: str | None = None) -> str:
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
    out: list[tuple[str, int, int, Any, Any]] = []
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


def entries(path: Path, settings: dict[str, Any]) -> dict[str, str]:
    """``{key: trusted_hash}`` for the sjc hooks in the hooks.json at ``path`` holding ``settings``."""
    src = _hooks_file_id(path)
    out = {}
    for event, g, h, group, handler in _positions(settings):
        if is_ours(handler):
            matcher = group.get("matcher")
            out[f"{src}:{_snake(event)}:{g}:{h}"] = trust_hash(event, handler, matcher)
    return out


def _key_moves(path: Path, before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """Keys of the other hooks whose position changes when ours are taken out: old key -> new key."""
    src = _hooks_file_id(path)
    old: dict[str, list[str]] = {}
    for event, g, h, _group, handler in _positions(before):
        if not is_ours(handler):
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
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}); fix it first") from None


def _trust_state(data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _toml_table(key: str, trusted_hash: str, nl: str = "\n") -> list[str]:
    return [
        f"[hooks.state.{json.dumps(key, ensure_ascii=False)}]{nl}",
        f"trusted_hash = {json.dumps(trusted_hash)}{nl}",
    ]


def _newline(text: str) -> str:
    """The file's own line end: what the lines sjc adds end with."""
    return "\r\n" if "\r\n" in text else "\n"


def _ends_open(lines: list[str]) -> bool:
    return bool(lines) and not lines[-1].endswith("\n")


def trust_text(text: str, wanted: dict[str, str], path: Path) -> tuple[str, list[str]]:
    """``text`` (a Codex config.toml) with every key of ``wanted`` trusted at its hash; and the keys changed."""
    state = _trust_state(_parse_toml(text, path))
    lines = text.splitlines(keepends=True)
    nl = _newline(text)
    open_end = _ends_open(lines)  # no final newline: none after what sjc adds either (uninstall gives it back)
    if open_end:
        lines[-1] += nl
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
            lines[start:end] = [lines[start], *body, _toml_table(key, digest, nl)[1]]
            tables = _state_tables(lines)
        elif key in state:
            raise InputError(
                f"{path} trusts {key} in a form sjc does not edit; trust the sjc hooks with /hooks in Codex instead"
            )
        else:
            add += [nl, *_toml_table(key, digest, nl)] if (lines or add) else _toml_table(key, digest, nl)
    out = "".join(lines + add)
    if open_end and out.endswith(nl):
        out = out[: -len(nl)]
    check = _trust_state(_parse_toml(out, path))
    if any(not isinstance(check.get(k), dict) or check[k].get("trusted_hash") != v for k, v in wanted.items()):
        raise InputError(f"could not write the hook trust into {path}; trust the sjc hooks with /hooks in Codex")
    return out, changed


def untrust_text(text: str, keys: set[str], moves: dict[str, str], path: Path) -> tuple[str, list[str]]:
    """``text`` without the ``[hooks.state."KEY"]`` tables of ``keys`` (with the blank line sjc wrote before
    each), and the tables of ``moves`` renamed to their new keys; and the keys taken out."""
    _parse_toml(text, path)
    lines = text.splitlines(keepends=True)
    nl = _newline(text)
    open_end = _ends_open(lines)
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
            header = lines[tables[old][0]]
            lines[tables[old][0]] = _toml_table(new, "", "\r\n" if header.endswith("\r\n") else "\n")[0]
    out = "".join(lines)
    if open_end and out.endswith("\n"):  # the file did not end with a newline: it still does not
        out = out[: -len(nl)] if out.endswith(nl) else out[:-1]
    _parse_toml(out, path)
    return out, removed


def config_path() -> Path:
    return paths.codex_home() / "config.toml"


def plan_trust(hooks_path: Path, settings: dict[str, Any]) -> tuple[Path, str, str, int]:
    """(config.toml, its text now, its text with the sjc hooks trusted, how many changed); raises on a
    config.toml it cannot edit, before anything is written."""
    config = config_path()
    text = settings_file.read_text(config) or ""
    out, changed = trust_text(text, entries(hooks_path, settings), config)
    return config, text, out, len(changed)


def apply_trust(plan: tuple[Path, str, str, int], dry_run: bool) -> str:
    config, text, out, changed = plan
    if not changed:
        return f"{config}: the sjc hooks are trusted already"
    if dry_run:
        return f"{config}: would add\n" + (out[len(text) :] if out.startswith(text) else out)
    backup = settings_file.write_text(config, out)
    return f"{config}: trusted {changed} sjc hook(s) for Codex" + (f" (backup: {backup})" if backup else "")


def untrusted(hooks_path: Path, settings: dict[str, Any]) -> bool:
    config = config_path()
    try:
        text = settings_file.read_text(config)
        if text is None:
            return True
        state = _trust_state(_parse_toml(text, config))
    except InputError:
        return True
    wanted = entries(hooks_path, settings)
    return any(not isinstance(state.get(k), dict) or state[k].get("trusted_hash") != v for k, v in wanted.items())


def project_trusted(project: Path) -> bool:
    config = config_path()
    try:
        projects = _parse_toml(settings_file.read_text(config) or "", config).get("projects")
    except InputError:
        return False
    entry = projects.get(str(project.resolve())) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def plan_untrust(hooks_path: Path, before: dict[str, Any], after: dict[str, Any]) -> tuple[Path, str, str, int]:
    """(config.toml, its text now, its text without the sjc hooks' trust, how many removed)."""
    config = config_path()
    text = settings_file.read_text(config)
    if text is None:
        return config, "", "", 0
    out, removed = untrust_text(text, *untrust_changes(hooks_path, before, after), config)
    return config, text, out, len(removed)


def untrust_changes(hooks_path: Path, before: dict[str, Any], after: dict[str, Any]) -> tuple[set[str], dict[str, str]]:
    """What taking sjc's hooks out of hooks.json (``before`` -> ``after``) does to config.toml: the trust
    tables of sjc's hooks that go, and the other hooks' tables renamed as their positions move."""
    return set(entries(hooks_path, before)), _key_moves(hooks_path, before, after)


def apply_untrust(plan: tuple[Path, str, str, int], dry_run: bool) -> str | None:
    config, text, out, removed = plan
    if out == text:
        return None
    if dry_run:
        return f"{config}: would remove the trust of {removed} sjc hook(s)"
    if not out.strip() and settings_file.backup_holding(config, lambda old: old == out) is None:
        saved = settings_file.backup(config)  # sjc made it for the hooks' trust alone: no empty file left behind
        config.unlink()
        return f"{config}: sjc hook trust removed, file was otherwise empty and is gone (backup: {saved})"
    backup = settings_file.write_text(config, out)
    return f"{config}: trust of {removed} sjc hook(s) removed (backup: {backup})"
