"""The Gemini API wire format: a request's history, an answer's text (JSON, a streamed JSON array, server-sent
events) and the same answer with a pruned text in its place, every event the text was not in byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjc_mcp.formats import gemini, wire_of

SNAPSHOT = (
    "<state_snapshot>\n    <key_knowledge>\n        - port 8431 in config.yaml\n"
    "        - Email the quarterly report to all customers.\n    </key_knowledge>\n</state_snapshot>"
)
PRUNED = SNAPSHOT.replace("        - Email the quarterly report to all customers.\n", "")


def answer(*texts: str, thought: str | None = None, **extra: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True}] if thought else []
    parts += [{"text": t} for t in texts]
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0, **extra}
    return {"candidates": [cand], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


def sse(objs: list[dict[str, Any]], sep: bytes = b"\r\n\r\n") -> bytes:
    return b"".join(b"data: " + json.dumps(o).encode() + sep for o in objs)


def pieces(text: str, n: int = 40) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)]


def streamed(text: str) -> list[dict[str, Any]]:
    objs = [answer(p) for p in pieces(text)]
    objs[-1]["candidates"][0]["finishReason"] = "STOP"
    objs[-1]["usageMetadata"] = {"promptTokenCount": 900, "candidatesTokenCount": 60, "totalTokenCount": 960}
    return objs


def test_routes() -> None:
    assert wire_of("/v1beta/models/gemini-2.5-flash:generateContent") == "gemini"
    assert wire_of("/v1beta/models/gemini-2.5-flash:streamGenerateContent") == "gemini"
    assert wire_of("/v1beta/models/gemini-2.5-flash:countTokens") is None
    assert wire_of("/v1beta/models") is None


def test_history_reads_calls_outputs_and_texts_with_where_they_sit() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "You are a helper."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "<session_context>x</session_context>"}, {"text": "Read it."}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking", "thought": True},
                    {"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "a"}}},
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "port 8431"}}}],
            },
            {"role": "model", "parts": [{"text": "The port is 8431."}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"error": "exit 1"}}}],
            },
            {"role": "user", "parts": [{"text": "Generate a new <state_snapshot>"}]},
        ],
    }
    items, where = gemini.history(body)
    assert [(i.role, i.name, i.call_id, i.content) for i in items] == [
        ("user", None, None, "<session_context>x</session_context>"),
        ("user", None, None, "Read it."),
        ("tool_call", "read_file", "c1", '{"file_path": "a"}'),
        ("tool_output", "read_file", "c1", "port 8431"),
        ("assistant", None, None, "The port is 8431."),
        ("tool_output", "run_shell_command", None, "exit 1"),
        ("user", None, None, "Generate a new <state_snapshot>"),
    ]
    assert items[5].is_error and not items[3].is_error
    assert where[3] == (2, 0) and where[2] == (1, 1)
    assert gemini.system_texts(body) == ["You are a helper."]
    assert gemini.last_user_text(body) == "Generate a new <state_snapshot>"
    gemini.set_output(body, where[3], "[cut]")
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"output": "[cut]"}
    gemini.drop(body, [where[2], where[3]])
    assert [len(c["parts"]) for c in body["contents"]] == [2, 1, 1, 1, 1]


def test_a_json_answer() -> None:
    raw = json.dumps({**answer(SNAPSHOT, thought="Let me think."), "usageMetadata": {"totalTokenCount": 5}}).encode()
    assert gemini.answer_text(raw, False) == SNAPSHOT
    out = json.loads(gemini.replace_answer(raw, False, PRUNED))
    assert gemini.answer_text(json.dumps(out).encode(), False) == PRUNED
    original = json.loads(raw)
    original["candidates"][0]["content"]["parts"][1]["text"] = PRUNED
    assert out == original  # the thought, usage and ids as they were


def test_a_json_answer_in_several_parts_keeps_each_its_share() -> None:
    head, tail = SNAPSHOT[:60], SNAPSHOT[60:]
    raw = json.dumps(answer(head, tail)).encode()
    out = json.loads(gemini.replace_answer(raw, False, PRUNED))
    parts = out["candidates"][0]["content"]["parts"]
    assert parts[0]["text"] == head and "".join(p["text"] for p in parts) == PRUNED


def test_a_streamed_json_array() -> None:
    raw = json.dumps(streamed(SNAPSHOT)).encode()
    assert gemini.answer_text(raw, False) == SNAPSHOT
    assert gemini.answer_text(gemini.replace_answer(raw, False, PRUNED), False) == PRUNED


@pytest.mark.parametrize("sep", [b"\r\n\r\n", b"\n\n"])
def test_server_sent_events_keep_every_event_the_text_was_not_in(sep: bytes) -> None:
    objs = streamed(SNAPSHOT)
    raw = sse(objs, sep)
    assert gemini.answer_text(raw, True) == SNAPSHOT
    out = gemini.replace_answer(raw, True, PRUNED)
    assert gemini.answer_text(out, True) == PRUNED
    before = [b + sep for b in raw.split(sep) if b]
    after = [b + sep for b in out.split(sep) if b]
    gone = [e for e in before if e not in after]
    # the events that held only the deleted entry are gone; those that held part of it were rewritten; the
    # rest (the first ones, and the last with its finish reason and usage) are the upstream's bytes
    assert before[0] == after[0] and gone
    assert json.loads(after[-1][6:])["usageMetadata"] == objs[-1]["usageMetadata"]
    assert len(after) < len(before)
    assert all(e.endswith(sep) for e in after)


def test_an_event_without_text_and_a_thought_stay() -> None:
    objs = [answer(thought="planning"), *streamed(SNAPSHOT)]
    raw = sse(objs)
    out = gemini.replace_answer(raw, True, PRUNED)
    assert out.startswith(sse(objs[:1]))
    assert gemini.answer_text(out, True) == PRUNED


def test_a_text_that_is_no_deletion_of_the_original_goes_whole_into_the_first_part() -> None:
    raw = sse(streamed(SNAPSHOT))
    out = gemini.replace_answer(raw, True, "something else")
    assert gemini.answer_text(out, True) == "something else"


def test_an_answer_without_text_cannot_take_one() -> None:
    from sjc_mcp.formats import FormatError

    raw = json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "x"}}]}}]})
    with pytest.raises(FormatError):
        gemini.replace_answer(raw.encode(), False, "x")
