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


# ---- everything the model saw, and nothing it did not -------------------------------------------


def _file_results_between(path: Path, index: int) -> set[str]:
    """tool_use ids answered by a main-conversation record between compaction ``index - 1`` and ``index``
    (file order), counting only calls made in that stretch: what the model was handed in the span."""
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    bounds = [i for i, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
    lo, hi = (bounds[index - 1] if index else -1), bounds[index]
    calls, results = set(), set()
    for r in recs[lo + 1 : hi]:
        if r.get("isSidechain") or r.get("isCompactSummary"):
            continue
        content = (r.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                calls.add(b["id"])
            elif isinstance(b, dict) and b.get("type") == "tool_result":
                results.add(b["tool_use_id"])
    return calls & results


@pytest.mark.slow
@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
def test_every_tool_result_of_parallel_calls_is_found():
    """Claude Code writes parallel calls as a chain of tool_use records whose results each hang off their
    own call (and a second call of one turn may itself branch off): 11 of the 17 real transcripts have
    results off the parent chain. Every result the model was handed must be in the span."""
    with_parallel = 0
    for path in CC_FIXTURES:
        idx = claude_code._index(path)
        for i in range(boundary_count(path)):
            b = read_boundary(path, i)
            outs = {it.call_id for it in b.span if it.role == "tool_output"}
            calls = {it.call_id for it in b.span if it.role == "tool_call"}
            want = _file_results_between(path, i)
            assert want <= outs, f"{path.name} boundary {i}: {len(want - outs)} tool results missing"
            assert want <= calls
            done = [u for u in idx.boundaries if u in idx.summaries]
            on_chain = set(claude_code._chain(idx, done[i]).uuids)
            off = {c for c in want if not any(a in on_chain for a in idx.answers.get(c, ()))}
            with_parallel += bool(off)
            # each answered once: the span holds no result twice
            ids = [it.call_id for it in b.span if it.role == "tool_output" and it.call_id]
            assert len(ids) == len(set(ids))
    assert with_parallel >= 5  # the fixtures do have results off the chain: the check is not vacuous


def _turn(uuid, parent, msg_id, block, **extra):
    rec = cc_record(uuid, parent, "assistant", [block], **extra)
    rec["message"]["id"] = msg_id
    return rec


def _result(uuid, parent, call, text, **extra):
    return cc_record(uuid, parent, "user", [{"type": "tool_result", "tool_use_id": call, "content": text}], **extra)


def _use(call, name="Read", **inp):
    return {"type": "tool_use", "id": call, "name": name, "input": inp}


def test_parallel_calls_subagents_and_rewinds(tmp_path):
    recs = [
        cc_record("u1", None, "user", "compare the two parsers"),
        # one model turn, three parallel reads: uses chain linearly, results hang off their own call
        _turn("a1", "u1", "msg_1", _use("r1", file_path="a.py")),
        _turn("a2", "a1", "msg_1", _use("r2", file_path="b.py")),
        _turn("a3", "a2", "msg_1", _use("r3", file_path="c.py")),
        _result("x1", "a1", "r1", "A_PY_CONTENT"),
        _result("x2", "a2", "r2", "B_PY_CONTENT"),
        _result("x3", "a3", "r3", "C_PY_CONTENT"),
        # two parallel subagents: the second Task call branches off the first, whose result carries the chain
        _turn("a4", "x3", "msg_2", _use("t1", "Task", prompt="survey repo one")),
        _turn("a5", "a4", "msg_2", _use("t2", "Task", prompt="survey repo two")),
        cc_record("s1", None, "user", "survey repo two", isSidechain=True),
        _turn("s2", "s1", "msg_sub", _use("sx", "Bash", command="ls"), isSidechain=True),
        _result("s3", "s2", "sx", "SUBAGENT_INTERNAL_OUTPUT", isSidechain=True),
        _result("x5", "a5", "t2", "REPO_TWO_REPORT"),
        _result("x4", "a4", "t1", "REPO_ONE_REPORT"),
        # a rewind: an abandoned call and its result, off the chain and never seen by the model again
        _turn("b1", "x4", "msg_old", _use("old", "Bash", command="rm -rf build")),
        _result("b2", "b1", "old", "ABANDONED_OUTPUT"),
        _turn("a6", "x4", "msg_3", {"type": "text", "text": "Both parsers differ in error handling."}),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "B0",
            "parentUuid": None,
            "logicalParentUuid": "a6",
            "sessionId": "S",
            "timestamp": "t",
        },
        cc_record(
            "S0",
            "B0",
            "user",
            "This session is being continued...\n1. Primary Request and Intent:\n - x\n",
            isCompactSummary=True,
        ),
    ]
    path = _write(tmp_path / "p.jsonl", recs)
    b = read_boundary(path, 0)
    outs = [it.content for it in b.span if it.role == "tool_output"]
    assert sorted(outs) == sorted(
        ["A_PY_CONTENT", "B_PY_CONTENT", "C_PY_CONTENT", "REPO_ONE_REPORT", "REPO_TWO_REPORT"]
    )
    assert {it.call_id for it in b.span if it.role == "tool_call"} == {"r1", "r2", "r3", "t1", "t2"}
    assert not any("SUBAGENT_INTERNAL" in it.content or "ABANDONED" in it.content for it in b.span)
    # results come after their calls and before what the model said next
    order = [it.content if it.role == "tool_output" else it.call_id or it.content[:4] for it in b.span]
    assert order.index("r3") < order.index("A_PY_CONTENT") < order.index("t1")
    assert order.index("t2") < order.index("REPO_TWO_REPORT") < order.index("Both")
    assert {s.name for s in b.sources() if s.kind == "tool_output"} == {"Read", "Task"}
    assert b.incomplete is None


def test_a_span_that_starts_mid_session_says_so(tmp_path):
    path = small_cc(tmp_path)
    assert read_boundary(path, 0).incomplete is None and read_boundary(path, 1).incomplete is None
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[1]["parentUuid"] = "before-the-file"  # the first conversation record's parent is not in the file
    cut = _write(tmp_path / "cut.jsonl", recs)
    b0 = read_boundary(cut, 0)
    assert b0.incomplete and "mid-session" in b0.incomplete
    assert read_boundary(cut, 1).incomplete is None  # the previous summary opens the second span
    # a hole in the middle is not the start of the file: the chain goes on before it
    recs[1]["parentUuid"] = None
    recs[5]["parentUuid"] = "never-written"
    holed = _write(tmp_path / "holed.jsonl", recs)
    b = read_boundary(holed, 0)
    assert b.incomplete is None and any(it.content == "please fix the flaky test in api/" for it in b.span)


@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
def test_real_slices_are_incomplete_and_complete_sessions_are_not():
    by = {p.name[:9]: p for p in CC_FIXTURES}
    for name in ("entire_a6", "entire_ca", "entire_d7", "entire_e1"):  # the slices: files cut mid-session
        assert read_boundary(by[name], 0).incomplete, name
    for name in ("entire_04", "entire_32", "entire_98", "entire_1e"):
        assert read_boundary(by[name], 0).incomplete is None, name


def test_codex_parallel_calls_and_a_rollout_cut_mid_session(tmp_path):
    def line(t, payload):
        return {"timestamp": "t", "type": t, "payload": payload}

    body = [
        line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        *[
            line("response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{i}"})
            for i in range(3)
        ],
        *[
            line("response_item", {"type": "function_call_output", "call_id": f"c{i}", "output": f"OUT{i}"})
            for i in (2, 0, 1)
        ],
        line("compacted", {"message": "Another language model started to solve this problem...\n- ok"}),
    ]
    full = _write(tmp_path / "rollout.jsonl", [line("session_meta", {"id": "s"}), *body])
    b = read_boundary(full)
    assert sorted(i.content for i in b.span if i.role == "tool_output") == ["OUT0", "OUT1", "OUT2"]
    assert all(i.name == "shell" for i in b.span if i.role == "tool_output")
    assert b.incomplete is None
    cut = _write(tmp_path / "cut.jsonl", body)
    assert read_boundary(cut).incomplete and "mid-session" in read_boundary(cut).incomplete


def test_gemini_parallel_calls(tmp_path):
    g = _write(
        tmp_path / "session-2.jsonl",
        [
            {"sessionId": "g2", "type": "user", "content": "read both"},
            {
                "type": "gemini",
                "content": "",
                "toolCalls": [
                    {"id": f"k{i}", "name": "read_file", "args": {"path": f"{i}.py"}, "result": f"FILE{i}"}
                    for i in range(3)
                ],
            },
            {"type": "user", "content": "<state_snapshot>\n<overall_goal>\n- x\n</overall_goal>\n</state_snapshot>"},
        ],
    )
    b = read_boundary(g)
    assert [i.content for i in b.span if i.role == "tool_output"] == ["FILE0", "FILE1", "FILE2"]
