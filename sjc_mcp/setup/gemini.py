"""``sjc install gemini`` / ``sjc uninstall gemini``: sjc's ``BeforeModel`` hook in Gemini CLI.

Gemini CLI (0.61.0, seen) runs the hooks of its settings files, the user's ``~/.gemini/settings.json`` as
well as a project's ``.gemini/settings.json``, only in a folder the user has trusted: in any other folder
they are skipped without a word. The hooks of an extension (a folder under ``~/.gemini/extensions/`` with a
``gemini-extension.json`` and ``hooks/hooks.json``) run in every folder. So:

- ``--scope user`` (the default) writes an extension of sjc's own, ``~/.gemini/extensions/sjc``
  (``$GEMINI_CLI_HOME/.gemini`` when that is set), holding nothing but the hook; Gemini CLI lists it with
  ``gemini extensions list`` and ``gemini extensions disable sjc`` turns it off;
- ``--scope project`` merges the hook into the project's ``.gemini/settings.json`` (other keys and hooks kept,
  a backup first), which Gemini CLI runs only once the folder is trusted, and announces the first time as a
  new project hook.

Uninstalling takes out exactly what installing wrote: the extension's two files and its folders (anything
else found there is left, and said), or sjc's entry in the project's settings.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sjc_mcp import paths
from sjc_mcp.errors import InputError
from sjc_mcp.setup import settings_file
from sjc_mcp.setup.hook_entries import hook_block, is_ours, merge, remove

NAME = "sjc"
TIMEOUT_MS = 60_000  # Gemini CLI's hook timeouts are in milliseconds
UNTRUSTED = (
    "Gemini CLI runs the hooks in {path} only in a trusted folder: until this folder is trusted "
    "(Gemini CLI asks when it starts here), sjc's hook does not run; `sjc install gemini` (user scope) "
    "installs it as an extension, whose hooks run in every folder"
)


def extension_dir() -> Path:
    return paths.gemini_dir() / "extensions" / NAME


def _files(command: str | None) -> dict[Path, dict[str, Any]]:
    from sjc_mcp import __version__

    ext = extension_dir()
    manifest = {
        "name": NAME,
        "version": __version__,
        "description": "sjc: takes the entries no tool output, user message or earlier summary supports out of "
        "the compression snapshot the model is sent",
    }
    return {
        ext / "gemini-extension.json": manifest,
        ext / "hooks" / "hooks.json": {"hooks": hook_block("gemini", command, timeout=TIMEOUT_MS)},
    }


def _ours(ext: Path) -> bool:
    """Whether ``ext`` holds sjc's extension, or nothing of one yet."""
    manifest, hooks = ext / "gemini-extension.json", ext / "hooks" / "hooks.json"
    if manifest.exists() and settings_file.read_json(manifest).get("name") != NAME:
        return False
    if hooks.exists():
        events = settings_file.read_json(hooks).get("hooks")
        groups = [g for gs in events.values() if isinstance(gs, list) for g in gs] if isinstance(events, dict) else []
        if not any(is_ours(h) for g in groups if isinstance(g, dict) for h in g.get("hooks") or []):
            return False
    return True


def project_settings(cwd: Path | None = None) -> Path:
    return (cwd or Path.cwd()) / ".gemini" / "settings.json"


def install(scope: str = "user", dry_run: bool = False, command: str | None = None) -> tuple[Path, str]:
    if scope == "project":
        path = project_settings()
        before = settings_file.read_json(path)
        after = merge(before, hook_block("gemini", command, timeout=TIMEOUT_MS))
        if after == before:
            message = f"{path}: sjc hook already installed; nothing changed"
        elif dry_run:
            message = json.dumps(after, indent=2)
        else:
            backup = settings_file.write_json(path, after)
            message = f"{path}: sjc hook installed" + (f" (backup: {backup})" if backup else "")
        return path, message + "\n" + UNTRUSTED.format(path=path)
    files = _files(command)
    ext = extension_dir()
    if not _ours(ext):
        raise InputError(f"{ext} holds an extension that is not sjc's; move it away first")
    todo = {p: data for p, data in files.items() if not p.exists() or settings_file.read_json(p) != data}
    if not todo:
        return ext, f"{ext}: sjc extension already installed; nothing changed"
    if dry_run:
        return ext, "\n".join(f"{p}:\n{json.dumps(data, indent=2)}" for p, data in todo.items())
    for p, data in todo.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.sjc-tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(p)
    return ext, f"{ext}: sjc extension installed (Gemini CLI runs its BeforeModel hook in every folder)"


