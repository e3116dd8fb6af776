"""The MCP server, driven as a client would: spawn ``sjc-mcp`` and talk to it over stdio (the SDK's client,
or the exact lines the real hosts sent)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

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


# --- what the real hosts send, answered by the SDK from the first byte ------------------------------------

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


def _talk(cmd, msgs, env, stderr=None):
    """Send each message, waiting for a request's answer (a listen's acknowledgement) before the next; then
    close stdin and read to the end. Every line the server wrote, parsed."""
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
            p.stdin.write(json.dumps(m).encode() + b"\n")
            p.stdin.flush()
            if "id" in m and "method" in m:
                while True:
                    line = lines.get(timeout=60)
                    assert line is not None, f"the server ended without answering {m}"
                    got = json.loads(line)
                    out.append(got)
                    sub = (got.get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
                    if got.get("id") == m["id"] or sub == m["id"]:
                        break
        p.stdin.close()
        while (line := lines.get(timeout=60)) is not None:
            out.append(json.loads(line))
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    return out


def _answer(out, rid):
    return next(m for m in out if m.get("id") == rid and "method" not in m)


@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_the_real_hosts_opening_and_first_call(tmp_path, host):
    """The exact lines Claude Code 2.1.332 (2026-07-28 envelopes, no initialize) and Codex 0.171.0
    (initialize at 2025-06-18) sent: every request answered, the four tools listed, the call judged, and the
    server ends with exit 0 when the host closes stdin."""
    opening, call = (CLAUDE_CODE_OPENING, CLAUDE_CODE_CALL) if host == "claude-code" else (CODEX_OPENING, CODEX_CALL)
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    out = _talk([sjc_exe("sjc-mcp")], [*opening, call], env)
    for m in [*opening, call]:
        if m.get("method") == "subscriptions/listen":  # acknowledged; the stream ends when the host leaves
            assert any(a.get("method") == "notifications/subscriptions/acknowledged" for a in out)
        elif "id" in m:
            assert "result" in _answer(out, m["id"]), _answer(out, m["id"])
    listed = _answer(out, opening[-1]["id"])["result"]["tools"]
    assert {t["name"] for t in listed} == {"judge_summary", "prune_summary", "judge_tool_results", "prune_tool_results"}
    assert all(t["annotations"]["readOnlyHint"] and t["outputSchema"]["type"] == "object" for t in listed)
    result = _answer(out, call["id"])["result"]
    entries = result["structuredContent"]["entries"]
    assert not result.get("isError") and [e["text"] for e in entries] == call["params"]["arguments"]["summary"].split(
        "\n"
    )
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert (tmp_path / "log.jsonl").read_text().count("\n") == 1


def _imported(code, msgs, env, tmp_path):
    """The lines ``python -X importtime -c code`` wrote when sent ``msgs``, and the modules it imported."""
    err = tmp_path / "importtime.txt"
    with err.open("wb") as fh:
        out = _talk([sys.executable, "-X", "importtime", "-c", code], msgs, env, stderr=fh)
    lines = err.read_text().splitlines()
    return out, {ln.split("|")[-1].strip() for ln in lines if ln.startswith("import time:")}


# what only a tool call needs: the pipeline, the judges, the index, transcript readers, numpy
CALL_ONLY = {"sjc_mcp.pipeline", "sjc_mcp.judges", "sjc_mcp.judges.lexical", "sjc_mcp.evidence", "numpy"}


@pytest.mark.slow
def test_the_handshake_imports_the_sdk_and_not_the_pipeline(tmp_path):
    """Up to the tool list the server imports the SDK and the types of its schemas, not what judging
    needs; the first tool call imports that (the control: the same run plus a call)."""
    code = "import sys; from sjc_mcp.server import main; sys.exit(main())"
    env = dict(os.environ, SJC_DECISION_LOG=str(tmp_path / "log.jsonl"))
    out, listed = _imported(code, CODEX_OPENING, env, tmp_path)
    assert "tools" in _answer(out, CODEX_OPENING[-1]["id"])["result"]
    assert {"mcp.server.mcpserver", "pydantic", "sjc_mcp.server.app"} <= listed
    assert not listed & CALL_ONLY, listed & CALL_ONLY
    out, called = _imported(code, [*CODEX_OPENING, CODEX_CALL], env, tmp_path)
    assert "structuredContent" in _answer(out, CODEX_CALL["id"])["result"]
    assert {"sjc_mcp.pipeline", "sjc_mcp.summary"} <= called


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
