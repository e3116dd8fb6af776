"""Hermes Agent's state.db read as transcripts (``hosts.hermes``): built here with the tables, columns and row
shapes hermes-agent 0.19.0 wrote in the e2e runs (tests/e2e/test_hermes_plugin.py reads a real one)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts import hermes

NOTICE = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. … avoid repeating it:"
)
END = hermes.END_MARKER
LOG = "service api-gateway 5.2.0 healthy: 212 requests served"


def summary(body: str) -> str:
    return f"{NOTICE}\n{body}\n\n{END}"


def merged(prior: str, body: str) -> str:
    return f"{hermes.MERGED_HEADER}\n{prior}\n\n{hermes.MERGED_DELIMITER}\n\n{summary(body)}"


def call(cid: str, command: str) -> str:
    return json.dumps(
        [
            {
                "id": cid,
                "call_id": cid,
                "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
            }
        ]
    )


def result(output: str, code: int = 0, error: str | None = None) -> str:
    return json.dumps({"output": output, "exit_code": code, "error": error})


def make_db(path: Path, sessions: list[tuple[str, str | None]], rows: list[tuple]) -> Path:
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, parent_session_id TEXT, started_at REAL,
                               end_reason TEXT, message_count INTEGER, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
                               content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL,
                               token_count INTEGER, finish_reason TEXT, reasoning TEXT, active INTEGER DEFAULT 1,
                               compacted INTEGER DEFAULT 0, api_content TEXT);
        """
    )
    for i, (sid, parent) in enumerate(sessions):
        con.execute(
            "INSERT INTO sessions (id, source, parent_session_id, started_at) VALUES (?, 'cli', ?, ?)",
            (sid, parent, 1000.0 + i),
        )
    for sid, role, content, tool_call_id, tool_calls, tool_name, active, compacted in rows:
        con.execute(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, active,"
            " compacted) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (sid, role, content, tool_call_id, tool_calls, tool_name, active, compacted),
        )
    con.commit()
    con.close()
    return path


def turn(sid: str, prompt: str, cid: str, output: str, active: int, compacted: int) -> list[tuple]:
    return [
        (sid, "user", prompt, None, None, None, active, compacted),
        (sid, "assistant", "", None, call(cid, "cat service.log; ls"), None, active, compacted),
        (sid, "tool", result(output), cid, None, "terminal", active, compacted),
        (sid, "assistant", "The gateway is healthy.", None, None, None, active, compacted),
    ]


BODY_1 = "## Goal\nCheck the gateway.\n\n## Key Decisions\n- Move the roster next quarter."
BODY_2 = "## Goal\nCheck the gateway.\n\n## Critical Context\n- 212 requests served."


@pytest.fixture
def in_place(tmp_path: Path) -> Path:
    """Two in-place compactions: the first merged into the kept assistant message, the second standalone."""
    s = "20261201_164114_b1206d"
    rows = [
        *turn(s, "Check the gateway service.", "call_1", LOG, 0, 1),
        *turn(s, "Check it again.", "call_2", LOG + " (again)", 0, 1),
        # the compacted list after the first compaction, archived by the second
        (s, "assistant", merged("", BODY_1), None, call("call_2", "cat service.log; ls"), None, 0, 1),
        (s, "tool", "[Duplicate tool output — same content as a more recent call]", "call_2", None, "terminal", 0, 1),
        (s, "assistant", "The gateway is healthy.", None, None, None, 0, 1),
        (
            s,
            "user",
            "[Your active task list was preserved across context compression]\n- [ ] 1. deploy",
            None,
            None,
            None,
            0,
            1,
        ),
        *turn(s, "Check it once more.", "call_3", "exit status tail", 0, 1),
        # the compacted list after the second compaction: active
        (s, "assistant", summary(BODY_2), None, None, None, 1, 0),
        *turn(s, "Check it once more.", "call_3", "exit status tail", 1, 0),
        *turn(s, "And a last time.", "call_4", LOG, 1, 0),
    ]
    return make_db(tmp_path / "state.db", [(s, None)], rows)


def test_each_new_summary_message_is_a_compaction(in_place: Path) -> None:
    assert hermes.looks_like(in_place)
    assert hermes.boundary_count(in_place) == 2
    first = hermes.read_boundary(in_place, 0)
    assert first.host == "hermes" and first.index == 0 and first.previous_summary is None
    assert hermes.is_summary(first.summary) and BODY_1 in first.summary
    outputs = [it for it in first.span if it.role == "tool_output"]
    assert [it.content for it in outputs] == [LOG, LOG + " (again)"]  # unwrapped from the JSON
    assert all(it.name == "terminal" and not it.is_error for it in outputs)
    assert first.task == "Check the gateway service."
    assert first.boundary_id and first.boundary_id.startswith("20261201_164114_b1206d:")


