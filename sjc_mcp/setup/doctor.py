"""``sjc doctor``: is sjc set up and working, host by host? One line per check, each problem with the
command that fixes it; exit 1 if anything is broken.

Checks, for each host found (Claude Code: ``~/.claude`` or ``claude`` on PATH; Codex: ``$CODEX_HOME``
or ``codex`` on PATH; Gemini CLI: ``~/.gemini`` or ``gemini`` on PATH, its lines in ``setup/gemini.py``):
hooks installed (by ``sjc install`` or, for Claude Code, the plugin) and, for Codex, trusted; the MCP server
registered and answering ``initialize``; the proxy, if the host is pointed at one, listening. Then: the
config valid, the decision log writable, the kill switch, the judge reachable.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from sjc_mcp import paths
from sjc_mcp.hook.state import json_object

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "sjc-doctor", "version": "1"},
    },
}


@dataclass
class Check:
    status: str
    scope: str
    what: str
    fix: str | None = None

    def line(self) -> str:
        tail = f" — fix: {self.fix}" if self.fix else ""
        return f"{self.status:<4}  {self.scope:<11}  {self.what}{tail}"


def _installed(name: str) -> Path | None:
    """``name`` (``sjc``, ``sjc-mcp``) as installed with this sjc: beside the ``sjc`` running (the folder
    it was called from, e.g. ``~/.local/bin``, then the one its link points into), else beside Python."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    folders = [here.absolute().parent, here.resolve().parent] if here else []
    for folder in [*folders, Path(sys.executable).parent]:
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return (folder / name).absolute()
    return None


def fix_command(name: str) -> str:
    """How a fix line runs ``name``: its bare name when the one on PATH is this install's (or none can be
    found beside it), else the absolute path of this install's."""
    mine = _installed(name)
    found = shutil.which(name)
    if mine is None or (found is not None and Path(found).resolve() == mine.resolve()):
        return name
    return shlex.quote(str(mine))


INSTALL_HINT = "install sjc as a tool first (uv tool install, or pipx install; docs/install.md)"


def _mcp_add(replace: bool = False) -> str:
    """The ``claude mcp add`` line registering this install's ``sjc-mcp`` by its absolute path."""
    mcp = _installed("sjc-mcp") or shutil.which("sjc-mcp")
    if mcp is None:
        return f'{INSTALL_HINT}, then claude mcp add --scope user sjc -- "$(command -v sjc-mcp)"'
    add = f"claude mcp add --scope user sjc -- {shlex.quote(str(Path(mcp).absolute()))}"
    return f"claude mcp remove sjc && {add}" if replace else add


def _on_path_fix(name: str) -> str:
    """The fix for ``name`` missing from PATH: the folder this install keeps it in, else installing sjc."""
    mine = _installed(name)
    if mine is None:
        return f"{INSTALL_HINT}, so that {name} is on PATH"
    folder = shlex.quote(str(mine.parent))
    return f'put {folder} on the PATH Claude Code starts with (export PATH={folder}:"$PATH" in your shell profile)'


def _toml(path: Path) -> dict[str, Any]:
    try:
        from sjc_mcp.config import _read_toml

        return _read_toml(path)
    except Exception:
        return {}


def _initialized(lines: Any) -> str | None:
    """The server's name from the answer to ``initialize`` among ``lines`` (JSON-RPC), or None."""
    for line in lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("id") == 1 and isinstance(msg.get("result"), dict):
            return str((msg["result"].get("serverInfo") or {}).get("name", "?"))
    return None


