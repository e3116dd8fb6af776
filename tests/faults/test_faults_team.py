"""Fault suite, the team server (``sjc-mcp --transport streamable-http``), run as a team runs it: real
processes, the MCP SDK's streamable-HTTP client, raw sockets for clients that go quiet.

- one decision log per token, whatever the user names: names that clean up alike (``team/carol`` and
  ``team_carol``, ``.dave`` and ``dave``, names equal in their first 64 characters) and one user given two
  tokens never share a log, and each record names its own log's user; header-named users likewise;
- a token shorter than 16 bytes is refused off loopback, from the environment as from ``--tokens``;
- a connection that keeps the server waiting (silent, headers dripped or never finished, a body stopped
  halfway, an idle keep-alive) is closed after ``--idle-timeout``; a slow answer and an idle session are not.
"""

from __future__ import annotations

import json
import re
import select
import socket
import subprocess
import time

import anyio
import pytest
from mcp import ClientSession

from tests.conftest import sjc_exe
from tests.fakes import FakeAPI
from tests.server.test_server_http import SUMMARY, TOKEN, _env, _http_session, http_server

pytestmark = pytest.mark.slow

LOG_NAME = re.compile(r"(?P<user>[A-Za-z0-9_-][A-Za-z0-9._-]{0,63})-[0-9a-f]{12}\.jsonl")


def _judge(url: str, headers: dict[str, str]):
    async def go(s: ClientSession):
        return await s.call_tool("judge_summary", {"summary": SUMMARY})

    r = anyio.run(lambda: _http_session(url, go, headers))
    assert not r.is_error, r.content
    return r


def _logs(folder) -> dict[str, list[dict]]:
    """Each log in the folder: its name -> its records."""
    return {p.name: [json.loads(x) for x in p.read_text().splitlines()] for p in sorted(folder.glob("*.jsonl"))}


def _verified(path, tmp_path) -> bool:
    r = subprocess.run(
        [sjc_exe("sjc"), "audit", "--log", str(path), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
    )
    return r.returncode == 0 and "chain intact" in r.stdout


# --- one log per token ------------------------------------------------------------------------------------

LONG = "x" * 64
TEAM = [  # (user as written in --tokens, token): every pair alike once cleaned up, and one user twice
    ("team/carol", "carol-slash-token-0123456789"),
    ("team_carol", "carol-under-token-0123456789"),
    (".dave", "dave-dot-token-0123456789ab"),
    ("dave", "dave-plain-token-0123456789"),
    (LONG + "a", "long-a-token-0123456789abcd"),
    (LONG + "b", "long-b-token-0123456789abcd"),
    ("alice", "alice-laptop-token-01234567"),
    ("alice", "alice-desktop-token-0123456"),
]


def test_tokens_whose_users_clean_up_alike_never_share_a_log(tmp_path):
    """Eight tokens of --tokens, their users alike in pairs once cleaned up: eight logs, one record each,
    each named after its user (cleaned up) and recording the log's own name as its user. The same token after
    a restart writes to the same log; each log's chain is intact."""
    logs, tokens = tmp_path / "logs", tmp_path / "tokens"
    tokens.write_text("".join(f"{user} {token}\n" for user, token in TEAM))
    args = ("--log-dir", str(logs), "--tokens", str(tokens))
    with http_server(tmp_path, *args, env=_env(tmp_path)) as (_, url, _err):
        for _user, token in TEAM:
            _judge(url, {"Authorization": f"Bearer {token}", "X-SJC-User": "team_carol"})  # the header is ignored
    first = _logs(logs)
    assert len(first) == len(TEAM), sorted(first)
    expected_users = sorted(["team_carol", "team_carol", "dave", "dave", LONG, LONG, "alice", "alice"])
    named = [LOG_NAME.fullmatch(name) for name in first]
    assert all(named), sorted(first)
    assert sorted(m["user"] for m in named if m) == expected_users
    for name, records in first.items():
        assert [r["user"] for r in records] == [name.removesuffix(".jsonl")]
    with http_server(tmp_path, *args, env=_env(tmp_path)) as (_, url, _err):
        _judge(url, {"Authorization": f"Bearer {TEAM[0][1]}"})
    second = _logs(logs)
    grown = [name for name in second if len(second[name]) == 2]
    assert set(second) == set(first) and len(grown) == 1 and grown[0].startswith("team_carol-")
    assert all(_verified(logs / name, tmp_path) for name in (grown[0], *sorted(first)[:2]))


def test_header_named_users_never_share_a_log(tmp_path):
    """One shared token, users named by X-SJC-User: names that clean up alike, no name, the name
    ``anonymous``, and a name copying another user's log name each get a log of their own."""
    logs = tmp_path / "logs"
    with http_server(tmp_path, "--log-dir", str(logs)) as (_, url, _err):
        for name in ("team/carol", "team_carol", ".dave", "dave", None, "anonymous"):
            _judge(url, {"X-SJC-User": name} if name is not None else {})
        carol = next(n for n in _logs(logs) if n.startswith("team_carol-")).removesuffix(".jsonl")
        _judge(url, {"X-SJC-User": carol})
    found = _logs(logs)
    assert len(found) == 7 and all(len(records) == 1 for records in found.values()), sorted(found)
    named = [LOG_NAME.fullmatch(name) for name in found]
    assert all(named)
    assert sorted(m["user"] for m in named if m) == sorted(
        ["team_carol", "team_carol", "dave", "dave", "anonymous", "anonymous", carol]
    )
    for name, records in found.items():
        assert records[0]["user"] == name.removesuffix(".jsonl")


# --- short tokens off loopback ----------------------------------------------------------------------------


def _start(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sjc_exe("sjc-mcp"), "--transport", "streamable-http", "--port", "9", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(tmp_path, **env),
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--host", "0.0.0.0"), {"SJC_MCP_TOKEN": "Q"}),
        (("--host", "0.0.0.0"), {"SJC_MCP_TOKEN": "0123456789abcde"}),  # 15 bytes
        (("--host", "0.0.0.0"), {"SJC_MCP_TOKEN": "\u00e9" * 7}),  # 7 characters, 14 bytes
        (("--host", "::", "--token-env", "TEAM_TOKEN"), {"TEAM_TOKEN": "short"}),
    ],
)
def test_a_token_shorter_than_16_bytes_is_refused_off_loopback(tmp_path, args, env):
    r = _start(tmp_path, *args, **env)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("sjc-mcp: refusing to serve on ") and "16 bytes" in r.stderr
    assert next(iter(env.values())) not in r.stderr  # the token itself is not printed