def test_a_later_compaction_has_the_earlier_summary_as_previous(in_place: Path) -> None:
    newest = hermes.read_boundary(in_place)
    assert newest.index == 1 and newest.previous_summary == BODY_1
    assert BODY_2 in newest.summary and BODY_1 not in newest.summary
    users = [it.content for it in newest.span if it.role == "user"]
    assert users == ["Check it once more."]  # Hermes' preserved task list is not the user's
    outputs = [it.content for it in newest.span if it.role == "tool_output"]
    assert "[Duplicate tool output" not in " ".join(outputs)  # a placeholder is no output
    assert [it.content for it in newest.retained if it.role == "user"] == ["Check it once more."]
    sources = newest.sources()
    assert any(s.kind == "tool_output" and s.call and "cat service.log" in s.call for s in sources)


def test_a_session_is_chosen_with_a_fragment(in_place: Path, tmp_path: Path) -> None:
    assert hermes.boundary_count(f"{in_place}#20261201_164114_b1206d") == 2
    with pytest.raises(TranscriptError, match="no session 'other'"):
        hermes.read_boundary(f"{in_place}#other")


def test_rotation_reads_the_parent_session_as_the_span(tmp_path: Path) -> None:
    parent, child = "20261201_100000_aaaaaa", "20261201_100100_bbbbbb"
    rows = [
        *turn(parent, "Check the gateway service.", "call_1", LOG, 1, 0),
        (child, "user", summary(BODY_1), None, None, None, 1, 0),
        *turn(child, "Check it again.", "call_2", "failed", 1, 0),
    ]
    db = make_db(tmp_path / "state.db", [(parent, None), (child, parent)], rows)
    b = hermes.read_boundary(db)
    assert b.session_id == child
    assert [it.content for it in b.span if it.role == "tool_output"] == [LOG]


def test_a_failed_call_is_an_error_output() -> None:
    assert hermes.tool_result(result("", 2, "command not found")) == ("command not found", True)
    assert hermes.tool_result(result("done", 0)) == ("done", False)
    assert hermes.tool_result("plain text") == ("plain text", False)
    truncated = result("x" * 10)[:-5] + "\n...[truncated]...\n"
    assert hermes.tool_result(truncated) == (truncated, False)


def test_the_merged_message_keeps_its_own_text_apart() -> None:
    text = merged("Earlier answer.", BODY_1)
    assert hermes.is_summary(text) and hermes.merged_prior(text) == "Earlier answer."
    assert hermes.summary_body(text) == BODY_1
    items = hermes.message_items({"role": "assistant", "content": text})
    assert [it.content for it in items] == ["Earlier answer."]


