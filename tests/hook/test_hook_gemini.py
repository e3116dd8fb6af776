"""``sjc hook gemini`` run as Gemini CLI runs it: a subprocess per ``BeforeModel``, the event's JSON on stdin,
stdout read back.

What Gemini CLI 0.61.0 sends (seen in the real CLI; the end-to-end tests drive it): ``BeforeModel`` before
every main-loop request, with ``llm_request.messages`` (the text of each content); after a compression the
snapshot ends message 0, after the ``<session_context>`` text, and the chat file (``transcript_path``)
already holds it. A ``llm_request.messages`` answer is merged back by position: message 0 alone changes the
first content only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import sjc_exe

pytestmark = pytest.mark.slow

ENV = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"
OUTPUT = "service = stock-sync\nlisten_port = 7319\nqueue = orders-eu-3\n"
SUPPORTED = "        - inventory.toml sets listen_port = 7319 and queue orders-eu-3"
INVENTED = "        - Email the supplier price list to every customer on the newsletter."
ACK = "Got it. Thanks for the additional context!"


def snapshot(*entries: str) -> str:
    body = "".join(e + "\n" for e in entries)
    return (
        "<state_snapshot>\n    <overall_goal>\n        Report which queue stock-sync consumes.\n    </overall_goal>\n\n"
        f"    <key_knowledge>\n{body}    </key_knowledge>\n</state_snapshot>"
    )


def chat_file(path: Path, snapshots: list[str]) -> Path:
    recs: list[dict[str, Any]] = [
        {"sessionId": "gs", "projectHash": "h", "startTime": "t", "lastUpdated": "t", "kind": "main"},
        {"$set": {"messages": [{"id": "env", "type": "user", "content": [{"text": ENV}]}]}},
        {"id": "u1", "type": "user", "content": [{"text": "Which queue does stock-sync consume?"}]},
        {
            "id": "g1",
            "type": "gemini",
            "content": "",
            "toolCalls": [
                {
                    "id": "c1",
                    "name": "read_file",
                    "args": {"file_path": "inventory.toml"},
                    "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": OUTPUT}}}],
                }
            ],
        },
    ]
    for n, snap in enumerate(snapshots):
        recs.append(
            {
                "$set": {
                    "messages": [
                        {"id": "env", "type": "user", "content": [{"text": ENV}]},
                        {"id": f"s{n}", "type": "user", "content": [{"text": snap}]},
                        {"id": f"a{n}", "type": "gemini", "content": [{"text": ACK}]},
                    ]
                }
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


class Gemini:
    """Sends ``BeforeModel`` events of one session whose chat file is ``chat``."""

    def __init__(self, tmp: Path, chat: Path) -> None:
        self.home = tmp / "home"
        self.chat = chat
        self.base = {"session_id": "gs", "transcript_path": str(chat), "cwd": str(tmp), "timestamp": "t"}

    def before_model(self, first: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("SJC_DISABLE", "SJC_MODE")}
        env.update(HOME=str(self.home), **(env_extra or {}))
        messages = [
            {"role": "user", "content": first},
            {"role": "model", "content": ACK},
            {"role": "user", "content": "What is left?"},
        ]
        payload = {**self.base, "hook_event_name": "BeforeModel", "llm_request": {"model": "m", "messages": messages}}
        r = subprocess.run(
            [sjc_exe(), "hook", "gemini"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        return r

    def records(self) -> list[dict[str, Any]]:
        log = self.home / ".local" / "state" / "sjc" / "decisions.jsonl"
        if not log.exists():
            return []
        return [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()]


def sent(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]] | None:
    """The messages the hook answered with (None: it left the request as it was)."""
    if not r.stdout.strip():
        return None
    out = json.loads(r.stdout)
    hso = out.get("hookSpecificOutput")
    if hso is None:
        return None
    assert hso["hookEventName"] == "BeforeModel"
    return list(hso["llm_request"]["messages"])


def test_a_request_without_a_snapshot_is_left_alone_and_costs_nothing(tmp_path: Path) -> None:
    g = Gemini(tmp_path, chat_file(tmp_path / "chat.jsonl", []))
    r = g.before_model(ENV + "Which queue does stock-sync consume?")
    assert r.stdout == "" and r.stderr == ""
    assert g.records() == [] and not (g.home / ".local" / "state" / "sjc" / "sessions").exists()


def test_the_snapshot_loses_its_unsupported_entries_in_every_request(tmp_path: Path) -> None:
    snap = snapshot(SUPPORTED, INVENTED)
    g = Gemini(tmp_path, chat_file(tmp_path / "chat.jsonl", [snap]))
    r = g.before_model(ENV + snap)
    msgs = sent(r)
    assert msgs == [{"role": "user", "content": ENV + snap.replace(INVENTED + "\n", "")}]
    assert "1 entry" in json.loads(r.stdout)["systemMessage"]
    (rec,) = g.records()
    assert rec["status"] == "judged" and rec["event"] == "BeforeModel" and rec["pruned"] == 1
    assert rec["session"] == "gs"
    # the next request: the same answer from the session state, no second judgment
    again = g.before_model(ENV + snap)
    assert sent(again) == msgs and "systemMessage" not in json.loads(again.stdout)
    assert len(g.records()) == 1


def test_nothing_to_take_out_leaves_the_request_alone(tmp_path: Path) -> None:
    snap = snapshot(SUPPORTED)
    g = Gemini(tmp_path, chat_file(tmp_path / "chat.jsonl", [snap]))
    r = g.before_model(ENV + snap)
    assert sent(r) is None and "kept 2" in json.loads(r.stdout)["systemMessage"]
    assert g.before_model(ENV + snap).stdout == ""


def test_shadow_mode_only_logs(tmp_path: Path) -> None:
    snap = snapshot(SUPPORTED, INVENTED)
    g = Gemini(tmp_path, chat_file(tmp_path / "chat.jsonl", [snap]))
    r = g.before_model(ENV + snap, {"SJC_MODE": "shadow"})
    assert sent(r) is None and "would prune 1" in json.loads(r.stdout)["systemMessage"]
    assert [d["status"] for d in g.records()] == ["judged"]


def test_kill_switch_is_logged_once_per_snapshot(tmp_path: Path) -> None:
    snap = snapshot(SUPPORTED, INVENTED)
    g = Gemini(tmp_path, chat_file(tmp_path / "chat.jsonl", [snap]))
    for _ in range(3):
        assert g.before_model(ENV + snap, {"SJC_DISABLE": "1"}).stdout == ""
    assert [d["status"] for d in g.records()] == ["disabled"]
    # switched on again: judged then
    assert sent(g.before_model(ENV + snap)) is not None


def test_what_was_taken_out_of_the_last_snapshot_is_no_source_for_the_next(tmp_path: Path) -> None:
    """The CLI keeps its own snapshot in the history the next compression is made from, so the next snapshot
    may repeat an entry the model never saw; the previous summary sjc judges against is the one it sent."""
    first, second = snapshot(SUPPORTED, INVENTED), snapshot(SUPPORTED, INVENTED, "        - Queue depth is 12.")
    chat = chat_file(tmp_path / "chat.jsonl", [first])
    g = Gemini(tmp_path, chat)
    assert sent(g.before_model(ENV + first)) is not None
    chat_file(chat, [first, second])
    msgs = sent(g.before_model(ENV + second))
    assert msgs is not None and INVENTED not in msgs[0]["content"] and SUPPORTED in msgs[0]["content"]


def test_no_chat_file_means_nothing_to_judge_against(tmp_path: Path) -> None:
    snap = snapshot(SUPPORTED, INVENTED)
    g = Gemini(tmp_path, tmp_path / "missing.jsonl")
    assert g.before_model(ENV + snap).stdout == ""
    assert g.before_model(ENV + snap).stdout == ""
    assert [d["status"] for d in g.records()] == ["nothing"]


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[]", '{"hook_event_name": "BeforeModel", "llm_request": {"messages": "x"}}'],
)
def test_bad_payloads_never_fail_the_cli(tmp_path: Path, stdin: str) -> None:
    r = subprocess.run(
        [sjc_exe(), "hook", "gemini"],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(os.environ, HOME=str(tmp_path)),
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout == ""