def test_a_tokens_file_counts_bytes_too(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("carol " + "\u00e9" * 7 + "\n")
    r = _start(tmp_path, "--tokens", str(tokens))
    assert r.returncode == 2 and "shorter than 16 bytes" in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("token", ["0123456789abcdef", "\u00e9" * 8])
def test_a_token_of_16_bytes_serves_off_loopback(tmp_path, token):
    """Listening on every address (reached through loopback), a 16-byte token is enough, and required."""
    with http_server(tmp_path, "--host", "0.0.0.0", env=_env(tmp_path, SJC_MCP_TOKEN=token)) as (_, url, _err):
        r = _judge(url, {"Authorization": b"Bearer " + token.encode()})  # type: ignore[dict-item] # UTF-8 bytes
    assert r.structured_content["entries"]


def test_a_short_token_on_loopback_still_serves(tmp_path):
    with http_server(tmp_path, env=_env(tmp_path, SJC_MCP_TOKEN="dev")) as (_, url, _err):
        assert _judge(url, {"Authorization": "Bearer dev"}).structured_content["entries"]


# --- connections that keep the server waiting ----------------------------------------------------------------


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _connect(url: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", _port(url)), timeout=10)


def _for(url: str, request: bytes) -> bytes:
    return request.replace(b"Host: HOST", f"Host: 127.0.0.1:{_port(url)}".encode())


def _closed_by_server(sock: socket.socket, within: float = 120) -> tuple[bool, bytes]:
    """Read until the server closes the connection: (closed, what it sent first). ``within`` only keeps a
    server that never closes from hanging the test; it is not what is asserted."""
    sock.settimeout(within)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        return True, got
    except TimeoutError:
        return False, got
    return True, got


def _request(body: bytes, *, length: int | None = None, token: str = TOKEN) -> bytes:
    """A POST to /mcp with its Host header to be filled in (``HOST``: the SDK checks it)."""
    head = (
        "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(body) if length is None else length}\r\n\r\n"
    )
    return head.encode() + body


PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
).encode()


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # connects, says nothing
        b"POST /mcp HTTP/1.1\r\nHost: HOST\r\n",  # headers begun, never ended
        _request(PING[:10], length=len(PING)),  # a body stopped halfway, the token good
        _request(PING[:10], length=len(PING), token="wrong-token-0123456789"),  # answered 401, body stopped
    ],
    ids=["silent", "headers-unfinished", "body-unfinished", "body-unfinished-after-401"],
)
def test_a_client_that_goes_quiet_is_cut(tmp_path, sent):
    with http_server(tmp_path, "--idle-timeout", "1") as (p, url, err), _connect(url) as sock:
        sock.sendall(_for(url, sent))
        closed, answer = _closed_by_server(sock)
        assert p.poll() is None  # the server goes on
        err.seek(0)
        text = err.read().decode()
    assert closed, answer
    assert answer == b"" or answer.startswith(b"HTTP/1.1 401 "), answer
    assert "Traceback" not in text and all(x.startswith("sjc-mcp: ") for x in text.splitlines()), text


