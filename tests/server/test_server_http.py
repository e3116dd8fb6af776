"""``sjc-mcp``'s command line and its streamable-HTTP transport, driven as clients do: real processes, the MCP
SDK's stdio and streamable-HTTP clients, raw HTTP for the bearer check, real signals for Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import shutil
import signal
import ssl
import subprocess
import sys
import time
from contextlib import contextmanager

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import sjc_exe
from tests.e2e.hostcli import free_port, wait_port
from tests.server.test_server import CODEX_CALL, CODEX_OPENING, EX, _evidence

TOKEN = "team-token-0123456789abcdef"
SUMMARY = "- the build passed: 48 passed\n- publish version 2.0 next"


def _env(tmp_path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SJC_MCP_TOKEN", "SJC_CONFIG")}
    env.update({"SJC_DECISION_LOG": str(tmp_path / "log.jsonl"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    env.update(extra)
    return env


@contextmanager
def http_server(tmp_path, *args: str, env: dict[str, str] | None = None):
    """``sjc-mcp --transport streamable-http`` on a free loopback port: (process, url, stderr file)."""
    port = free_port()
    err = open(tmp_path / f"server-{port}.err", "w+b")  # noqa: SIM115 - read back by the tests
    p = subprocess.Popen(
        [sjc_exe("sjc-mcp"), "--transport", "streamable-http", "--port", str(port), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=err,
        env=env or _env(tmp_path, SJC_MCP_TOKEN=TOKEN),
    )
    try:
        if not wait_port(port, 30):
            err.seek(0)
            pytest.fail(f"sjc-mcp did not listen: {err.read().decode()}")
        yield p, f"http://127.0.0.1:{port}/mcp", err
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        err.close()


async def _http_session(url: str, fn, headers: dict[str, str] | None = None, trust: ssl.SSLContext | None = None):
    """A session of the SDK's streamable-HTTP client with the team token (``trust``: the https client's TLS
    context, for a certificate of a CA of our own)."""
    hdrs = {"Authorization": f"Bearer {TOKEN}", **(headers or {})}
    http = (
        create_mcp_http_client(headers=hdrs)
        if trust is None
        else httpx.AsyncClient(headers=hdrs, verify=trust, timeout=httpx.Timeout(30, read=300))
    )
    async with (
        http as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        return await fn(s)


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_console_script_help_version_and_a_bad_command_line(tmp_path):
    """The installed ``sjc-mcp`` (the in-process cases: ``test_options``)."""
    from sjc_mcp import __version__

    h = subprocess.run([sjc_exe("sjc-mcp"), "--help"], capture_output=True, text=True, timeout=30)
    assert h.returncode == 0 and "--transport" in h.stdout
    v = subprocess.run([sjc_exe("sjc-mcp"), "--version"], capture_output=True, text=True, timeout=30)
    assert v.returncode == 0 and v.stdout.strip() == f"sjc-mcp {__version__}"
    r = subprocess.run(
        [sjc_exe("sjc-mcp"), "--port", "1"], capture_output=True, text=True, timeout=30, env=_env(tmp_path)
    )
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "only with" in r.stderr, r.stderr


@pytest.mark.slow
def test_bad_tokens_file_and_bad_config_refuse_to_start(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice short\n")
    r = subprocess.run(
        [sjc_exe("sjc-mcp"), "--transport", "streamable-http", "--tokens", str(tokens)],
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(tmp_path),
    )
    assert r.returncode == 2 and "shorter than 16" in r.stderr and r.stderr.count("\n") == 1
    cfg = tmp_path / "bad.toml"
    cfg.write_text("threshold = 'high'\n")
    r = subprocess.run(
        [sjc_exe("sjc-mcp"), "--transport", "streamable-http", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
    )
    assert r.returncode == 2 and "threshold" in r.stderr and r.stderr.count("\n") == 1, r.stderr


# --- stdio: --config, python -m sjc_mcp.server, the terminal notice, Ctrl-C -----------------------------


@pytest.mark.slow
def test_config_option_and_module_run_over_stdio(tmp_path):
    """``python -m sjc_mcp.server --config FILE`` serves the tools through the SDK's stdio client, with the
    config given on the command line (not $SJC_CONFIG's)."""
    given = tmp_path / "given.toml"
    given.write_text("mode = 'shadow'\n")
    other = tmp_path / "other.toml"
    other.write_text("mode = 'enforce'\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sjc_mcp.server", "--config", str(given)],
        env=_env(tmp_path, SJC_CONFIG=str(other)),
    )

    async def go():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("prune_summary", {"summary": SUMMARY})

    r = anyio.run(go)
    assert not r.is_error and r.structured_content["mode"] == "shadow"
    assert r.structured_content["pruned_summary"] == SUMMARY  # shadow: judged, nothing removed