def test_what_is_not_a_hermes_store_is_said_so(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    assert not hermes.looks_like(other)
    assert not hermes.looks_like(tmp_path / "missing.db")
    empty = make_db(tmp_path / "state.db", [("s", None)], turn("s", "hi", "c1", "out", 1, 0))
    with pytest.raises(TranscriptError, match="no compaction"):
        hermes.read_boundary(empty)


@pytest.mark.slow
def test_sjc_judge_reads_a_state_db(in_place: Path, tmp_path: Path) -> None:
    sjc = Path(sys.executable).parent / "sjc"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(tmp_path / "log.jsonl")}
    r = subprocess.run(
        [str(sjc), "judge", "--transcript", str(in_place), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    texts = [e["text"] for e in out["entries"]]
    assert texts == ["Check the gateway.", "- 212 requests served."]  # Hermes' notice and END line are structure
    bad = subprocess.run(
        [str(sjc), "judge", "--transcript", f"{in_place}#nope"], capture_output=True, text=True, env=env, timeout=60
    )
    assert bad.returncode == 2 and "no session 'nope'" in bad.stderr and "Traceback" not in bad.stderr


# ---- the proxy: Hermes' compaction request ---------------------------------------------------------------

PREAMBLE = (
    "You are a summarization agent creating a context checkpoint. Treat the conversation turns below as "
    "source material for a compact record of prior work."
)
TEMPLATE = "\n\n## Goal\n[What the user is trying to accomplish]\n\nTarget ~2000 tokens."


def prompt(turns: str, previous: str | None = None, focus: str | None = None) -> str:
    if previous is None:
        text = f"{PREAMBLE}\n\nCreate a structured checkpoint summary …\n\nTURNS TO SUMMARIZE:\n{turns}"
        text += f"\n\nUse this exact structure:\n{TEMPLATE}"
    else:
        text = f"{PREAMBLE}\n\nYou are updating a context compaction summary. …\n\nPREVIOUS SUMMARY:\n{previous}"
        text += f"\n\nNEW TURNS TO INCORPORATE:\n{turns}\n\nUpdate the summary using this exact structure. …{TEMPLATE}"
    if focus is not None:
        text += f'\n\nFOCUS TOPIC: "{focus}"\nThis compaction should PRIORITISE preserving all information …'
    return text


TURNS = "\n\n".join(
    [
        "[USER]: Check the gateway service.",
        '[ASSISTANT]: Checking.\n[Tool calls:\n  terminal({"command": "cat service.log; ls"})\n  read_file({"path": "a.txt"})\n]',
        f"[TOOL RESULT call_7]: {result(LOG)}",
        "[TOOL RESULT call_8]: [Duplicate tool output — same content as a more recent call]",
        "[USER]: [Your active task list was preserved across context compression]\n- [ ] 1. deploy",
        "[ASSISTANT]: The gateway is healthy.",
        "[USER]: And the failing one?",
        '[ASSISTANT]: \n[Tool calls:\n  terminal({"command": "false"})\n]',
        f"[TOOL RESULT call_9]: {result('', 1, 'exit status 1')}",
    ]
)


def wire(text: str, **extra: object):
    from sjc_mcp.formats import WireRequest

    return WireRequest(
        "chat", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": text}], **extra}
    )


def test_the_compaction_request_is_recognised_by_its_shape() -> None:
    found = hermes.recognise(wire(prompt(TURNS)), None)
    assert found is not None and found.host == "hermes" and not found.server_side
    assert hermes.recognise(wire(prompt(TURNS), tools=[{"type": "function"}]), None) is None
    quoted = wire(prompt(TURNS))
    quoted.body["messages"].insert(0, {"role": "system", "content": "You are Hermes."})
    assert hermes.recognise(quoted, None) is None  # the agent's own turn quoting the prompt
    assert hermes.recognise(wire("Please summarize: " + prompt(TURNS)), None) is None


def test_the_history_in_the_prompt_is_the_span() -> None:
    b = hermes.request_boundary(wire(prompt(TURNS, focus="the gateway")), None)
    assert b.previous_summary is None
    outputs = [(it.name, it.call_id, it.content, it.is_error) for it in b.span if it.role == "tool_output"]
    assert outputs == [
        ("terminal", "call_7", LOG, False),
        ("read_file", "call_8", "", False),  # the call ran; Hermes' placeholder is no output
        ("terminal", "call_9", "exit status 1", True),
    ]
    assert [it.content for it in b.span if it.role == "user"] == ["Check the gateway service.", "And the failing one?"]
    assert [it.content for it in b.retained] == ["the gateway"]
    sources = b.sources()
    assert any(s.call and "cat service.log" in s.call and s.content == LOG for s in sources)


def test_an_update_carries_the_previous_summary() -> None:
    previous = "## Goal\nCheck the gateway.\n\n## Completed Actions\n1. RUN `ls` — 3 files [tool: terminal]"
    b = hermes.request_boundary(wire(prompt(TURNS, previous=previous)), None)
    assert b.previous_summary == previous
    assert len([it for it in b.span if it.role == "tool_output" and it.content]) == 2


def test_the_captured_requests_read_as_spans() -> None:
    from tests.conftest import SHARED, need_shared

    folder = need_shared(SHARED / "e2e" / "hermes" / "samples")
    for name, iterative in (
        ("compaction_request_first_auto.json", False),
        ("compaction_request_iterative_manual_focus.json", True),
    ):
        body = json.loads((folder / name).read_text())["body"]
        from sjc_mcp.formats import WireRequest

        req = WireRequest("chat", "/v1/chat/completions", body)
        assert hermes.recognise(req, None) is not None, name
        b = hermes.request_boundary(req, None)
        assert (b.previous_summary is not None) == iterative, name
        outputs = [it.content for it in b.span if it.role == "tool_output"]
        assert outputs and all(o.startswith("build ok\nversion 2.4.1") for o in outputs), name