def test_headers_dripped_a_byte_at_a_time_are_cut(tmp_path):
    """Bytes keep coming, but the headers never end within the time: the drip does not extend it."""
    with http_server(tmp_path, "--idle-timeout", "1") as (_, url, _err), _connect(url) as sock:
        request = _for(url, _request(PING)).replace(b"Host:", b"X-Pad: " + b"a" * 400 + b"\r\nHost:")
        sent = 0
        try:
            for byte in request:
                readable, _, _ = select.select([sock], [], [], 0.1)
                if readable:
                    break
                sock.sendall(bytes([byte]))
                sent += 1
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed, answer = _closed_by_server(sock)
    assert closed and answer == b"" and sent < len(request), (sent, answer)


def test_an_idle_keep_alive_connection_is_cut(tmp_path):
    """A whole request answered (an initialize), then nothing: the connection is closed after the time."""
    with http_server(tmp_path, "--idle-timeout", "1") as (_, url, _err), _connect(url) as sock:
        sock.sendall(_for(url, _request(INITIALIZE)))
        closed, answer = _closed_by_server(sock)
    assert closed and answer.startswith(b"HTTP/1.1 200 ") and b'"id":1' in answer, answer


def _answers(sock: socket.socket, count: int) -> bytes:
    got = b""
    while got.count(b"HTTP/1.1 ") < count or not got.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_the_idle_time_is_the_one_given(tmp_path):
    """With --idle-timeout 20, a keep-alive connection left idle for 7 s (past uvicorn's own 5 s) still takes
    the next request: the time is the option's."""
    wrong = _request(PING, token="wrong-token-0123456789")  # answered at once, a whole 401 each time
    with http_server(tmp_path, "--idle-timeout", "20") as (_, url, _err), _connect(url) as sock:
        sock.sendall(_for(url, wrong))
        first = _answers(sock, 1)
        time.sleep(7)
        sock.sendall(_for(url, wrong))
        both = first + _answers(sock, 1)
    assert first.startswith(b"HTTP/1.1 401 ") and both.count(b"HTTP/1.1 401 ") == 2, both


def test_a_slow_answer_and_an_idle_session_are_not_cut(tmp_path):
    """With a 1 s idle time: a tool call whose judge takes 3 s is answered (the client waits on the server
    then, not the other way round), and an SDK session left idle past the time (its event stream open) makes
    another call afterwards."""
    api = FakeAPI("chat", model="team-judge-8b")
    api.behaviours = ["slow"]
    cfg = tmp_path / "team.toml"
    cfg.write_text(f'judge = "openai"\n[openai]\nbase_url = "{api.url}"\nmodel = "team-judge-8b"\n')

    async def go(s: ClientSession):
        slow = await s.call_tool("judge_summary", {"summary": SUMMARY})
        await anyio.sleep(2.5)
        later = await s.call_tool("judge_summary", {"summary": SUMMARY})
        return slow, later

    try:
        with http_server(tmp_path, "--idle-timeout", "1", "--config", str(cfg)) as (_, url, _err):
            t0 = time.monotonic()
            slow, later = anyio.run(lambda: _http_session(url, go))
            took = time.monotonic() - t0
    finally:
        api.close()
    assert not slow.is_error and not later.is_error, (slow.content, later.content)
    assert slow.structured_content["judge"]["name"] == "openai"
    assert took > 3  # the slow judge was waited for: the cut would have come after 1 s
    assert len(api.requests) >= 2