def _stdio_proc(tmp_path, stdin=subprocess.PIPE, args=()):
    return subprocess.Popen(
        [sjc_exe("sjc-mcp"), *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path),
    )


@pytest.mark.slow
@pytest.mark.parametrize("after_call", [False, True])
def test_stdio_first_ctrl_c_exits_cleanly(tmp_path, after_call):
    """SIGINT once, after the handshake or after a tool call: the process ends as SIGINT ends a process (the
    shell shows 130), without a traceback (the SDK's stdin thread would otherwise keep it waiting)."""
    p = _stdio_proc(tmp_path)
    msgs = [*CODEX_OPENING, CODEX_CALL] if after_call else CODEX_OPENING
    for m in msgs:
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()
        if "id" in m:
            got = json.loads(p.stdout.readline())
            assert got["id"] == m["id"]
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=10)
    err = p.stderr.read().decode()
    p.stdin.close()
    assert rc == -signal.SIGINT and "Traceback" not in err and "KeyboardInterrupt" not in err, err


@pytest.mark.slow
def test_in_a_terminal_it_says_what_it_is(tmp_path):
    """stdin a TTY: one line on stderr says it is an MCP server waiting on stdio; Ctrl-C then ends it cleanly."""
    master, slave = pty.openpty()
    try:
        p = _stdio_proc(tmp_path, stdin=slave)
        deadline = time.monotonic() + 20
        first = b""
        os.set_blocking(p.stderr.fileno(), False)
        while b"\n" not in first and time.monotonic() < deadline:
            first += p.stderr.read() or b""
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=10)
        os.set_blocking(p.stderr.fileno(), True)
        err = (first + p.stderr.read()).decode()
    finally:
        os.close(master)
        os.close(slave)
    assert err.count("\n") == 1 and "MCP server" in err and "stdio" in err, err
    assert rc == -signal.SIGINT


@pytest.mark.slow
def test_not_in_a_terminal_it_is_silent(tmp_path):
    p = _stdio_proc(tmp_path)
    out, err = p.communicate(b"", timeout=30)
    assert p.returncode == 0 and out == b"" and err == b""


# --- streamable HTTP ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_http_tools_through_the_sdk_client(tmp_path):
    summary = (EX / "summary.md").read_text()

    async def go(s: ClientSession):
        tools = await s.list_tools()
        j = await s.call_tool("judge_summary", {"summary": summary, "evidence": _evidence()})
        p = await s.call_tool("prune_summary", {"summary": summary, "evidence": _evidence()})
        return tools, j, p

    with http_server(tmp_path) as (_, url, _err):
        tools, j, p = anyio.run(lambda: _http_session(url, go))
    assert {t.name for t in tools.tools} == {
        "judge_summary",
        "prune_summary",
        "judge_tool_results",
        "prune_tool_results",
    }
    assert not j.is_error and any(e["decision"] == "prune" for e in j.structured_content["entries"])
    out = p.structured_content
    assert "Publish version 2.0" not in out["pruned_summary"] and "48 passed" in out["pruned_summary"]
    records = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    from sjc_mcp.server.users import user_id

    assert [r["op"] for r in records] == ["judge", "prune"] and {r["user"] for r in records} == {user_id(None)}


@pytest.mark.slow
@pytest.mark.parametrize("auth", [None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}", "Bearer"])
def test_http_without_the_token_is_401(tmp_path, auth):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_server(tmp_path) as (_, url, _err):
        bad = httpx.post(url, json=init, headers={**headers, **({"Authorization": auth} if auth else {})}, timeout=30)
        good = httpx.post(url, json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert bad.status_code == 401 and bad.headers["www-authenticate"].startswith("Bearer")
    assert good.status_code == 200  # the control: the same request with the token is served


@pytest.mark.slow
@pytest.mark.parametrize("token", ["not-the-token-at-all", TOKEN])
def test_http_sdk_client_with_a_bad_token_gets_401(tmp_path, token):
    """The SDK's streamable-HTTP client with a wrong token: the server answers 401 and the session fails; the
    control with the right token lists the tools."""
    import httpx2

    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    async def go(url: str):
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, event_hooks={"response": [record]}) as c,
            streamable_http_client(url, http_client=c) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await s.list_tools()

    with http_server(tmp_path) as (_, url, _err):
        if token == TOKEN:
            assert len(anyio.run(go, url).tools) == 4
            assert 401 not in statuses
        else:
            with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps it in exception groups
                anyio.run(go, url)
            assert statuses and set(statuses) == {401}


@pytest.mark.slow
def test_http_on_loopback_without_a_token_serves(tmp_path):
    async def go(s: ClientSession):
        return await s.call_tool("judge_summary", {"summary": SUMMARY})

    with http_server(tmp_path, env=_env(tmp_path)) as (_, url, err):
        r = anyio.run(lambda: _http_session(url, go, {"Authorization": ""}))
        err.seek(0)
        banner = err.read().decode()
    assert not r.is_error and "no token (loopback only)" in banner


@pytest.mark.slow
def test_http_transcript_path_needs_roots_from_the_config(tmp_path):
    """Over HTTP the default allowed_roots (the server user's own transcript folders) do not apply:
    transcript_path reads only under roots the config file names."""
    from tests.hosts.test_hosts import small_cc

    inside = tmp_path / "projects"
    inside.mkdir()
    path = small_cc(inside)

    async def go(s: ClientSession):
        return await s.call_tool("judge_summary", {"transcript_path": str(path)})

    env = _env(tmp_path, SJC_MCP_TOKEN=TOKEN)
    with http_server(tmp_path, env=env) as (_, url, _err):
        refused = anyio.run(lambda: _http_session(url, go))
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"allowed_roots = [{str(inside)!r}]\n")
    with http_server(tmp_path, "--config", str(cfg), env=env) as (_, url, _err):
        allowed = anyio.run(lambda: _http_session(url, go))
    assert refused.is_error and "allowed_roots set in the server's config" in refused.content[0].text
    assert not allowed.is_error and allowed.structured_content["entries"]


