"""Gemini CLI's compression requests as the proxy sees them: the real 0.61.0 requests in
../shared/e2e/gemini/samples (both passes, automatic and /compress, and the request after each), and the
interactive UI's session-title request, which quotes the snapshot."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from sjc_mcp.config import DEFAULT_PATTERNS
from sjc_mcp.formats import WireRequest
from sjc_mcp.proxy.request import recognise, request_boundary, session_of
from tests.conftest import SHARED, need_shared

SAMPLES = SHARED / "e2e" / "gemini" / "samples"
PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


def sample(name: str) -> WireRequest:
    rec = json.loads(need_shared(SAMPLES / name).read_text())
    return WireRequest("gemini", rec["path"].split("?")[0], rec["body"], rec.get("headers") or {})


@pytest.mark.parametrize(
    ("name", "which"),
    [
        ("auto-compression-first.request.json", "first"),
        ("auto-compression-verify.request.json", "verification"),
        ("manual-compression-first.request.json", "first"),
        ("manual-compression-verify.request.json", "verification"),
    ],
)
def test_both_passes_are_recognised(name: str, which: str) -> None:
    found = recognise(sample(name), DEFAULT_PATTERNS)
    assert found is not None and found.host == "gemini" and f"({which} pass)" in found.how


@pytest.mark.parametrize("name", ["auto-next.request.json", "manual-next.request.json"])
def test_the_request_after_it_is_not(name: str) -> None:
    req = sample(name)
    assert "<state_snapshot>" in json.dumps(req.body)
    assert recognise(req, DEFAULT_PATTERNS) is None


def test_the_session_title_request_is_not() -> None:
    """The interactive UI's title request quotes the conversation, snapshot included, in its last user text."""
    first = sample("manual-next.request.json")
    quoted = json.dumps(first.body["contents"])
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {
                        "text": f"Summarize the user's primary intent or goal in this "
                        f"conversation in ONE sentence.\n\n{quoted}"
                    }
                ],
            }
        ],
        "generationConfig": {"temperature": 0},
    }
    req = WireRequest("gemini", "/v1beta/models/gemini-3.5-flash-lite:generateContent", body, {})
    assert recognise(req, DEFAULT_PATTERNS) is None
    assert recognise(req, {"gemini": "<state_snapshot>"}) is None  # the old pattern, now looked for where it belongs


def test_both_passes_compress_the_same_history() -> None:
    first, verify = sample("auto-compression-first.request.json"), sample("auto-compression-verify.request.json")
    found = recognise(first, DEFAULT_PATTERNS)
    assert found is not None
    b1, b2 = request_boundary(first, found, DEFAULT_PATTERNS), request_boundary(verify, found, DEFAULT_PATTERNS)
    assert b1.boundary_id == b2.boundary_id and b1.span == b2.span
    assert (
        b1.boundary_id
        != request_boundary(sample("manual-compression-first.request.json"), found, DEFAULT_PATTERNS).boundary_id
    )
    outs = [i for i in b1.span if i.role == "tool_output"]
    assert {o.name for o in outs} == {"run_shell_command", "read_file"}
    assert any(o.content.startswith("Output: build ok") for o in outs), "the CLI's <untrusted_context> wrapper is off"
    users = [i.content for i in b1.span if i.role == "user"]
    assert users[0].startswith("Check the build") and not any("<session_context>" in u for u in users)
    assert not any("state_snapshot" in i.content for i in b2.span), "neither the prompts nor answer 1 are sources"
    assert b1.previous_summary is None


def test_a_previous_snapshot_is_the_previous_summary() -> None:
    req = sample("auto-compression-first.request.json")
    env = req.body["contents"][0]["parts"][0]["text"]
    old = "<state_snapshot>\n    <key_knowledge>\n        - port 8431\n    </key_knowledge>\n</state_snapshot>"
    body = {
        **req.body,
        "contents": [
            {"role": "user", "parts": [{"text": env}, {"text": old}]},
            {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
            *req.body["contents"][1:-1],
            {
                "role": "user",
                "parts": [{"text": "A previous <state_snapshot> exists in the history. You MUST integrate"}],
            },
        ],
    }
    found = recognise(WireRequest("gemini", PATH, body, {}), DEFAULT_PATTERNS)
    assert found is not None and "(first pass)" in found.how
    b = request_boundary(WireRequest("gemini", PATH, body, {}), found, DEFAULT_PATTERNS)
    assert b.previous_summary == old and not any(old in i.content for i in b.span)


def _chat(root: Path, session: str, call_id: str, age_s: float = 0) -> Path:
    f = root / ".gemini" / "tmp" / "work" / "chats" / f"session-2026-12-01T10-00-{session[:8]}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    meta = {"sessionId": session, "projectHash": "h", "startTime": "t", "lastUpdated": "t", "kind": "main"}
    call = {"id": "g", "type": "gemini", "content": "", "toolCalls": [{"id": call_id, "name": "read_file", "args": {}}]}
    f.write_text(json.dumps(meta) + "\n" + json.dumps(call) + "\n")
    then = time.time() - age_s
    os.utime(f, (then, then))
    return f


def test_the_session_is_the_chat_file_holding_the_newest_call(isolated_home: Path) -> None:
    req = sample("auto-compression-first.request.json")
    calls = [p["functionCall"]["id"] for c in req.body["contents"] for p in c["parts"] if "functionCall" in p]
    assert session_of(req, "gemini") is None  # no chat file here
    _chat(isolated_home, "aaaaaaaa-older-call", calls[0])
    _chat(isolated_home, "bbbbbbbb-this-session", calls[-1])
    _chat(isolated_home, "cccccccc-an-hour-ago", calls[-1] + "x", age_s=7200)
    assert session_of(req, "gemini") == "bbbbbbbb-this-session"
