"""The MCP server, driven as a client would: spawn ``sjc-mcp`` and talk to it over stdio (the SDK's client,
or the exact lines the real hosts sent)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import ROOT, sjc_exe

EX = ROOT / "examples"


def _params(tmp_path, **env) -> StdioServerParameters:
    full = dict(os.environ)
    full.update({"SJC_DECISION_LOG": str(tmp_path / "log.jsonl"), **env})
    return StdioServerParameters(command=sjc_exe("sjc-mcp"), args=[], env=full)


async def _session(tmp_path, fn, **env):
    async with stdio_client(_params(tmp_path, **env)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return await fn(s)


def _evidence():
    ev = [{"kind": "tool_output", "name": p.stem, "content": p.read_text()} for p in sorted((EX / "outputs").glob("*"))]
    ev.append(
        {
            "kind": "user_message",
            "content": "test_parse_duration is failing on main, can you fix it? "
            "Don't change the signature of parse_duration.",
        }
    )
    return ev


@pytest.mark.slow
def test_list_and_call_both_tools(tmp_path):
    summary = (EX / "summary.md").read_text()

    async def go(s: ClientSession):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert {"judge_summary", "prune_summary"} <= set(tools)
        assert "summary" in tools["prune_summary"].input_schema["properties"]
        j = await s.call_tool("judge_summary", {"summary": summary, "evidence": _evidence()})
        p = await s.call_tool("prune_summary", {"summary": summary, "evidence": _evidence()})
        return j, p

    j, p = anyio.run(lambda: _session(tmp_path, go))
    assert not j.is_error and not p.is_error
    entries = j.structured_content["entries"]
    assert any(e["decision"] == "prune" for e in entries)
    # every decision explains itself: a kept entry names its source, a pruned one why none supports it
    assert all(e["reason"] for e in entries if e["decision"] != "unjudged")
    assert all(e["reason"].startswith(("no source", "contradicted")) for e in entries if e["decision"] == "prune")
    out = p.structured_content
    assert "Publish version 2.0" not in out["pruned_summary"] and "48 passed" in out["pruned_summary"]
    assert out["removed"] == sum(e["decision"] == "prune" for e in out["entries"])
    assert (tmp_path / "log.jsonl").read_text().count("\n") == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"summary": "x" * 1_000_001}, "larger than"),
        ({"summary": "- a", "evidence": [{"kind": "shell", "content": "x"}]}, "kind"),
        ({"summary": "- a", "host": "vim"}, "unknown host"),
        ({"summary": "- a", "threshold": 7}, "threshold"),
        ({}, "summary"),
    ],
)
@pytest.mark.slow
def test_bad_input_is_a_tool_error(tmp_path, args, needle):
    async def go(s: ClientSession):
        return await s.call_tool("prune_summary", args)

    r = anyio.run(lambda: _session(tmp_path, go))
    assert r.is_error
    assert needle in r.content[0].text


@pytest.mark.slow
def test_kill_switch_through_the_server(tmp_path):
    summary = (EX / "summary.md").read_text()

    async def go(s: ClientSession):
        return await s.call_tool("prune_summary", {"summary": summary, "evidence": _evidence()})

    r = anyio.run(lambda: _session(tmp_path, go, SJC_DISABLE="1"))
    assert r.structured_content["pruned_summary"] == summary
    assert r.structured_content["removed"] == 0


@pytest.mark.slow
def test_transcript_under_allowed_roots_and_refused_outside(tmp_path):
    from tests.hosts.test_hosts import small_cc

    inside = tmp_path / "projects"
    inside.mkdir()
    path = small_cc(inside)
    (tmp_path / "elsewhere").mkdir()
    outside = small_cc(tmp_path / "elsewhere")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'allowed_roots = ["{inside}"]\n')

    async def go(s: ClientSession):
        ok = await s.call_tool("judge_summary", {"transcript_path": str(path), "boundary": 0})
        newest = await s.call_tool("prune_summary", {"transcript_path": str(path)})
        refused = await s.call_tool("judge_summary", {"transcript_path": str(outside)})
        missing = await s.call_tool("judge_summary", {"transcript_path": str(inside / "none.jsonl")})
        return ok, newest, refused, missing

    ok, newest, refused, missing = anyio.run(lambda: _session(tmp_path, go, SJC_CONFIG=str(cfg)))
    assert not ok.is_error and ok.structured_content["entries"][0]["text"].strip() == "- fix the flaky test"
    assert not newest.is_error and newest.structured_content["chars_before"] == len(
        "This session is being continued...\n\nSummary:\n1. Primary Request and Intent:\n   - push\n"
    )
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text
    assert missing.is_error and "not found" in missing.content[0].text


# --- start-up: the front answers the handshake, the SDK takes over at the first other request ----------

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.332",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
LISTEN_ALL = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
# What the real Claude Code 2.1.332 sent to sjc-mcp in `claude -p` (observed, offline, scripted model): the
# 2026-07-28 protocol, no initialize; a server/discover probe, subscriptions/listen (left open), discover
# again, prompts/list, resources/list, tools/list; then, when the model called the tool, tools/call with
# the envelope plus "claudecode/toolUseId" and "progressToken" in _meta. The four sjc tools were named in
# the model's first request (the deferred-tool list) once the server answered in ~40 ms.
CLAUDE_CODE_OPENING = [
    {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": {"_meta": ENVELOPE}},
    {
        "jsonrpc": "2.0",
        "id": "listen:0",
        "method": "subscriptions/listen",
        "params": {"_meta": ENVELOPE, "notifications": LISTEN_ALL},
    },
    {"method": "server/discover", "jsonrpc": "2.0", "id": 0, "params": {"_meta": ENVELOPE}},
    {"method": "prompts/list", "jsonrpc": "2.0", "id": 1, "params": {"_meta": ENVELOPE}},
    {"method": "resources/list", "jsonrpc": "2.0", "id": 2, "params": {"_meta": ENVELOPE}},
    {"method": "tools/list", "jsonrpc": "2.0", "id": 3, "params": {"_meta": ENVELOPE}},
]
CLAUDE_CODE_CALL = {
    "method": "tools/call",
    "params": {
        "name": "judge_summary",
        "arguments": {"summary": "- the build passed: 48 passed\n- publish version 2.0 next"},
        "_meta": {**ENVELOPE, "claudecode/toolUseId": "toolu_01", "progressToken": "p1"},
    },
    "jsonrpc": "2.0",
    "id": 4,
}
# What the real Codex 0.171.0 sent (`codex exec`, [mcp_servers.sjc]): the initialize handshake at 2025-06-18,
# then tools/list with a progress token; tools/call carries its ids in _meta.
CODEX_OPENING = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"progressToken": 0}}},
]
CODEX_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {
        "_meta": {"callId": "call_0003", "threadId": "t-1", "sessionId": "s-1"},
        "name": "prune_summary",
        "arguments": {"summary": "- the build passed: 48 passed\n- publish version 2.0 next"},
    },
}
# The server as the SDK alone runs it: the reference the front must match byte for byte.
SDK_ONLY = [sys.executable, "-c", "from sjc_mcp.server.tools import create_server; create_server().run('stdio')"]


def _init(version, rid=1):
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def _talk(cmd, msgs, env, stderr=None):
    """Send each message, waiting for a request's answer (a listen's acknowledgement) before the next; then
    close stdin and read to the end. Every line the server wrote, as bytes."""
    p = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr or subprocess.DEVNULL, env=env
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(
        target=lambda: [*map(lines.put, iter(p.stdout.readline, b"")), lines.put(None)], daemon=True
    ).start()
    out = []
    try:
        for m in msgs:
            p.stdin.write((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n")
            p.stdin.flush()
            if isinstance(m, dict) and "id" in m and "method" in m:
                while True:
                    line = lines.get(timeout=60)
                    assert line is not None, f"the server ended without answering {m}"
                    out.append(line)
                    got = json.loads(line)
                    sub = (got.get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
                    if got.get("id") == m["id"] or sub == m["id"]:
                        break
        p.stdin.close()
        while (line := lines.get(timeout=60)) is not None:
            out.append(line)
        p.wait(timeout=60)
    finally:
        p.kill()
        p.wait()
    return out


def _talk_importtime(code, msgs, env, tmp_path):
    """``_talk`` to ``python -X importtime -c code``: the lines written, and the top-level packages imported."""
    err = tmp_path / "importtime.txt"
    with err.open("wb") as fh:
        out = _talk([sys.executable, "-X", "importtime", "-c", code], msgs, env, stderr=fh)
    lines = err.read_text().splitlines()
    return out, {ln.split("|")[-1].strip().split(".")[0] for ln in lines if ln.startswith("import time:")}


SEQUENCES = {
    "claude-code": [*CLAUDE_CODE_OPENING, CLAUDE_CODE_CALL, {**CLAUDE_CODE_OPENING[-1], "id": 5}],
    "claude-code-no-call": CLAUDE_CODE_OPENING,
    "codex": [*CODEX_OPENING, CODEX_CALL, {"jsonrpc": "2.0", "id": 3, "method": "ping"}],
    "every-handshake-version": [
        _init("2024-11-05", "a"),
        {"jsonrpc": "2.0", "id": 2, "method": "resources/templates/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {}},
        _init("2025-03-26", 4),  # a second initialize: the SDK's to answer
    ],
    "unknown-version": [_init("1999-01-01"), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}],
    "modern-version-in-initialize": [_init("2026-07-28"), {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}],
    "list-before-initialize": [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, _init("2025-06-18", 2)],
    "not-json-first": [b"not json", _init("2025-11-25"), {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}],
    "bad-initialize": [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ],
    "list-with-cursor": [
        _init("2025-06-18"),
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}},
    ],
    "unsupported-envelope-version": [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
        }
    ],
    "listen-some-then-call": [
        {
            "jsonrpc": "2.0",
            "id": "L",
            "method": "subscriptions/listen",
            "params": {"_meta": ENVELOPE, "notifications": {"toolsListChanged": True, "promptsListChanged": False}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "resources/templates/list", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": _init("2025-06-18")["params"]},
    ],
    "legacy-request-on-modern": [
        CLAUDE_CODE_OPENING[0],
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_the_front_answers_byte_for_byte_as_the_sdk(tmp_path, name):
    """Every line, in both protocol eras, before and after the hand-over, equals what the SDK alone writes."""
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    with ThreadPoolExecutor(2) as pool:
        front = pool.submit(_talk, [sjc_exe("sjc-mcp")], SEQUENCES[name], env)
        sdk = pool.submit(_talk, SDK_ONLY, SEQUENCES[name], env)
        got, want = front.result(), sdk.result()
    assert want, "the SDK wrote nothing: the sequence tests nothing"
    assert got == want


def test_handshake_file_is_what_mcpserver_answers():
    from sjc_mcp.server import handshake as server_handshake

    with open(server_handshake.HANDSHAKE_FILE, encoding="utf-8") as fh:
        shipped = json.load(fh)
    assert shipped == server_handshake.generate(), (
        "sjc_mcp/data/mcp_handshake.json is out of date: run python -m sjc_mcp.server.handshake --write"
    )
    assert shipped["generated_with"] == server_handshake.sdk_versions()


@pytest.mark.slow
@pytest.mark.parametrize("opening", ["claude-code", "codex"])
def test_the_handshake_imports_no_sdk(tmp_path, opening):
    """Hosts get their answers before the MCP SDK (or pydantic) is imported; the first tool call imports it."""
    msgs = CLAUDE_CODE_OPENING if opening == "claude-code" else CODEX_OPENING
    call = CLAUDE_CODE_CALL if opening == "claude-code" else CODEX_CALL
    code = "import sys; from sjc_mcp.server import main; sys.exit(main())"
    # without the preload that follows the handshake (the next test), what the handshake itself imports
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"), SJC_MCP_PRELOAD="0")
    out, handshake = _talk_importtime(code, msgs, env, tmp_path)
    assert any("tools" in (json.loads(a).get("result") or {}) for a in out)
    assert not handshake & {"mcp", "mcp_types", "pydantic", "anyio", "httpx", "starlette"}, handshake
    # the control: the same run plus a tool call imports the SDK, and the call is answered
    called, with_call = _talk_importtime(code, [*msgs, call], env, tmp_path)
    assert {"mcp", "pydantic"} <= with_call
    assert any(json.loads(a).get("id") == call["id"] and "content" in json.loads(a).get("result", {}) for a in called)


@pytest.mark.slow
@pytest.mark.parametrize("opening", ["claude-code", "codex"])
def test_after_the_handshake_the_sdk_loads_before_any_tool_call(tmp_path, opening):
    """Once the handshake is answered, the SDK, the tools and the offline judge are imported in the
    background, so the first tool call does not wait for them; a client that leaves then still sees the
    server end cleanly (the imports finished, not cut at exit)."""
    msgs = CLAUDE_CODE_OPENING if opening == "claude-code" else CODEX_OPENING
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    env.pop("SJC_MCP_PRELOAD", None)
    code = "import sys; from sjc_mcp.server import main; sys.exit(main())"
    out, imported = _talk_importtime(code, msgs, env, tmp_path)
    assert any("tools" in (json.loads(a).get("result") or {}) for a in out)
    assert {"mcp", "pydantic", "anyio"} <= imported
    # what the tools module and the judge import: their own imports ran to the end
    lines = (tmp_path / "importtime.txt").read_text()
    names = {ln.split("|")[-1].strip() for ln in lines.splitlines() if ln.startswith("import time:")}
    assert {"mcp.server.mcpserver", "sjc_mcp.server.http", "sjc_mcp.judges._signals_entry"} <= names
    assert "Traceback" not in lines and "Fatal Python error" not in lines


def _first_answer_ms(cmd, env, runs=3):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        p.stdin.write((json.dumps(CLAUDE_CODE_OPENING[0]) + "\n").encode())
        p.stdin.flush()
        assert p.stdout.readline()
        times.append((time.perf_counter() - t0) * 1000)
        p.kill()
        p.wait()
    return sorted(times)[runs // 2]


@pytest.mark.slow
def test_start_up_is_a_fraction_of_the_sdks(tmp_path):
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    front = _first_answer_ms([sjc_exe("sjc-mcp")], env)
    sdk = _first_answer_ms(SDK_ONLY, env)
    assert front < sdk / 3, (front, sdk)


@pytest.mark.slow
def test_other_sdk_versions_answer_from_the_user_cache(tmp_path):
    """With an SDK or pydantic other than the packaged answers were made with, the first start asks the SDK
    and keeps its answers in the user cache; the next start answers from there without importing the SDK."""
    stale = json.loads((ROOT / "sjc_mcp" / "data" / "mcp_handshake.json").read_text())
    stale["generated_with"] = {"mcp": "0.0.1", "pydantic": "0.0.1"}
    stale["answers"]["tools/list"] = []  # would answer nothing if it were used
    packaged = tmp_path / "mcp_handshake.json"
    packaged.write_text(json.dumps(stale))
    cache = tmp_path / "cache"
    code = (
        f"import sys; from sjc_mcp.server import front as f, handshake as h; h.HANDSHAKE_FILE = {str(packaged)!r}; "
        "sys.exit(f.main())"
    )
    # without the preload after the handshake, which imports the SDK whatever answered the handshake
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), SJC_DECISION_LOG=str(tmp_path / "log.jsonl"), SJC_MCP_PRELOAD="0")
    want = _talk(SDK_ONLY, CODEX_OPENING, env)
    first, imported_first = _talk_importtime(code, CODEX_OPENING, env, tmp_path)
    second, imported_second = _talk_importtime(code, CODEX_OPENING, env, tmp_path)
    assert first == second == want
    assert "mcp" in imported_first and "mcp" not in imported_second
    kept = list((cache / "sjc").glob("mcp-handshake-*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["generated_with"] != stale["generated_with"]


@pytest.mark.slow
def test_a_bad_config_is_a_tool_error_not_a_dead_server(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("threshold = 'high'\n")

    async def go(s: ClientSession):
        return await s.call_tool("prune_summary", {"summary": "- a"})

    r = anyio.run(lambda: _session(tmp_path, go, SJC_CONFIG=str(cfg)))
    assert r.is_error and "configuration" in r.content[0].text and "threshold" in r.content[0].text


@pytest.mark.slow
def test_the_sdk_client_in_the_2026_protocol(tmp_path):
    """The SDK's own client, in the per-request-envelope protocol Claude Code speaks: discover, list, call."""
    summary = (EX / "summary.md").read_text()

    async def go():
        async with stdio_client(_params(tmp_path)) as (read, write), ClientSession(read, write) as s:
            found = await s.discover()
            tools = await s.list_tools()
            called = await s.call_tool("prune_summary", {"summary": summary, "evidence": _evidence()})
            return found, tools, called

    found, tools, called = anyio.run(go)
    assert found.supported_versions == ["2026-07-28"] and "Source-Judged" in (found.instructions or "")
    assert {t.name for t in tools.tools} == {
        "judge_summary",
        "prune_summary",
        "judge_tool_results",
        "prune_tool_results",
    }
    assert not called.is_error and "Publish version 2.0" not in called.structured_content["pruned_summary"]


@pytest.mark.slow
def test_a_damaged_handshake_file_falls_back_to_the_sdk(tmp_path):
    damaged = json.loads((ROOT / "sjc_mcp" / "data" / "mcp_handshake.json").read_text())
    del damaged["answers"]
    packaged = tmp_path / "mcp_handshake.json"
    packaged.write_text(json.dumps(damaged))
    code = (
        f"import sys; from sjc_mcp.server import front as f, handshake as h; h.HANDSHAKE_FILE = {str(packaged)!r}; "
        "sys.exit(f.main())"
    )
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    assert _talk([sys.executable, "-c", code], CLAUDE_CODE_OPENING, env) == _talk(SDK_ONLY, CLAUDE_CODE_OPENING, env)
