"""Transcript readers: every real fixture in ../shared, and small hand-written transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts import boundary_count, claude_code, detect, read_boundary
from tests.conftest import FIXTURES

CC_FIXTURES = sorted((FIXTURES / "claude-code").glob("*.jsonl")) if (FIXTURES / "claude-code").is_dir() else []
CODEX_FIXTURES = sorted((FIXTURES / "codex").glob("*.jsonl")) if (FIXTURES / "codex").is_dir() else []


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def cc_record(uuid, parent, kind, content, **extra):
    rec = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "S",
        "type": kind,
        "timestamp": extra.pop("ts", "t"),
        "message": {"role": kind, "content": content},
    }
    rec.update(extra)
    return rec


def small_cc(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "s.jsonl",
        [
            {"type": "file-history-snapshot", "messageId": "x"},
            cc_record("u1", None, "user", "please fix the flaky test in api/", ts="2026-01-01T00:00:01Z"),
            cc_record("u2", "u1", "user", "<command-name>/model</command-name>", ts="2026-01-01T00:00:02Z"),
            cc_record("a1", "u2", "assistant", [{"type": "text", "text": "I will run the tests."}]),
            cc_record(
                "a2",
                "a1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
            ),
            cc_record(
                "r1",
                "a2",
                "user",
                [{"type": "tool_result", "tool_use_id": "t1", "content": "3 failed, 41 passed"}],
                toolUseResult={"stdout": "3 failed, 41 passed"},
            ),
            # a rewind: b1 branches off a1 and is abandoned
            cc_record("b1", "a1", "assistant", [{"type": "text", "text": "ABANDONED BRANCH"}]),
            cc_record(
                "a3",
                "r1",
                "assistant",
                [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "x.py"}}],
            ),
            cc_record(
                "r2",
                "a3",
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "is_error": True,
                        "content": [{"type": "text", "text": "File does not exist."}],
                    }
                ],
            ),
            cc_record("m1", "r2", "user", "<system-reminder>ignore</system-reminder>", isMeta=True),
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": "2026-01-01T00:00:03Z",
                "content": "also check the lint",
            },
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": "2026-01-01T00:00:04Z",
                "content": "/compact",
            },
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "B0",
                "parentUuid": None,
                "logicalParentUuid": "m1",
                "sessionId": "S",
                "timestamp": "2026-01-01T00:01:00Z",
                "compactMetadata": {"trigger": "auto"},
            },
            cc_record(
                "S0",
                "B0",
                "user",
                "This session is being continued from a previous conversation.\n\nSummary:\n"
                "1. Primary Request and Intent:\n   - fix the flaky test\n",
                isCompactSummary=True,
            ),
            cc_record("u3", "S0", "user", "now push it", ts="2026-01-01T00:02:00Z"),
            cc_record(
                "a4",
                "u3",
                "assistant",
                [{"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "git push"}}],
            ),
            cc_record(
                "r3", "a4", "user", [{"type": "tool_result", "tool_use_id": "t3", "content": "Everything up-to-date"}]
            ),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "B1",
                "parentUuid": None,
                "logicalParentUuid": "r3",
                "sessionId": "S",
                "timestamp": "2026-01-01T00:03:00Z",
            },
            cc_record(
                "S1",
                "B1",
                "user",
                "This session is being continued...\n\nSummary:\n1. Primary Request and Intent:\n   - push\n",
                isCompactSummary=True,
            ),
        ],
    )


def test_claude_code_small_transcript(tmp_path):
    path = small_cc(tmp_path)
    assert detect(path) == "claude-code"
    assert boundary_count(path) == 2
    b0 = read_boundary(path, 0)
    roles = [(i.role, i.content[:20]) for i in b0.span]
    assert ("user", "please fix the flaky") in roles
    assert all("ABANDONED" not in i.content for i in b0.span)  # the rewound branch is not in the chain
    assert all("<command-name>" not in i.content and "system-reminder" not in i.content for i in b0.span)
    assert ("user", "also check the lint") in roles  # typed while the agent worked
    assert all(i.content != "/compact" for i in b0.span)
    outs = [i for i in b0.span if i.role == "tool_output"]
    assert outs[0].name == "Bash" and outs[0].content == "3 failed, 41 passed" and not outs[0].is_error
    assert outs[1].is_error and outs[1].content == "File does not exist."
    assert b0.previous_summary is None and "fix the flaky test" in b0.summary
    src = b0.sources()
    assert any(s.kind == "tool_output" and s.call and "pytest -q" in s.call for s in src)
    b1 = read_boundary(path)  # newest by default
    assert b1.index == 1 and "fix the flaky test" in (b1.previous_summary or "")
    assert [i.content for i in b1.span if i.role == "user"] == ["now push it"]
    with pytest.raises(TranscriptError, match="boundary 5 does not exist"):
        read_boundary(path, 5)


def test_half_written_last_line_and_spilled_results(tmp_path):
    path = small_cc(tmp_path)
    spill = tmp_path / "s" / "tool-results"
    spill.mkdir(parents=True)
    (spill / "big.txt").write_text("the full 40,000 line output")
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[5]["message"]["content"][0]["content"] = f"Output too large; saved to {spill / 'big.txt'}"
    text = "".join(json.dumps(r) + "\n" for r in recs) + '{"type": "assistant", "uuid": "zz", "mess'
    path.write_text(text)
    b0 = read_boundary(path, 0)
    assert any("the full 40,000 line output" in i.content for i in b0.span if i.role == "tool_output")


def test_open_span_after_last_boundary(tmp_path):
    path = small_cc(tmp_path)
    with path.open("a") as fh:
        fh.write(json.dumps(cc_record("u9", "S1", "user", "run the benchmarks")) + "\n")
    span = claude_code.read_open_span(path)
    assert [i.content for i in span.span] == ["run the benchmarks"]
    assert "push" in (span.previous_summary or "")


@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
@pytest.mark.parametrize("path", CC_FIXTURES, ids=lambda p: p.name[:20])
def test_every_real_claude_code_fixture(path):
    n = boundary_count(path)
    assert n >= 1
    for i in range(n):
        b = read_boundary(path, i)
        assert b.summary.startswith("This session is being continued")
        assert b.span, "a compaction with an empty span"
        calls = {it.call_id for it in b.span if it.role == "tool_call"}
        outs = [it for it in b.span if it.role == "tool_output" and it.call_id]
        # files that start mid-session can hold an output whose call came before the first record
        assert outs and sum(o.call_id in calls for o in outs) >= 0.5 * len(outs)
        assert (b.previous_summary is not None) == (i > 0)


@pytest.mark.skipif(not CODEX_FIXTURES, reason="../shared/fixtures is absent: no real Codex rollouts")
@pytest.mark.parametrize("path", CODEX_FIXTURES, ids=lambda p: p.name[:30])
def test_every_codex_fixture(path):
    assert detect(path) == "codex"
    n = boundary_count(path)
    if n == 0:
        with pytest.raises(TranscriptError, match="no compaction"):
            read_boundary(path)
        return
    b = read_boundary(path)
    assert b.summary and b.span
    assert any(s.kind == "tool_output" for s in b.sources())


def test_codex_outputs_and_encrypted_compaction(tmp_path):
    def line(t, payload):
        return {"timestamp": "t", "type": t, "payload": payload}

    path = _write(
        tmp_path / "rollout.jsonl",
        [
            line("session_meta", {"id": "sess-1"}),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}],
                },
            ),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            ),
            line(
                "response_item",
                {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c1"},
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": json.dumps({"output": "a.py\n", "metadata": {"exit_code": 2}}),
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": "c2",
                    "output": [{"type": "input_text", "text": "list output"}],
                },
            ),
            line("response_item", {"type": "local_shell_call", "call_id": "c3", "action": {"command": ["pwd"]}}),
            line(
                "compacted",
                {
                    "message": "Another language model started to solve this problem...\n- Fixed a.py",
                    "replacement_history": [],
                },
            ),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go on"}]},
            ),
            line("compacted", {"message": ""}),
        ],
    )
    b0 = read_boundary(path, 0)
    outs = [i for i in b0.span if i.role == "tool_output"]
    assert outs[0].content == "a.py\n" and outs[0].is_error and outs[0].name == "shell"
    assert outs[1].content == "list output"
    assert [i.content for i in b0.span if i.role == "user"] == ["fix it"]
    b1 = read_boundary(path)
    assert b1.note and "encrypted" in b1.note and b1.previous_summary.endswith("Fixed a.py")


def test_gemini_and_generic(tmp_path):
    g = _write(
        tmp_path / "session-1.jsonl",
        [
            {"sessionId": "g1", "type": "user", "content": "make load idempotent"},
            {
                "type": "gemini",
                "content": "Reading the file.",
                "toolCalls": [
                    {
                        "id": "k1",
                        "name": "read_file",
                        "args": {"path": "etl/load.py"},
                        "result": [{"functionResponse": {"response": {"output": "def write_partition(): ..."}}}],
                    }
                ],
            },
            {
                "type": "user",
                "content": "<state_snapshot>\n<overall_goal>\n- idempotent load\n</overall_goal>\n</state_snapshot>",
            },
        ],
    )
    assert detect(g) == "gemini"
    b = read_boundary(g)
    assert "<state_snapshot>" in b.summary
    assert [i.role for i in b.span] == ["user", "assistant", "tool_call", "tool_output"]
    assert "write_partition" in b.span[-1].content
    generic = _write(
        tmp_path / "g.jsonl",
        [
            {"role": "user", "content": "hello"},
            {"role": "tool", "name": "Bash", "content": "ok"},
            {"type": "compaction", "summary": "## Decisions\n- x", "firstKeptEntryId": "e1", "tokensBefore": 5},
        ],
    )
    assert detect(generic) == "generic"
    assert read_boundary(generic).summary == "## Decisions\n- x"


def test_unreadable_transcripts(tmp_path):
    with pytest.raises(TranscriptError, match="not found"):
        read_boundary(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    with pytest.raises(TranscriptError):
        read_boundary(bad)
