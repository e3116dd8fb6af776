"""The transcript as the real OpenClaw stores it, read by sjc: ``sjc judge --transcript``, the MCP tools'
``transcript_path``, ``sjc replay`` on the state folder.

Facts of OpenClaw 2026.9.6 these tests rely on, each observed in their runs:

- Transcripts are rows of ``$OPENCLAW_STATE_DIR/agents/<agentId>/agent/openclaw-agent.sqlite``, table
  ``transcript_events(session_id, seq, event_json | event_zstd, event_utf8_bytes, navigation_json, …)``;
  ``session_nodes`` maps a session key (``agent:main:main``) to its current session id. A row of at least
  1 KiB whose JSON has no ``\\u`` escape is stored zstd-compressed (``event_zstd``, ``event_json`` NULL)
  when that saves a tenth: here the 31 KB log a ``read`` returned.
- Entries are those of the former JSONL sessions: a ``session`` header, then entries with ``id`` /
  ``parentId`` (``message`` with role ``user``, ``assistant`` (``text`` and ``toolCall {id, name,
  arguments}`` blocks) or ``toolResult {toolCallId, toolName, content, isError}``; ``custom`` state such
  as ``openclaw.cache-ttl``; ``model_change``; ``thinking_level_change``) and ``compaction {summary,
  firstKeptEntryId, tokensBefore, tokensAfter, details: {readFiles, modifiedFiles}, fromHook}``.
- The compaction entry is appended after the messages it leaves in place: the model's context after it
  is the summary plus the entries from ``firstKeptEntryId`` on. The next compaction summarises from the
  previous one's ``firstKeptEntryId`` up to its own (the kept tail is summarised then, not now).
- The stored summary is OpenClaw's, not the model's answer: ``## Latest user request context`` and a
  JSON string, the answer, ``**Turn Context (split turn):**`` with the turn-prefix answer's headings
  demoted to ``###``, ``## Recent turns preserved verbatim`` (``- User:`` / ``- Assistant:`` /
  ``- Tool result (read):`` lines, a tool result's lines following), ``<read-files>`` lists.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import hostcli
import openclaw_fake as F
import pytest
from openclaw_fake import FakeModel, compaction_groups
from openclaw_harness import OpenClaw, zstd_decompress

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOST_ADDED = ("## Latest user request context", "**Turn Context", "## Recent turns preserved verbatim", "<read-files>")


class Run:
    oc: OpenClaw
    groups: list[list[F.Exchange]]
    stored: list[dict[str, Any]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A session straight to the model (no sjc): a large log read, three tool turns, a compaction by hand,
    two more turns, a second compaction, a last turn; one recent turn kept verbatim."""
    oc = OpenClaw(tmp_path_factory.mktemp("openclaw-transcript"))
    out = Run()
    out.oc = oc
    with FakeModel() as fake:
        oc.write_config(oc.config(fake.origin, {"keepRecentTokens": 200, "recentTurnsPreserve": 1}))
        with oc.gateway():
            for prompt in (F.PROMPT_LOG, F.PROMPT_BUILD, F.PROMPT_PORT, F.PROMPT_CHANGELOG):
                oc.turn(prompt)
            assert oc.compact().get("compacted")
            oc.turn(F.PROMPT_TESTS)
            oc.turn(F.PROMPT_BACKOFF)
            assert oc.compact().get("compacted")
            oc.turn(F.PROMPT_AGAIN)
        out.groups = compaction_groups(fake.requests())
    out.stored = oc.compactions()
    assert len(out.stored) == len(out.groups) == 2
    return out


def invented(group: list[F.Exchange]) -> list[str]:
    return [line for e in group for line in e.answer["invented"]]


def supported(group: list[F.Exchange]) -> list[str]:
    return [line for e in group for line in e.answer["supported"]]


def judge(run: Run, *args: str) -> dict[str, Any]:
    r = run.oc.sjc("judge", *args, "--json")
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def test_large_rows_are_stored_compressed(run: Run) -> None:
    with contextlib.closing(sqlite3.connect(f"file:{run.oc.database}?mode=ro", uri=True)) as con:
        rows = con.execute("select event_zstd, event_utf8_bytes from transcript_events where event_zstd is not null")
        decoded = [json.loads(zstd_decompress(z)) for z, _ in rows.fetchall()]
    logs = [e for e in decoded if e.get("message", {}).get("role") == "toolResult" and "req-00007" in json.dumps(e)]
    assert logs, "the log read is not a compressed row"


