"""``sjc install hermes`` / ``sjc uninstall hermes``: sjc's context engine in Hermes Agent.

Install copies the plugin (``sjc_mcp/plugins/hermes``) to ``$HERMES_HOME/plugins/sjc/`` (``~/.hermes``
without ``HERMES_HOME``), writes ``sjc.json`` beside it (the command that runs sjc's side: this sjc's
``sjc-hook hermes``, and how long the plugin waits for it), and in Hermes' ``config.yaml`` lists ``sjc``
in ``plugins.enabled`` (taking it out of ``plugins.disabled``) and sets ``context.engine: sjc``.

``config.yaml`` is edited as YAML, round trip (comments, key order, quoting and indentation kept), after
a backup, and written atomically. What install changed is kept in ``plugins/sjc/install.json``; uninstall
takes exactly that out, and when ``config.yaml`` is still as install left it, puts back the bytes it had
before. Installing twice changes nothing but the plugin's files (a newer sjc brings newer ones).
A ``context.engine`` other than Hermes' own (``compressor``) is left alone: Hermes runs one engine.
The YAML editing and the record of a change: ``setup.hermes_config``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from sjc_mcp import paths
from sjc_mcp.errors import InputError
from sjc_mcp.setup import hermes_config, settings_file
from sjc_mcp.setup.hermes_config import NAME

FILES = ("plugin.yaml", "__init__.py", "engine.py", "bridge.py")
SETTINGS = "sjc.json"  # read by the plugin (bridge.SETTINGS)
STATE = "install.json"
AUTHOR = "author: sjc-mcp"
MIN_TIMEOUT_S = 30.0


def config_path() -> Path:
    return paths.hermes_home() / "config.yaml"


def plugin_dir() -> Path:
    return paths.hermes_home() / "plugins" / NAME


def hook_command() -> list[str]:
    """The command the plugin runs: the ``sjc-hook`` installed with this sjc (an absolute path: Hermes' PATH
    is not this shell's), else this interpreter running sjc's CLI."""
    from sjc_mcp.setup.hook_entries import hook_command as script

    found = script()
    if os.path.isabs(found):
        return [found, "hermes"]
    return [sys.executable, "-m", "sjc_mcp", "hook", "hermes"]


def _timeout_s() -> float:
    """What the plugin waits for sjc: the hook's time budget and ten seconds to start and answer."""
    try:
        from sjc_mcp.config import load_config

        return max(MIN_TIMEOUT_S, float(load_config().hook.time_budget_s) + 10.0)
    except Exception:
        return MIN_TIMEOUT_S


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- the plugin folder ---------------------------------------------------------------------------------


def _ours(folder: Path) -> bool:
    manifest = folder / "plugin.yaml"
    try:
        text = manifest.read_text(encoding="utf-8")
    except OSError:
        return not folder.exists()
    return AUTHOR in text and re.search(rf"^name:\s*{NAME}\s*$", text, re.M) is not None


def _plugin_files() -> dict[str, bytes]:
    src = resources.files("sjc_mcp.plugins.hermes")
    return {name: src.joinpath(name).read_bytes() for name in FILES}


def _write_plugin(folder: Path, settings: dict[str, Any]) -> bool:
    """Write the plugin's files and settings; whether anything changed."""
    wanted = {**_plugin_files(), SETTINGS: (json.dumps(settings, indent=2) + "\n").encode()}
    changed = False
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in wanted.items():
        target = folder / name
        if target.exists() and target.read_bytes() == data:
            continue
        tmp = folder / f".{name}.sjc-tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)
        changed = True
    return changed


# ---- install / uninstall -------------------------------------------------------------------------------


def _user_scope(scope: str) -> None:
    if scope != "user":
        raise InputError(
            "hermes: sjc's plugin goes in Hermes' home (HERMES_HOME or ~/.hermes); there is no project scope"
        )


def install(scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    _user_scope(scope)
    cfg, folder = config_path(), plugin_dir()
    if not paths.hermes_home().is_dir():
        raise InputError(f"no Hermes home at {paths.hermes_home()} (run hermes once, or set HERMES_HOME)")
    if not _ours(folder):
        raise InputError(f"{folder} holds a plugin named {NAME} that is not sjc's; move it away first")
    raw, y, doc = hermes_config.load(cfg)
    change = hermes_config.enable(doc, cfg)
    after = hermes_config.dump(y, doc) if change else raw
    settings: dict[str, Any] = {"v": 1, "command": hook_command(), "timeout_s": _timeout_s()}
    if dry_run:
        return cfg, (
            f"{cfg}:\n{after.decode()}" if change else f"{cfg}: sjc's context engine already enabled"
        ) + f"\n{folder}: {', '.join(FILES)}, {SETTINGS} {json.dumps(settings)}"
    lines = []
    state_path = folder / STATE
    files_changed = _write_plugin(folder, settings)
    if change:
        existed = cfg.exists()
        backup = settings_file.backup(cfg) if existed else None
        previous = _read_state(state_path)
        if previous and isinstance(previous.get("change"), dict):  # what an earlier install did stays undone too
            change = hermes_config.merge(previous["change"], change)
        _write_atomic(cfg, after)
        _write_state(
            state_path,
            {
                "v": 1,
                "config_existed": existed,
                "backup": str(backup) if backup else None,
                "written_sha": _sha(after),
                "change": change,
            },
        )
        lines.append(f"{cfg}: sjc's context engine enabled" + (f" (backup: {backup})" if backup else ""))
    else:
        lines.append(f"{cfg}: sjc's context engine already enabled; nothing changed")
    lines.append(
        f"{folder}: plugin {'installed' if files_changed else 'up to date'} (sjc side: {settings['command'][0]})"
    )
    return cfg, "\n".join(lines)


def uninstall(scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    _user_scope(scope)
    cfg, folder = config_path(), plugin_dir()
    if not _ours(folder):
        raise InputError(f"{folder} holds a plugin named {NAME} that is not sjc's; it is left alone")
    state = _read_state(folder / STATE)
    lines = []
    if cfg.exists():
        raw = cfg.read_bytes()
        backup = Path(state["backup"]) if state and state.get("backup") else None
        if state and state.get("written_sha") == _sha(raw) and (backup is None or backup.is_file()):
            # config.yaml is as install left it: back to the bytes it had before
            if dry_run:
                lines.append(
                    f"{cfg}: would be put back as it was before sjc install" + (f" ({backup})" if backup else "")
                )
            elif backup is not None:
                _write_atomic(cfg, backup.read_bytes())
                lines.append(f"{cfg}: put back as it was before sjc install ({backup})")
            elif not state.get("config_existed"):
                cfg.unlink()
                lines.append(f"{cfg}: removed (sjc install had made it)")
        else:
            _, y, doc = hermes_config.load(cfg)
            hermes_config.disable(doc, state.get("change") if state else None)
            after = hermes_config.dump(y, doc)
            if after == raw:
                lines.append(f"{cfg}: sjc's context engine not enabled; nothing changed")
            elif dry_run:
                lines.append(f"{cfg}:\n{after.decode()}")
            else:
                saved = settings_file.backup(cfg)
                _write_atomic(cfg, after)
                lines.append(f"{cfg}: sjc's context engine taken out (backup: {saved})")
    if folder.exists():
        if dry_run:
            lines.append(f"{folder}: would be removed")
        else:
            shutil.rmtree(folder)
            lines.append(f"{folder}: plugin removed")
    if not lines:
        lines.append(f"{folder}: sjc's plugin is not installed; nothing changed")
    return cfg, "\n".join(lines)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_bytes(data)
    if path.exists():
        shutil.copymode(path, tmp)  # Hermes keeps its config private (0600): so does the new file
    os.replace(tmp, path)


def _read_state(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_state(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# ---- sjc doctor ----------------------------------------------------------------------------------------


def doctor_checks() -> list[Any]:
    """``sjc doctor``'s lines for Hermes: the plugin installed and current, enabled in config.yaml, and the
    command it runs answering."""
    import subprocess

    from sjc_mcp.setup.doctor import FAIL, OK, WARN, Check, fix_command

    folder, cfg = plugin_dir(), config_path()
    fix = f"{fix_command('sjc')} install hermes"
    if not (folder / "plugin.yaml").exists():
        return [Check(WARN, "hermes", "sjc's context engine not installed", fix)]
    if not _ours(folder):
        return [Check(WARN, "hermes", f"{folder} holds another plugin named {NAME}", f"move it away, then {fix}")]
    out = []
    stale = [
        n for n, data in _plugin_files().items() if not (folder / n).is_file() or (folder / n).read_bytes() != data
    ]
    if stale:
        out.append(Check(WARN, "hermes", f"plugin files differ from this sjc's ({', '.join(stale)})", fix))
    else:
        out.append(Check(OK, "hermes", f"plugin installed ({folder})"))
    try:
        _, _, doc = hermes_config.load(cfg)
        plugins = doc.get("plugins") if isinstance(doc.get("plugins"), dict) else {}
        context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
        enabled = NAME in (plugins.get("enabled") or []) and context.get("engine") == NAME
    except InputError as exc:
        return [*out, Check(FAIL, "hermes", str(exc))]
    if enabled:
        out.append(Check(OK, "hermes", f"enabled in {cfg} (plugins.enabled, context.engine: {NAME})"))
    else:
        out.append(Check(FAIL, "hermes", f"not enabled in {cfg}: Hermes compacts with its own engine", fix))
    try:
        settings = json.loads((folder / SETTINGS).read_text(encoding="utf-8"))
        command = [str(a) for a in settings["command"]]
        done = subprocess.run(
            command, input='{"hook_event_name": "doctor"}', capture_output=True, text=True, timeout=30
        )
        answered = done.returncode == 0
    except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
        answered, command = False, []
    if answered:
        out.append(Check(OK, "hermes", f"the plugin's sjc side runs ({command[0]})"))
    else:
        out.append(
            Check(FAIL, "hermes", f"the plugin's sjc side does not run ({' '.join(command) or folder / SETTINGS})", fix)
        )
    return out
