"""``sjc install`` / ``sjc uninstall``: merge the hook entries into a host's settings and take them out.

Only entries whose command runs ``sjc-hook`` (or ``sjc hook``) are ours (``hook_entries``); every other
key and hook is kept as it was. The settings file is backed up before the first change and written atomically
(``settings_file``); installing twice changes nothing. For Codex, ``--trust`` also writes the hooks'
trust into its config.toml, and ``uninstall`` takes it out (``codex_trust``). Gemini CLI's hook is an
extension of its own by default (``gemini``). After an uninstall, the backups sjc made that hold nothing the
files do not hold now, besides sjc's own entries, are removed, and any other is named (``backups``).
"""

from __future__ import annotations

import json
from pathlib import Path

from sjc_mcp import paths
from sjc_mcp.errors import InputError
from sjc_mcp.setup import backups, codex_trust, gemini, hermes, openclaw, settings_file
from sjc_mcp.setup.hook_entries import EVENTS, hook_block, merge, remove

__all__ = ["EVENTS", "hook_block", "install", "settings_path", "uninstall"]


def settings_path(host: str, scope: str, cwd: Path | None = None) -> Path:
    cwd = cwd or Path.cwd()
    if host == "claude-code":
        return (Path.home() / ".claude" if scope == "user" else cwd / ".claude") / "settings.json"
    if host == "codex":
        return (paths.codex_home() if scope == "user" else cwd / ".codex") / "hooks.json"
    raise InputError(f"unknown host {host!r}; choose claude-code or codex")


def install(
    host: str, scope: str = "user", dry_run: bool = False, command: str | None = None, trust: bool = False
) -> tuple[Path, str]:
    if host == "hermes":  # a plugin and Hermes' config.yaml, not hook settings
        if trust:
            raise InputError("--trust is for codex: Hermes loads the plugin its config.yaml enables")
        return hermes.install(scope, dry_run)
    if host == "gemini":
        if trust:
            raise InputError("--trust is for codex: Gemini CLI runs sjc's extension in every folder, trusted or not")
        return gemini.install(scope, dry_run, command)
    if host == "openclaw":  # a plugin in OpenClaw's one config, not hook settings
        if trust or scope != "user":
            raise InputError("openclaw: sjc's plugin goes into OpenClaw's one config; --scope and --trust do not apply")
        return openclaw.install(dry_run)
    if trust and host != "codex":
        raise InputError("--trust is for codex: Claude Code runs the hooks in its settings without a trust step")
    path = settings_path(host, scope)
    text = settings_file.read_text(path)
    before = settings_file.parse_json(text, path)
    after = merge(before, hook_block(host, command))
    trust_plan = codex_trust.plan_trust(path, after) if trust else None  # a config.toml it cannot edit: nothing written
    if after == before:
        message = f"{path}: sjc hooks already installed; nothing changed"
    elif dry_run:
        message = json.dumps(after, indent=2)
    else:
        backup = settings_file.write_json(path, after, settings_file.style_of(text))
        message = f"{path}: sjc hooks installed" + (f" (backup: {backup})" if backup else "")
    if host == "codex":
        if trust_plan is not None:
            message += "\n" + codex_trust.apply_trust(trust_plan, dry_run)
        elif codex_trust.untrusted(path, after):
            message += "\n" + codex_trust.TRUST_HINT.format(config=codex_trust.config_path())
        if scope == "project" and not codex_trust.project_trusted(path.parent.parent):
            message += "\n" + codex_trust.PROJECT_HINT.format(
                project=path.parent.parent.resolve(), config=codex_trust.config_path()
            )
    return path, message


def uninstall(host: str, scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    """Take sjc out of ``host``; then its backups that hold nothing the files do not hold now go, and the
    others are named (``backups``)."""
    if host in ("gemini", "hermes", "openclaw"):
        return _uninstall_plugin(host, scope, dry_run)
    path = settings_path(host, scope)
    text = settings_file.read_text(path)
    before = settings_file.parse_json(text, path)
    after = remove(before)
    untrust_plan = codex_trust.plan_untrust(path, before, after) if host == "codex" else None
    lines = []
    if after == before:
        lines.append(f"{path}: no sjc hooks found; nothing changed")
    elif dry_run:
        lines.append(json.dumps(after, indent=2))
    else:
        # what the file was before sjc's install, byte for byte, when that is what is left now
        found = settings_file.backup_holding(path, lambda old: settings_file.parse_json(old, path) == after)
        if found is None and not after:  # sjc made this file for its hooks alone: leave no empty file behind
            saved = settings_file.backup(path)
            path.unlink()
            lines.append(f"{path}: sjc hooks removed, file was otherwise empty and is gone (backup: {saved})")
        else:
            data = found if found is not None else settings_file.dump_json(after, settings_file.style_of(text)).encode()
            backup = settings_file.write_bytes(path, data)
            lines.append(f"{path}: sjc hooks removed (backup: {backup})")
    tidied = [backups.tidy(path, backups.json_same(path, remove), dry_run)]
    if untrust_plan is not None:
        untrusted = codex_trust.apply_untrust(untrust_plan, dry_run)
        if untrusted:
            lines.append(untrusted)
        config, _, now, _ = untrust_plan
        same = backups.codex_config_same(config, now, *codex_trust.untrust_changes(path, before, after))
        tidied.append(backups.tidy(config, same, dry_run))
    return path, backups.told("\n".join(lines), tidied)


def _uninstall_plugin(host: str, scope: str, dry_run: bool) -> tuple[Path, str]:
    """Gemini CLI's extension, Hermes' and OpenClaw's plugins; then the backups of the settings they edit."""
    if host == "gemini":
        path, message = gemini.uninstall(scope, dry_run)
        project = gemini.project_settings()
        tidied = [backups.tidy(project, backups.json_same(project, remove), dry_run)] if scope == "project" else []
    elif host == "hermes":
        path, message = hermes.uninstall(scope, dry_run)
        tidied = [backups.tidy(path, backups.bytes_same(path), dry_run)]
    else:
        path, message = openclaw.uninstall(dry_run)
        tidied = [backups.tidy(path, backups.json_same(path, openclaw.removed), dry_run)]
    return path, backups.told(message, tidied)