@pytest.mark.parametrize("index", [0, 1])
def test_judge_transcript_prunes_exactly_the_invented_entries(run: Run, index: int) -> None:
    out = judge(run, "--transcript", str(run.oc.database), "--boundary", str(index))
    group = run.groups[index]
    pruned = [e["text"] for e in out["entries"] if e["decision"] == "prune"]
    kept = [e["text"] for e in out["entries"] if e["decision"] == "keep"]
    # without sjc in the loop, compaction 0 stored its invented entries, and the previous summary is a
    # source for compaction 1: what it restates from there is not asserted either way
    previous = run.stored[index - 1]["summary"].splitlines() if index else []
    assert all(p in invented(group) for p in pruned), pruned
    assert sorted(i for i in invented(group) if i not in previous) == sorted(i for i in pruned if i not in previous)
    assert index or sorted(pruned) == sorted(invented(group))
    assert all(s in kept for s in supported(group)), [s for s in supported(group) if s not in kept]
    texts = "\n".join(e["text"] for e in out["entries"])
    # OpenClaw's own additions are structure, never entries
    assert not any(h in texts for h in HOST_ADDED)
    assert "- User:" not in texts and "- Tool result" not in texts and "</read-files>" not in texts
    assert not any(e["text"].strip() in ("None.", "(none)", "- (none)", "None captured.") for e in out["entries"])


def test_the_newest_compaction_is_the_default(run: Run) -> None:
    newest = judge(run, "--transcript", str(run.oc.database))
    assert newest == judge(run, "--transcript", str(run.oc.database), "--boundary", "1")


def test_evidence_is_the_span_from_the_previous_first_kept_entry(run: Run) -> None:
    """Compaction 1 summarised the entries from compaction 0's firstKeptEntryId up to its own: the tool
    calls and results there (each result read with its call), not those before, nor its kept tail."""
    from sjc_mcp.hosts import read_boundary

    b0 = read_boundary(run.oc.database, 0)
    b1 = read_boundary(run.oc.database, 1)
    assert b0.host == b1.host == "openclaw"
    outputs0 = [s for s in b0.sources() if s.kind == "tool_output"]
    assert any("req-00007 status=503" in s.content and (s.call or "").startswith("read") for s in outputs0)
    outputs1 = [s.content for s in b1.sources() if s.kind == "tool_output"]
    assert "3 passed" in outputs1 and not any("req-00007" in c for c in outputs1)
    assert b1.previous_summary == run.stored[0]["summary"]
    users1 = [s.content for s in b1.sources() if s.kind == "user_message"]
    assert not any(u.endswith(F.PROMPT_BUILD) for u in users1)  # before compaction 0's kept tail
    assert F.PROMPT_BACKOFF in users1  # the split turn's prefix: summarised
    assert [t.content for t in b1.retained] == ["The summary says retry_backoff_ms is 250."]  # its kept tail


def test_an_exported_transcript_reads_the_same(run: Run, tmp_path: Path) -> None:
    """The entries as JSON lines (a legacy session file, or an export of the rows) are OpenClaw's too."""
    export = tmp_path / "session.jsonl"
    export.write_text("".join(json.dumps(e) + "\n" for e in run.oc.transcript()))
    for i in (0, 1):
        a = judge(run, "--transcript", str(export), "--boundary", str(i))
        b = judge(run, "--transcript", str(run.oc.database), "--boundary", str(i))
        assert a["entries"] == b["entries"]


def test_mcp_transcript_path_under_the_default_roots(run: Run) -> None:
    """The state folder (``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``) is one of the default roots."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=hostcli.sjc_bin("sjc-mcp"), args=[], env=run.oc.env)

    async def go() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("prune_summary", {"transcript_path": str(run.oc.database), "boundary": 0})

    res = anyio.run(go)
    assert not res.is_error, res.content
    pruned = res.structured_content["pruned_summary"]
    assert not F.invented_in(pruned)
    assert all(s in pruned for s in supported(run.groups[0]))
    assert pruned.startswith("## Latest user request context\n")  # OpenClaw's own text left as it was


def test_replay_of_the_state_folder(run: Run) -> None:
    r = run.oc.sjc("replay", str(run.oc.state))
    assert r.returncode == 0, r.stderr
    replayed = [d for d in run.oc.decisions() if d.get("op") == "replay"]
    assert len(replayed) == 2
    assert sum(d.get("would_prune", d.get("pruned", 0)) or 0 for d in replayed) >= len(invented(run.groups[0]))
