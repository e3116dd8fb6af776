"""The MCP server, driven as a client would: spawn ``sjc-mcp`` and talk to it over stdio."""

from __future__ import annotations

import os

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
def test_bad_input_is_a_tool_error(tmp_path, args, needle):
    async def go(s: ClientSession):
        return await s.call_tool("prune_summary", args)

    r = anyio.run(lambda: _session(tmp_path, go))
    assert r.is_error
    assert needle in r.content[0].text


def test_kill_switch_through_the_server(tmp_path):
    summary = (EX / "summary.md").read_text()

    async def go(s: ClientSession):
        return await s.call_tool("prune_summary", {"summary": summary, "evidence": _evidence()})

    r = anyio.run(lambda: _session(tmp_path, go, SJC_DISABLE="1"))
    assert r.structured_content["pruned_summary"] == summary
    assert r.structured_content["removed"] == 0


def test_transcript_under_allowed_roots_and_refused_outside(tmp_path):
    from tests.test_hosts import small_cc

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