@pytest.mark.slow
def test_http_first_ctrl_c_exits_cleanly(tmp_path):
    """SIGINT once while a client's session is open (a call made, its GET stream listening): the server
    ends while that session is still open (it does not wait for the client to go), exit 130, no traceback."""
    took: list[float] = []

    async def go(s: ClientSession, p: subprocess.Popen):
        r = await s.call_tool("judge_summary", {"summary": SUMMARY})
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc = await anyio.to_thread.run_sync(lambda: p.wait(timeout=15))
        took.append(time.monotonic() - t0)
        return r, rc

    async def session(url: str, p: subprocess.Popen):
        try:
            return await _http_session(url, lambda s: go(s, p))
        except BaseException as exc:  # the client sees its server go away while closing the session
            if took:
                return None, p.returncode
            raise exc

    with http_server(tmp_path) as (p, url, err):
        r, rc = anyio.run(session, url, p)
        err.seek(0)
        text = err.read().decode()
    assert r is None or not r.is_error
    assert rc == 130 and took, (rc, took, text)  # took: it ended inside the session
    assert "Traceback" not in text and text.startswith("sjc-mcp: MCP over streamable HTTP at http://127.0.0.1:"), text


@pytest.mark.slow
def test_stdio_log_dir_logs_under_the_login_name(tmp_path):
    """On stdio the one user is this machine's: --log-dir DIR puts the records in DIR/<login name>.jsonl."""
    import getpass

    from sjc_mcp.server.users import safe_user

    logs = tmp_path / "logs"
    params = StdioServerParameters(command=sjc_exe("sjc-mcp"), args=["--log-dir", str(logs)], env=_env(tmp_path))

    async def go():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("judge_summary", {"summary": SUMMARY})

    assert not anyio.run(go).is_error
    assert [p.name for p in logs.glob("*.jsonl")] == [f"{safe_user(getpass.getuser())}.jsonl"]
    assert not (tmp_path / "log.jsonl").exists()


@pytest.mark.slow
def test_module_run_serves_http(tmp_path):
    """``python -m sjc_mcp.server --transport streamable-http`` is the same server as ``sjc-mcp``."""
    port = free_port()
    p = subprocess.Popen(
        [sys.executable, "-m", "sjc_mcp.server", "--transport", "streamable-http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(tmp_path, SJC_MCP_TOKEN=TOKEN),
    )
    try:
        assert wait_port(port, 30)

        async def go(s: ClientSession):
            return await s.list_tools()

        tools = anyio.run(lambda: _http_session(f"http://127.0.0.1:{port}/mcp", go))
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=15) == 130
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    assert len(tools.tools) == 4
    assert b"Traceback" not in p.stderr.read()


def test_safe_user_names():
    from sjc_mcp.server.users import safe_user

    assert safe_user("alice") == "alice"
    assert safe_user("Bob.Smith-2") == "Bob.Smith-2"
    assert safe_user("../../etc/passwd") == "_.._etc_passwd"
    assert safe_user(".hidden") == "hidden"
    assert safe_user("") == safe_user(None) == safe_user("...") == "anonymous"
    assert safe_user("é user/x") == "__user_x"
    assert len(safe_user("x" * 500)) == 64