def uninstall(scope: str = "user", dry_run: bool = False) -> tuple[Path, str]:
    if scope == "project":
        path = project_settings()
        before = settings_file.read_json(path)
        after = remove(before)
        if after == before:
            return path, f"{path}: no sjc hook found; nothing changed"
        if dry_run:
            return path, json.dumps(after, indent=2)
        if not after:
            backup = settings_file.backup(path)
            path.unlink()
            return path, f"{path}: sjc hook removed, file was otherwise empty and is gone (backup: {backup})"
        saved = settings_file.write_json(path, after)
        return path, f"{path}: sjc hook removed (backup: {saved})"
    ext = extension_dir()
    files = list(_files(None))
    if not ext.exists():
        return ext, f"{ext}: no sjc extension found; nothing changed"
    if not _ours(ext):
        raise InputError(f"{ext} holds an extension that is not sjc's; left as it is")
    if dry_run:
        return ext, f"{ext}: would remove {', '.join(str(p) for p in files if p.exists())}"
    for p in files:
        p.unlink(missing_ok=True)
    left = []
    for d in (ext / "hooks", ext):
        try:
            d.rmdir()
        except OSError:
            left.append(d)
    if left:
        return ext, f"{ext}: sjc extension removed; other files left in {left[-1]}"
    return ext, f"{ext}: sjc extension removed"


def doctor_checks(env: dict[str, str]) -> list[Any]:
    """``sjc doctor``'s lines for Gemini CLI: the hook (the extension, or the project's settings), the MCP server
    in ``settings.json``, and the proxy when ``GOOGLE_GEMINI_BASE_URL`` points at this machine."""
    from urllib.parse import urlparse

    from sjc_mcp.hook.state import json_object
    from sjc_mcp.setup.doctor import FAIL, INFO, OK, WARN, Check, _hooks_in, _listening, _registered, fix_command
    from sjc_mcp.setup.doctor.checks import hook_programs

    out = []
    ext = extension_dir()
    hooks = json_object(ext / "hooks" / "hooks.json")
    project = project_settings()
    if (ext / "gemini-extension.json").exists() and any(is_ours(h) for h in _hooks_in(hooks)):
        out.append(Check(OK, "gemini", f"hook installed (extension {ext}: runs in every folder)"))
        out += hook_programs("gemini", _hooks_in(hooks), f"{fix_command('sjc')} install gemini")
    elif any(is_ours(h) for h in _hooks_in(json_object(project))):
        out.append(Check(WARN, "gemini", f"hook installed in {project}: runs only once this folder is trusted", None))
    else:
        out.append(Check(WARN, "gemini", "hook not installed", f"{fix_command('sjc')} install gemini"))
    servers = json_object(paths.gemini_dir() / "settings.json").get("mcpServers")
    server = servers.get("sjc") if isinstance(servers, dict) else None
    if isinstance(server, dict) and (server.get("url") or server.get("httpUrl") or server.get("command")):
        if server.get("httpUrl") and not server.get("url"):
            server = {**server, "url": server["httpUrl"]}
        headers = {str(k): os.path.expandvars(str(v)) for k, v in (server.get("headers") or {}).items()}
        where = paths.gemini_dir() / "settings.json"
        out.append(
            _registered(
                "gemini", server, headers, f"check mcpServers.sjc in {where}", f"fix mcpServers.sjc.command in {where}"
            )
        )
    else:
        out.append(Check(INFO, "gemini", "MCP server not registered (optional; see docs/hosts/gemini.md)"))
    base = env.get("GOOGLE_GEMINI_BASE_URL")
    if base and urlparse(base).hostname in ("127.0.0.1", "localhost", "::1"):
        up = _listening(base)
        fix = None if up else f"{fix_command('sjc')} proxy --listen {urlparse(base).netloc}"
        out.append(Check(OK if up else FAIL, "gemini", f"proxy {base} {'listening' if up else 'not listening'}", fix))
    else:
        out.append(Check(INFO, "gemini", "proxy not set up (GOOGLE_GEMINI_BASE_URL is not a local sjc proxy)"))
    return out
