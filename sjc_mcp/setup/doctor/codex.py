"""``sjc doctor``'s lines for Codex: hooks installed and trusted, the MCP server, the proxy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from sjc_mcp import paths
from sjc_mcp.setup.doctor.checks import (
    FAIL,
    INFO,
    OK,
    WARN,
    Check,
    fix_command,
    hook_programs,
    hooks_in,
    host_json,
    listening,
    read_toml,
    shown_url,
)
from sjc_mcp.setup.doctor.mcp import registered


def codex() -> list[Check]:
    out: list[Check] = _hooks()
    config_file = paths.codex_home() / "config.toml"
    config = read_toml(config_file, out, "codex")
    out += _mcp(config, config_file)
    out += _proxy(config, config_file)
    return out


def _hooks() -> list[Check]:
    """Installed by ``sjc install codex``, and trusted (Codex skips hooks it does not trust)."""
    from sjc_mcp.setup import codex_trust, install
    from sjc_mcp.setup.hook_entries import is_ours

    out: list[Check] = []
    hooks_file = install.settings_path("codex", "user")
    settings = host_json(hooks_file, out, "codex")
    if not any(is_ours(h) for h in hooks_in(settings)):
        return [*out, Check(WARN, "codex", "hooks not installed", f"{fix_command('sjc')} install codex --trust")]
    out.append(Check(OK, "codex", f"hooks installed ({hooks_file})"))
    out += hook_programs("codex", hooks_in(settings), f"{fix_command('sjc')} install codex --trust")
    if codex_trust.untrusted(hooks_file, settings):
        out.append(
            Check(
                FAIL,
                "codex",
                "hooks not trusted: Codex skips them without a word",
                f"{fix_command('sjc')} install codex --trust (or review them with /hooks in Codex)",
            )
        )
    else:
        out.append(Check(OK, "codex", "hooks trusted"))
    return out


def _mcp(config: dict[str, Any], config_file: Path) -> list[Check]:
    """``[mcp_servers.sjc]``: over HTTP with its token, or a command that answers ``initialize``."""
    servers = config.get("mcp_servers")
    server = servers.get("sjc") if isinstance(servers, dict) else None
    if isinstance(server, dict) and server.get("url"):
        headers = {}
        token_var = server.get("bearer_token_env_var")
        if token_var:
            headers["Authorization"] = f"Bearer {os.environ.get(str(token_var), '')}"
        for header, var in (server.get("env_http_headers") or {}).items():
            headers[str(header)] = os.environ.get(str(var), "")
        fix = f"check that the server runs and ${token_var or 'the token variable'} holds its token"
        return [registered("codex", server, headers, fix, "")]
    if isinstance(server, dict) and server.get("command"):
        out = [registered("codex", server, {}, "", f"fix command in [mcp_servers.sjc] of {config_file}")]
        if server.get("required") is not True:
            out.append(
                Check(
                    WARN,
                    "codex",
                    "[mcp_servers.sjc] has no required = true: codex exec may start without the tools",
                    f"add required = true to [mcp_servers.sjc] in {config_file}",
                )
            )
        return out
    return [
        Check(
            INFO,
            "codex",
            "MCP server not registered (optional)",
            f"add the README's [mcp_servers.sjc] block to {config_file}",
        )
    ]


def _proxy(config: dict[str, Any], config_file: Path) -> list[Check]:
    """A local model provider's ``base_url``: the proxy listening there, and a provider Codex compacts for."""
    provider = config.get("model_provider")
    providers = config.get("model_providers")
    table = providers.get(provider) if provider and isinstance(providers, dict) else None
    base = table.get("base_url") if isinstance(table, dict) else None
    if not (isinstance(base, str) and urlparse(base).hostname in ("127.0.0.1", "localhost", "::1")):
        return [Check(INFO, "codex", "proxy not set up (no local model_provider base_url)")]
    up = listening(base)
    out = [
        Check(
            OK if up else FAIL,
            "codex",
            f"proxy {shown_url(base)} {'listening' if up else 'not listening'}",
            None if up else f"{fix_command('sjc')} proxy --listen {urlparse(base).netloc}",
        )
    ]
    if isinstance(table, dict) and str(table.get("name", "")) == "OpenAI":
        out.append(
            Check(
                WARN,
                "codex",
                "provider named OpenAI: Codex compacts on the server, nothing to prune",
                f"rename model_providers.{provider}.name in {config_file}",
            )
        )
    return out