def mcp_answers(command: list[str], env: dict[str, str] | None = None, timeout: float = 10.0) -> tuple[bool, str]:
    """Start an MCP server over stdio, send ``initialize``, and read its answer."""
    exe = shutil.which(command[0]) if command else None
    if not exe:
        return False, f"{command[0] if command else '(no command)'} not found"
    request = INITIALIZE
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            [exe, *command[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            text=True,
        )
    except OSError as exc:
        return False, f"cannot start {exe}: {exc.strerror}"
    try:
        out, _ = proc.communicate(json.dumps(request) + "\n", timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return False, f"no answer to initialize within {timeout:g}s"
    name = _initialized(out.splitlines())
    if name is None:
        return False, "no initialize answer on stdout"
    return True, f"{name} answered initialize in {(time.monotonic() - t0) * 1000:.0f} ms"


def mcp_http_answers(url: str, headers: dict[str, str], timeout: float = 10.0) -> tuple[bool, str]:
    """POST ``initialize`` to a streamable-HTTP MCP server and read its answer (JSON or one SSE event)."""
    import httpx

    body = INITIALIZE
    head = {"Accept": "application/json, text/event-stream", **headers}
    t0 = time.monotonic()
    try:
        r = httpx.post(url, json=body, headers=head, timeout=timeout, trust_env=False)
    except httpx.HTTPError as exc:
        return False, f"{url}: {exc}"
    if r.status_code == 401:
        return False, f"{url} answered 401: the bearer token is missing or wrong"
    if r.status_code >= 400:
        return False, f"{url} answered HTTP {r.status_code}"
    name = _initialized(line[5:] if line.startswith("data:") else line for line in r.text.splitlines())
    if name is None:
        return False, f"{url}: no initialize answer"
    return True, f"{name} at {url} answered initialize in {(time.monotonic() - t0) * 1000:.0f} ms"


def _listening(url: str) -> bool:
    u = urlparse(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        socket.create_connection((u.hostname or "127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def _registered(host: str, server: dict[str, Any], headers: dict[str, str], http_fix: str, stdio_fix: str) -> Check:
    """Whether the MCP server ``host`` registers as sjc answers: over HTTP at its ``url`` (with ``headers``),
    else started from its ``command``."""
    if server.get("url"):
        ok, detail = mcp_http_answers(str(server["url"]), headers)
        return Check(OK if ok else FAIL, host, f"MCP server sjc (HTTP): {detail}", None if ok else http_fix)
    ok, detail = mcp_answers([server["command"], *server.get("args", [])], server.get("env"))
    return Check(OK if ok else FAIL, host, f"MCP server sjc registered: {detail}", None if ok else stdio_fix)


def _claude_code(home: Path, env: dict[str, str]) -> list[Check]:
    from sjc_mcp.setup import install
    from sjc_mcp.setup.hook_entries import is_ours

    out: list[Check] = []
    settings_file = install.settings_path("claude-code", "user")
    hooked = any(is_ours(h) for h in _hooks_in(json_object(settings_file)))
    plugins = json_object(home / ".claude" / "plugins" / "installed_plugins.json").get("plugins") or {}
    plugin = next((k for k in plugins if k.split("@")[0] == "sjc"), None)
    if hooked or plugin:
        via = f"plugin {plugin}" if plugin else str(settings_file)
        out.append(Check(OK, "claude-code", f"hooks installed ({via})"))
    else:
        out.append(Check(WARN, "claude-code", "hooks not installed", f"{fix_command('sjc')} install claude-code"))
    if not plugin:
        out += _plugin_leftovers(home)
    servers = json_object(home / ".claude.json").get("mcpServers") or {}
    server = servers.get("sjc") if isinstance(servers, dict) else None
    if isinstance(server, dict) and (server.get("url") or server.get("command")):
        headers = {str(k): os.path.expandvars(str(v)) for k, v in (server.get("headers") or {}).items()}
        out.append(
            _registered(
                "claude-code",
                server,
                headers,
                "check that the server runs and the Authorization header's token",
                _mcp_add(replace=True),
            )
        )
    elif plugin:
        ok, detail = mcp_answers(["sjc-mcp"])
        out.append(
            Check(
                OK if ok else FAIL,
                "claude-code",
                f"MCP server from the plugin: {detail}",
                None if ok else _on_path_fix("sjc-mcp"),
            )
        )
    else:
        out.append(
            Check(
                INFO,
                "claude-code",
                "MCP server not registered (optional)",
                _mcp_add(),
            )
        )
    base = env.get("ANTHROPIC_BASE_URL")
    if base and urlparse(base).hostname in ("127.0.0.1", "localhost", "::1"):
        up = _listening(base)
        out.append(
            Check(
                OK if up else FAIL,
                "claude-code",
                f"proxy {base} {'listening' if up else 'not listening'}",
                None if up else f"{fix_command('sjc')} proxy --listen {urlparse(base).netloc}",
            )
        )
    else:
        out.append(Check(INFO, "claude-code", "proxy not set up (ANTHROPIC_BASE_URL is not a local sjc proxy)"))
    return out


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


def _hooks_in(settings: dict[str, Any]) -> list[Any]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [
        h
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict)
        for h in (g.get("hooks") or [])
        if isinstance(g.get("hooks"), list)
    ]


def _codex() -> list[Check]:
    from sjc_mcp.setup import codex_trust, install
    from sjc_mcp.setup.hook_entries import is_ours

    out: list[Check] = []
    hooks_file = install.settings_path("codex", "user")
    settings = json_object(hooks_file)
    if any(is_ours(h) for h in _hooks_in(settings)):
        out.append(Check(OK, "codex", f"hooks installed ({hooks_file})"))
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
    else:
        out.append(Check(WARN, "codex", "hooks not installed", f"{fix_command('sjc')} install codex --trust"))
    config_file = paths.codex_home() / "config.toml"
    config = _toml(config_file)
    server = (config.get("mcp_servers") or {}).get("sjc")
    if isinstance(server, dict) and server.get("url"):
        headers = {}
        token_var = server.get("bearer_token_env_var")
        if token_var:
            headers["Authorization"] = f"Bearer {os.environ.get(str(token_var), '')}"
        for header, var in (server.get("env_http_headers") or {}).items():
            headers[str(header)] = os.environ.get(str(var), "")
        fix = f"check that the server runs and ${token_var or 'the token variable'} holds its token"
        out.append(_registered("codex", server, headers, fix, ""))
    elif isinstance(server, dict) and server.get("command"):
        out.append(_registered("codex", server, {}, "", f"fix command in [mcp_servers.sjc] of {config_file}"))
        if server.get("required") is not True:
            out.append(
                Check(
                    WARN,
                    "codex",
                    "[mcp_servers.sjc] has no required = true: codex exec may start without the tools",
                    f"add required = true to [mcp_servers.sjc] in {config_file}",
                )
            )
    else:
        out.append(
            Check(
                INFO,
                "codex",
                "MCP server not registered (optional)",
                f"add the README's [mcp_servers.sjc] block to {config_file}",
            )
        )
    provider = config.get("model_provider")
    providers = config.get("model_providers")
    table = providers.get(provider) if provider and isinstance(providers, dict) else None
    base = table.get("base_url") if isinstance(table, dict) else None
    if isinstance(base, str) and urlparse(base).hostname in ("127.0.0.1", "localhost", "::1"):
        up = _listening(base)
        out.append(
            Check(
                OK if up else FAIL,
                "codex",
                f"proxy {base} {'listening' if up else 'not listening'}",
                None if up else f"{fix_command('sjc')} proxy --listen {urlparse(base).netloc}",
            )
        )
        if isinstance(table, dict) and str(table.get("name", "")) == "OpenAI":
            out.append(
                Check(
                    WARN,
                    "codex",
                    "provider named OpenAI: Codex compacts on the server, nothing to prune",
                    f"rename model_providers.{provider}.name in {config_file}",
                )
            )
    else:
        out.append(Check(INFO, "codex", "proxy not set up (no local model_provider base_url)"))
    return out


def _general(config_path: str | None) -> list[Check]:
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import SJCError

    out: list[Check] = []
    try:
        config = load_config(config_path)
    except SJCError as exc:
        return [
            Check(
                FAIL, "config", str(exc), "correct the file (`sjc config init --force` writes a fresh, commented one)"
            )
        ]
    out.append(Check(OK, "config", f"valid ({config.path or 'defaults: no config file'})"))
    log = config.decision_log_path
    folder = next((p for p in [log.parent, *log.parent.parents] if p.exists()), None)
    writable = (log.exists() and os.access(log, os.W_OK) and log.is_file()) or (
        not log.exists() and folder is not None and os.access(folder, os.W_OK)
    )
    out.append(
        Check(
            OK if writable else FAIL,
            "log",
            f"decision log {log} {'writable' if writable else 'not writable'}",
            None if writable else f"make {log.parent} writable, or set decision_log in the config",
        )
    )
    off = config.disabled()
    out.append(
        Check(
            WARN,
            "kill switch",
            f"sjc is switched off: {off}",
            f"rm {config.kill_switch_path}" if "kill switch" in off else "unset SJC_DISABLE",
        )
        if off
        else Check(OK, "kill switch", f"off ({config.kill_switch_path} absent)")
    )
    try:
        from sjc_mcp.judges import make_judge

        judge = make_judge(config)
    except SJCError as exc:
        out.append(Check(FAIL, "judge", str(exc)))
        return out
    table = getattr(config, config.judge, None)
    url = getattr(table, "base_url", None)
    if url:
        up = _listening(url)
        out.append(
            Check(
                OK if up else FAIL,
                "judge",
                f"{judge.name} at {url} {'reachable' if up else 'unreachable'}",
                None if up else f'start the server at {url}, or set judge = "lexical"',
            )
        )
    else:
        out.append(Check(OK, "judge", f"{judge.name} (offline, nothing to reach)"))
    out.append(_index())
    return out


def _index() -> Check:
    """Which build of the evidence index runs: compiled, or Python and numpy (the same results, slower)."""
    from sjc_mcp import evidence

    if evidence._bm25 is not None:
        return Check(OK, "index", "compiled (sjc_mcp._bm25)")
    return Check(
        WARN,
        "index",
        "Python and numpy: the compiled index was not built at install (same results, several times slower)",
        "install a C compiler and the Python headers (Debian: gcc python3-dev), then reinstall sjc-mcp",
    )


def run(config_path: str | None = None, env: dict[str, str] | None = None) -> tuple[list[Check], int]:

    env = dict(os.environ) if env is None else env
    home = Path.home()
    checks: list[Check] = []
    found = False
    if (home / ".claude").is_dir() or shutil.which("claude"):
        found = True
        checks += _claude_code(home, env)
    if paths.codex_home().is_dir() or shutil.which("codex"):
        found = True
        checks += _codex()
    if paths.gemini_dir().is_dir() or shutil.which("gemini"):
        from sjc_mcp.setup import gemini

        found = True
        checks += gemini.doctor_checks(env)
    if paths.hermes_home().is_dir() or shutil.which("hermes"):
        from sjc_mcp.setup import hermes

        found = True
        checks += hermes.doctor_checks()
    if not found:
        checks.append(
            Check(
                INFO,
                "hosts",
                "neither Claude Code (~/.claude, claude), Codex ($CODEX_HOME, codex), Gemini CLI (~/.gemini, "
                "gemini) nor Hermes ($HERMES_HOME, hermes) found",
            )
        )
    checks += _general(config_path)
    return checks, 1 if any(c.status == FAIL for c in checks) else 0