def test_user_ids_one_per_token_and_per_name_as_given():
    """A remote caller's log name: the name made safe, a dash, 12 hex digits of a hash of the token that
    names the user, else of the name as the client sent it; the same input the same name every time."""
    from sjc_mcp.server.users import is_user_id, user_id

    a, b = b"first-token-0123456789", b"second-token-0123456789"
    assert user_id("alice", token=a) == user_id("alice", token=a) != user_id("alice", token=b)
    assert user_id("alice", token=a).startswith("alice-") and is_user_id(user_id("alice", token=a))
    # names that clean up alike, from the header: apart
    names = ["team/carol", "team_carol", ".dave", "dave", "x" * 64 + "a", "x" * 64 + "b", "", "anonymous"]
    ids = [user_id(n, sent=n.encode()) for n in names]
    assert len(set(ids)) == len(names) and all(is_user_id(i) for i in ids)
    assert ids[0].startswith("team_carol-") and ids[6].startswith("anonymous-")
    assert user_id(None) == user_id("", sent=b"") and len(user_id("x" * 500, sent=b"x" * 500)) == 64 + 13
    # a token's log is never a header name's, even when the bytes are the same
    assert user_id("alice", token=b"alice") != user_id("alice", sent=b"alice")
    assert not is_user_id("alice") and not is_user_id("../a-0123456789ab") and not is_user_id("a-0123456789AB")


# --- https ----------------------------------------------------------------------------------------------


def _certificate(tmp_path, name: str = "server"):
    """A certificate for 127.0.0.1 signed by a throw-away CA, made by openssl: (CA certificate, server
    certificate, server key). A CA, not a self-signed server certificate: rustls clients (Codex) refuse a
    CA certificate used as the server's own."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificate to serve https with")
    d = tmp_path / f"tls-{name}"
    d.mkdir()
    ca, ca_key, cert, key, csr, ext = (d / n for n in ("ca.crt", "ca.key", "server.crt", "server.key", "csr", "ext"))
    ext.write_text(
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
    )

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    new_key = ("-newkey", "rsa:2048", "-nodes", "-days", "2")
    openssl("req", "-x509", *new_key, "-subj", f"/CN=sjc test CA {name}", "-keyout", str(ca_key), "-out", str(ca))
    openssl("req", *new_key, "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    signed_by_ca = ("-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-days", "2")
    openssl("x509", "-req", "-in", str(csr), *signed_by_ca, "-extfile", str(ext), "-out", str(cert))
    return ca, cert, key


@pytest.mark.slow
def test_https_with_a_certificate_and_key(tmp_path):
    """With --tls-cert and --tls-key the team server speaks only https: the SDK's client that trusts the
    certificate is served; plain http and a client that does not trust it get nothing."""
    ca, cert, key = _certificate(tmp_path)

    async def go(s: ClientSession):
        return await s.list_tools(), await s.call_tool("judge_summary", {"summary": SUMMARY})

    init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with http_server(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as (_, url, err):
        https = url.replace("http://", "https://")
        trust = ssl.create_default_context(cafile=str(ca))
        tools, judged = anyio.run(lambda: _http_session(https, go, trust=trust))
        with pytest.raises(httpx.HTTPError):
            httpx.post(url, json=init, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.post(https, json=init, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        err.seek(0)
        banner = err.read().decode()
    assert "judge_summary" in {t.name for t in tools.tools}
    assert not judged.is_error and judged.structured_content["entries"]
    assert f"at {https} (a bearer token required)" in banner and "no TLS" not in banner


@pytest.mark.slow
def test_a_key_that_is_not_the_certificates_refuses_to_start(tmp_path):
    _, cert, _ = _certificate(tmp_path, "one")
    _, _, other_key = _certificate(tmp_path, "two")
    r = subprocess.run(
        [sjc_exe("sjc-mcp"), "--transport", "streamable-http", "--tls-cert", str(cert), "--tls-key", str(other_key)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path, SJC_MCP_TOKEN=TOKEN),
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "cannot serve with them" in r.stderr and r.stderr.startswith("sjc-mcp: --tls-cert ")


@pytest.mark.slow
@pytest.mark.parametrize("tls", [False, True])
def test_beyond_loopback_without_tls_it_says_so(tmp_path, tls):
    """Listening on every address (reached here through loopback): without TLS the banner warns that tokens
    and summaries cross the network in clear; with it, it does not."""
    args = ["--host", "0.0.0.0"]
    if tls:
        _, cert, key = _certificate(tmp_path)
        args += ["--tls-cert", str(cert), "--tls-key", str(key)]
    with http_server(tmp_path, *args) as (_, _, err):  # listening: the banner is written before
        err.seek(0)
        banner = err.read().decode()
    assert ("https://0.0.0.0:" if tls else "http://0.0.0.0:") in banner
    assert ("no TLS" in banner) is not tls
