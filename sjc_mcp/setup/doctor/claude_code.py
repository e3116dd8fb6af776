"""``sjc doctor``'s lines for Claude Code: hooks (``sjc install`` or the plugin), what an uninstalled plugin
left, the MCP server, the proxy."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from urllib.parse import urlparse

from sjc_mcp.setup.doctor.checks import (
    FAIL,
    INFO,
    INSTALL_HINT,
    OK,
    WARN,
    Check,
    fix_command,
    hook_programs,
    hooks_in,
    host_json,
    installed,
    listening,
    on_path_fix,
    shown_url,
)
from sjc_mcp.setup.doctor.mcp import mcp_answers, registered


def _mcp_add(replace: bool = False) -> str:
    """The ``claude mcp add`` line registering this install's ``sjc-mcp`` by its absolute path."""
    mcp = installed("sjc-mcp") or shutil.which("sjc-mcp")
    if mcp is None:
        return f'{INSTALL_HINT}, then claude mcp add --scope user sjc -- "$(command -v sjc-mcp)"'
    add = f"claude mcp add --scope user sjc -- {shlex.quote(str(Path(mcp).absolute()))}"
    return f"claude mcp remove sjc && {add}" if replace else add


def claude_code(home: Path, env: dict[str, str]) -> list[Check]:
    from sjc_mcp.setup import install
    from sjc_mcp.setup.hook_entries import is_ours

    out: list[Check] = []
    settings_file = install.settings_path("claude-code", "user")
    entries = hooks_in(host_json(settings_file, out, "claude-code"))
    hooked = any(is_ours(h) for h in entries)
    plugins = host_json(home / ".claude" / "plugins" / "installed_plugins.json", out, "claude-code").get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    plugin = next((k for k in plugins if k.split("@")[0] == "sjc"), None)
    if hooked or plugin:
        via = f"plugin {plugin}" if plugin else str(settings_file)
        out.append(Check(OK, "claude-code", f"hooks installed ({via})"))
    else:
        out.append(Check(WARN, "claude-code", "hooks not installed", f"{fix_command('sjc')} install claude-code"))
    if hooked:
        out += hook_programs("claude-code", entries, f"{fix_command('sjc')} install claude-code")
    if plugin and shutil.which("sjc-hook") is None:  # the plugin's script runs sjc-hook from PATH
        out.append(
            Check(
                FAIL,
                "claude-code",
                "the plugin's hooks run sjc-hook from PATH, and it is not on PATH: they judge nothing",
                on_path_fix("sjc-hook"),
            )
        )
    if not plugin:
        out += _plugin_leftovers(home)
    out += _mcp(home, plugin, out)
    out.append(_proxy(env))
    return out


def _mcp(home: Path, plugin: str | None, problems: list[Check]) -> list[Check]:
    """The sjc server in ``~/.claude.json`` (over HTTP with its headers, or a command), else the plugin's."""
    servers = host_json(home / ".claude.json", problems, "claude-code").get("mcpServers") or {}
    server = servers.get("sjc") if isinstance(servers, dict) else None
    if isinstance(server, dict) and (server.get("url") or server.get("command")):
        given = server.get("headers")
        headers = {str(k): os.path.expandvars(str(v)) for k, v in (given if isinstance(given, dict) else {}).items()}
        http_fix = "check that the server runs and the Authorization header's token"
        return [registered("claude-code", server, headers, http_fix, _mcp_add(replace=True))]
    if plugin:
        ok, detail = mcp_answers(["sjc-mcp"])
        fix = None if ok else on_path_fix("sjc-mcp")
        return [Check(OK if ok else FAIL, "claude-code", f"MCP server from the plugin: {detail}", fix)]
    return [Check(INFO, "claude-code", "MCP server not registered (optional)", _mcp_add())]


def _proxy(env: dict[str, str]) -> Check:
    """``ANTHROPIC_BASE_URL`` at this machine: the proxy listening there."""
    base = env.get("ANTHROPIC_BASE_URL")
    if not (base and urlparse(base).hostname in ("127.0.0.1", "localhost", "::1")):
        return Check(INFO, "claude-code", "proxy not set up (ANTHROPIC_BASE_URL is not a local sjc proxy)")
    up = listening(base)
    return Check(
        OK if up else FAIL,
        "claude-code",
        f"proxy {shown_url(base)} {'listening' if up else 'not listening'}",
        None if up else f"{fix_command('sjc')} proxy --listen {urlparse(base).netloc}",
    )


def _plugin_leftovers(home: Path) -> list[Check]:
    """The copy of an uninstalled sjc plugin that Claude Code keeps in its plugin cache (marked
    ``.orphaned_at``; it deletes it 14 days later, at a start with some plugin installed)."""
    cache = home / ".claude" / "plugins" / "cache"
    marketplaces = sorted({m.parents[2] for m in cache.glob("*/sjc/*/.orphaned_at")})
    return [
        Check(
            INFO,
            "claude-code",
            f"the uninstalled plugin's copy is left in {folder} (Claude Code deletes it 14 days after the"
            " uninstall, at a start with some plugin installed)",
            f"rm -rf {shlex.quote(str(folder))}",
        )
        for folder in marketplaces
    ]
