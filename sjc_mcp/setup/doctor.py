"""``sjc doctor``: is sjc set up and working, host by host? One line per check, each problem with the
command that fixes it; exit 1 if anything is broken.

Checks, for each host found (Claude Code: ``~/.claude`` or ``claude`` on PATH; Codex: ``$CODEX_HOME``
or ``codex`` on PATH; Gemini CLI: ``~/.gemini`` or ``gemini`` on PATH, its lines in ``setup/gemini.py``):
hooks installed (by ``sjc install`` or, for Claude Code, the plugin) and, for Codex, trusted; the MCP server
registered and answering ``initialize``; the proxy, if the host is pointed at one, listening. Then: the
config valid, the decision log writable, the kill switch, the judge reachable.

Every check ends in time: a settings file that is a FIFO is reported, not waited on; an MCP server gets
``timeout`` seconds in all to answer (one that drips its answer, or whose child keeps its stdout open,
is cut off there and its process group ended); a URL is shown without its password; anything a file or
a server says is printed with its control characters made visible (``terminal.clean``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
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
        from sjc_mcp.terminal import clean

        tail = f" — fix: {clean(self.fix)}" if self.fix else ""
        return f"{self.status:<4}  {self.scope:<11}  {clean(self.what)}{tail}"


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


_SECRET_PARAM = re.compile(r"((?:^|&)[^=&]*(?:key|token|secret|passw|pwd|sig|auth|cred)[^=&]*=)[^&]+", re.I)


def shown_url(url: str) -> str:
    """``url`` as it may be printed: no password, no secret in its query, nothing else ``redact`` finds."""
    from urllib.parse import urlsplit, urlunsplit

    from sjc_mcp.redact import redact

    try:
        u = urlsplit(url)
        if u.password is not None:
            u = u._replace(netloc=f"{u.username}:[REDACTED:url-password]@{u.netloc.rsplit('@', 1)[1]}")
        if u.query:  # ?api_key=…, ?token=…, ?sig=…
            u = u._replace(query=_SECRET_PARAM.sub(r"\1[REDACTED:url-param]", u.query))
        url = urlunsplit(u)
    except ValueError:
        pass
    return redact(url)[0]


def host_file(path: Path, problems: list[Check], scope: str) -> str | None:
    """The text of a host's file (None when absent); one that cannot be read (a FIFO, a folder, not UTF-8)
    is a problem noted in ``problems``, never waited on."""
    from sjc_mcp.errors import InputError
    from sjc_mcp.setup.settings_file import read_text

    try:
        return read_text(path)
    except InputError as exc:
        problems.append(Check(FAIL, scope, str(exc)))
        return None


def host_json(path: Path, problems: list[Check], scope: str) -> dict[str, Any]:
    """The JSON object in a host's file; {} when it is absent, unreadable (noted) or not an object."""
    text = host_file(path, problems, scope)
    try:
        data = json.loads(text.removeprefix("\ufeff")) if text else {}
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _toml(path: Path, problems: list[Check], scope: str) -> dict[str, Any]:
    text = host_file(path, problems, scope)
    if not text:
        return {}
    from sjc_mcp.setup.codex_trust import _parse_toml

    try:
        return _parse_toml(text, path)
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
    """Start an MCP server over stdio, send ``initialize``, and read its answer: at most ``timeout`` seconds
    in all, whatever the server or a child of it does with its stdout; its process group ends after."""
    import selectors
    import signal

    exe = shutil.which(command[0]) if command else None
    if not exe:
        return False, f"{command[0] if command else '(no command)'} not found"
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            [exe, *command[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # its own process group: ended whole, children included
        )
    except OSError as exc:
        return False, f"cannot start {exe}: {exc.strerror}"
    assert proc.stdin is not None and proc.stdout is not None
    name = None
    data = b""
    try:
        try:
            proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            pass  # it exited already: its stdout says what it said
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while name is None and (left := t0 + timeout - time.monotonic()) > 0 and sel.select(left):
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
                name = _initialized(data.decode("utf-8", "replace").splitlines())
                if len(data) > 1 << 20:
                    break
    finally:
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)  # stdin closed: a well-behaved server ends now
        killpg = getattr(os, "killpg", None)
        with contextlib.suppress(OSError):
            if killpg is not None:
                killpg(proc.pid, signal.SIGKILL)  # what it left running, children holding its stdout included
            else:  # pragma: no cover - Windows
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    if name is None:
        if time.monotonic() - t0 >= timeout:
            return False, f"no answer to initialize within {timeout:g}s"
        return False, "no initialize answer on stdout"
    return True, f"{name} answered initialize in {(time.monotonic() - t0) * 1000:.0f} ms"


