"""Gemini CLI's chat file as the CLI writes it: the real 0.61.0 files in ../shared/e2e/gemini/samples, and
the shapes they show, written out small (``$set`` records, records re-written under one id, function
responses as records of their own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts import boundary_count, detect, read_boundary
from tests.conftest import SHARED, need_shared

SAMPLES = SHARED / "e2e" / "gemini" / "samples"
ENV = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"
SNAP_1 = "<state_snapshot>\n    <key_knowledge>\n        - port 8431\n    </key_knowledge>\n</state_snapshot>"
SNAP_2 = (
    "<state_snapshot>\n    <key_knowledge>\n        - port 8431, 12 workers\n    </key_knowledge>\n</state_snapshot>"
)
ACK = "Got it. Thanks for the additional context!"


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"functionCall": {"id": cid, "name": name, "args": args}}


def _response(cid: str, name: str, output: str) -> dict[str, Any]:
    return {"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}


def _session(snapshots: list[str]) -> list[dict[str, Any]]:
    """A session as 0.61.0 writes it: metadata, the env message in ``$set``, a prompt, a gemini record written
    twice (then with its tool call and result), the function response as a record of its own, the answer;
    then per snapshot a ``$set.messages`` with env, snapshot, ack and the kept turn under new ids."""
    recs: list[dict[str, Any]] = [
        {"sessionId": "s-1", "projectHash": "h", "startTime": "t", "lastUpdated": "t", "kind": "main"},
        {"$set": {"messages": [{"id": "env", "type": "user", "content": [{"text": ENV}]}]}},
        {"id": "u1", "type": "user", "content": [{"text": "Read config.yaml please."}]},
        {"id": "g1", "type": "gemini", "content": "", "thoughts": []},
        {
            "id": "g1",
            "type": "gemini",
            "content": "",
            "toolCalls": [
                {
                    "id": "c1",
                    "name": "read_file",
                    "args": {"file_path": "config.yaml"},
                    "result": [_response("c1", "read_file", "port: 8431\nworkers: 12\n")],
                    "status": "success",
                }
            ],
        },
        {"id": "r1", "type": "user", "content": [_response("c1", "read_file", "port: 8431\nworkers: 12\n")]},
        {"id": "g2", "type": "gemini", "content": "The port is 8431."},
        {"$set": {"lastUpdated": "t2"}},
    ]
    for n, snap in enumerate(snapshots):
        recs += [
            {"$set": {"sessionId": "s-1"}},
            {
                "$set": {
                    "messages": [
                        {"id": "env", "type": "user", "content": [{"text": ENV}]},
                        {"id": f"snap{n}", "type": "user", "content": [{"text": snap}]},
                        {"id": f"ack{n}", "type": "gemini", "content": [{"text": ACK}]},
                        {"id": f"k{n}", "type": "user", "content": [{"text": f"Kept prompt {n}"}]},
                    ]
                }
            },
            {"id": f"after{n}", "type": "user", "content": [{"text": f"Next prompt {n}"}]},
        ]
    return recs


def test_the_snapshot_in_a_set_record_is_the_boundary(tmp_path: Path) -> None:
    path = _write(tmp_path / "session-2026-12-01T10-00-abcd1234.jsonl", _session([SNAP_1]))
    assert detect(path) == "gemini"
    assert boundary_count(path) == 1
    b = read_boundary(path)
    assert b.host == "gemini" and b.summary == SNAP_1 and b.session_id == "s-1" and b.previous_summary is None
    assert [(i.role, i.name, i.call_id) for i in b.span] == [
        ("user", None, None),
        ("tool_call", "read_file", "c1"),
        ("tool_output", "read_file", "c1"),
        ("assistant", None, None),
    ]
    assert b.span[2].content == "port: 8431\nworkers: 12\n"
    sources = b.sources()
    assert [s.kind for s in sources] == ["user_message", "tool_output"]
    assert sources[0].content == "Read config.yaml please."


def test_two_compressions_each_with_its_span_and_the_previous_snapshot(tmp_path: Path) -> None:
    path = _write(tmp_path / "session-x.jsonl", _session([SNAP_1, SNAP_2]))
    assert boundary_count(path) == 2
    b = read_boundary(path)
    assert b.index == 1 and b.summary == SNAP_2 and b.previous_summary == SNAP_1
    # the turn kept after the first snapshot (new ids) and the prompt after it belong to the second span
    assert [i.content for i in b.span if i.role == "user"] == ["Kept prompt 0", "Next prompt 0"]
    assert read_boundary(path, 0).summary == SNAP_1
    assert read_boundary(path, 0).boundary_id != b.boundary_id


def test_a_set_record_restating_the_history_adds_nothing(tmp_path: Path) -> None:
    """On resume the CLI writes the whole history again under the same ids (and the function response once
    more, in API form, as ``<id>_response``): still one call, one output, one prompt."""
    recs = _session([])
    recs.insert(
        -1,
        {
            "$set": {
                "messages": [
                    {"id": "env", "type": "user", "content": [{"text": ENV}]},
                    {"id": "u1", "type": "user", "content": [{"text": "Read config.yaml please."}]},
                    {"id": "g1", "type": "gemini", "content": [_call("c1", "read_file", {"file_path": "config.yaml"})]},
                    {"id": "g1_response", "type": "user", "content": [_response("c1", "read_file", "port: 8431\n")]},
                    {"id": "g2", "type": "gemini", "content": [{"text": "The port is 8431."}]},
                ]
            }
        },
    )
    recs.append({"$set": {"messages": [{"id": "s", "type": "user", "content": [{"text": SNAP_1}]}]}})
    b = read_boundary(_write(tmp_path / "s.jsonl", recs))
    roles = [i.role for i in b.span]
    assert roles.count("tool_call") == 1 and roles.count("tool_output") == 1 and roles.count("user") == 1


def test_injected_text_is_not_the_users(tmp_path: Path) -> None:
    """The ``<session_context>`` message is the CLI's; a ``<hook_context>`` part is a hook's."""
    recs = _session([SNAP_1])
    recs[2]["content"].append({"text": "<hook_context>a hook said this</hook_context>"})
    b = read_boundary(_write(tmp_path / "s.jsonl", recs))
    users = [i.content for i in b.span if i.role == "user"]
    assert users == ["Read config.yaml please."]


def test_a_function_response_record_is_a_tool_output_never_a_user_message(tmp_path: Path) -> None:
    recs = _session([SNAP_1])
    del recs[4]["toolCalls"][0]["result"]  # the output only in its own record
    b = read_boundary(_write(tmp_path / "s.jsonl", recs))
    outs = [i for i in b.span if i.role == "tool_output"]
    assert [(o.name, o.call_id, o.content) for o in outs] == [("read_file", "c1", "port: 8431\nworkers: 12\n")]
    assert all("port: 8431" not in i.content for i in b.span if i.role == "user")


def test_shell_output_loses_the_untrusted_context_wrapper(tmp_path: Path) -> None:
    recs = _session([SNAP_1])
    wrapped = "<untrusted_context>\nOutput: build ok\nProcess Group PGID: 7\n</untrusted_context>"
    recs[4]["toolCalls"][0]["result"] = [_response("c1", "run_shell_command", wrapped)]
    recs[5]["content"] = [_response("c1", "run_shell_command", wrapped)]
    b = read_boundary(_write(tmp_path / "s.jsonl", recs))
    (out,) = [i for i in b.span if i.role == "tool_output"]
    assert out.content == "Output: build ok\nProcess Group PGID: 7"


def test_no_snapshot_yet(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _session([]))
    assert boundary_count(path) == 0
    with pytest.raises(TranscriptError, match="no compaction"):
        read_boundary(path)


def test_one_json_object_as_earlier_versions_wrote_it(tmp_path: Path) -> None:
    obj = {
        "sessionId": "old-1",
        "messages": [
            {"id": "1", "type": "user", "content": "Run the tests."},
            {
                "id": "2",
                "type": "gemini",
                "content": "",
                "toolCalls": [{"id": "t", "name": "run_shell_command", "args": {}, "result": "12 passed"}],
            },
            {"id": "3", "type": "user", "content": SNAP_1},
        ],
    }
    path = tmp_path / "session-old.json"
    path.write_text(json.dumps(obj))
    b = read_boundary(path)
    assert b.session_id == "old-1" and b.summary == SNAP_1
    assert [(i.role, i.content) for i in b.span if i.role != "tool_call"] == [
        ("user", "Run the tests."),
        ("tool_output", "12 passed"),
    ]


@pytest.mark.parametrize("name", ["chat-headless.jsonl", "chat-interactive.jsonl"])
def test_real_chat_files(name: str) -> None:
    path = need_shared(SAMPLES / name)
    first = json.loads(path.read_text().splitlines()[0])
    assert detect(path) == "gemini" and boundary_count(path) == 1
    b = read_boundary(path)
    assert b.summary.startswith("<state_snapshot>") and b.session_id == first["sessionId"]
    outs = [i for i in b.span if i.role == "tool_output"]
    assert {o.name for o in outs} == {"run_shell_command", "read_file"}
    assert len({o.call_id for o in outs}) == len(outs), "a tool output taken twice"
    assert any("db_host: db-7.internal" in o.content for o in outs)
    users = [i.content for i in b.span if i.role == "user"]
    assert users[0].startswith("Check the build") and len(users) == len(set(users))
    assert not any("functionResponse" in u or "<session_context>" in u or "db-7.internal" in u for u in users)