def mcp_http_answers(url: str, headers: dict[str, str], timeout: float = 10.0) -> tuple[bool, str]:
    """POST ``initialize`` to a streamable-HTTP MCP server and read its answer (JSON or one SSE event): at
    most ``timeout`` seconds in all, however slowly the server sends it."""
    import asyncio

    import httpx

    shown = shown_url(url)
    head = {"Accept": "application/json, text/event-stream", **headers}
    t0 = time.monotonic()

    async def ask() -> tuple[int, str | None]:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
            client.stream("POST", url, json=INITIALIZE, headers=head) as r,
        ):
            if r.status_code >= 400:
                return r.status_code, None
            data = b""
            async for chunk in r.aiter_bytes():
                data += chunk
                lines = data.decode("utf-8", "replace").splitlines()
                found = _initialized(line[5:] if line.startswith("data:") else line for line in lines)
                if found is not None or len(data) > 1 << 20:
                    return r.status_code, found
            return r.status_code, None

    try:
        status, name = asyncio.run(asyncio.wait_for(ask(), timeout))
    except (asyncio.TimeoutError, TimeoutError):
        return False, f"{shown}: no answer to initialize within {timeout:g}s"
    except httpx.HTTPError as exc:
        return False, f"{shown}: {shown_url(str(exc))}"
    except (ValueError, OSError) as exc:
        return False, f"{shown}: {exc}"
    if status == 401:
        return False, f"{shown} answered 401: the bearer token is missing or wrong"
    if status >= 400:
        return False, f"{shown} answered HTTP {status}"
    if name is None:
        return False, f"{shown}: no initialize answer"
    return True, f"{name} at {shown} answered initialize in {(time.monotonic() - t0) * 1000:.0f} ms"


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
    args = server.get("args")
    env = server.get("env")
    ok, detail = mcp_answers(
        [str(server["command"]), *(str(a) for a in (args if isinstance(args, list) else []))],
        {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else None,
    )
    return Check(OK if ok else FAIL, host, f"MCP server sjc registered: {detail}", None if ok else stdio_fix)


def _claude_code(home: Path, env: dict[str, str]) -> list[Check]:
    from sjc_mcp.setup import install
    from sjc_mcp.setup.hook_entries import is_ours

    out: list[Check] = []
    settings_file = install.settings_path("claude-code", "user")
    hooked = any(is_ours(h) for h in _hooks_in(host_json(settings_file, out, "claude-code")))
    plugins = host_json(home / ".claude" / "plugins" / "installed_plugins.json", out, "claude-code").get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    plugin = next((k for k in plugins if k.split("@")[0] == "sjc"), None)
    if hooked or plugin:
        via = f"plugin {plugin}" if plugin else str(settings_file)
        out.append(Check(OK, "claude-code", f"hooks installed ({via})"))
    else:
        out.append(Check(WARN, "claude-code", "hooks not installed", f"{fix_command('sjc')} install claude-code"))
    if not plugin:
        out += _plugin_leftovers(home)
    servers = host_json(home / ".claude.json", out, "claude-code").get("mcpServers") or {}
    server = servers.get("sjc") if isinstance(servers, dict) else None
    if isinstance(server, dict) and (server.get("url") or server.get("command")):
        given = server.get("headers")
        headers = {str(k): os.path.expandvars(str(v)) for k, v in (given if isinstance(given, dict) else {}).items()}
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
                f"proxy {shown_url(base)} {'listening' if up else 'not listening'}",
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
    settings = host_json(hooks_file, out, "codex")
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
    config = _toml(config_file, out, "codex")
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
                f"proxy {shown_url(base)} {'listening' if up else 'not listening'}",
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
                f"{judge.name} at {shown_url(url)} {'reachable' if up else 'unreachable'}",
                None if up else f'start the server at {shown_url(url)}, or set judge = "lexical"',
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

    def is_dir(p: Path) -> bool:  # a folder on the way without search permission is a problem, not a crash
        try:
            return p.is_dir()
        except OSError as exc:
            checks.append(Check(FAIL, "home", f"{p} cannot be checked: {exc.strerror or exc}"))
            return False

    if is_dir(home / ".claude") or shutil.which("claude"):
        found = True
        checks += _claude_code(home, env)
    if is_dir(paths.codex_home()) or shutil.which("codex"):
        found = True
        checks += _codex()
    if is_dir(paths.gemini_dir()) or shutil.which("gemini"):
        from sjc_mcp.setup import gemini

        found = True
        checks += gemini.doctor_checks(env)
    if is_dir(paths.hermes_home()) or shutil.which("hermes"):
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
