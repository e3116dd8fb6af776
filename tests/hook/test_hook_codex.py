"""``sjc hook codex`` run as Codex runs it: a subprocess, the event's JSON on stdin, stdout read back.

The events in the order Codex 0.171.0 sends them at a compaction (observed in the real CLI; the
end-to-end tests drive it): PostCompact, then SessionStart with ``source: "compact"``, whose
additionalContext reaches the model in the very next request. After a manual compaction there is no
SessionStart: the note goes with the next UserPromptSubmit. Either way the model gets it once.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sjc_mcp.log import chain as decision_log
from tests.conftest import sjc_exe

TOOL_OUTPUT = "ok  github.com/acme/limiter 0.412s"
SUPPORTED = "- `go test ./...` passes: ok github.com/acme/limiter 0.412s"
PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process."


def line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-11-30T10:00:00.000Z", "type": kind, "payload": payload}) + "\n"


def compacted(invented: str) -> str:
    summary = f"## Progress\n{SUPPORTED}\n\n## Next steps\n{invented}\n"
    return line("compacted", {"message": f"{PREFIX}\n{summary}", "replacement_history": []})


def rollout(path: Path, invented: str = "- Publish a blog post about the rewrite") -> Path:
    path.write_text(
        line("session_meta", {"id": "cx", "cwd": str(path.parent)})
        + line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the limiter test"}]},
        )
        + line(
            "response_item",
            {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": '{"cmd": "go test ./..."}'},
        )
        + line("response_item", {"type": "function_call_output", "call_id": "c1", "output": TOOL_OUTPUT})
        + compacted(invented)
    )
    return path


class Codex:
    """Sends the hook events of one Codex session at ``rollout``."""

    def __init__(self, tmp: Path, rollout_path: Path) -> None:
        self.home = tmp / "home"
        self.rollout = rollout_path
        self.base = {"session_id": "cx", "transcript_path": str(rollout_path), "cwd": str(tmp), "model": "gpt-5"}

    def send(
        self, event: str, env_extra: dict[str, str] | None = None, **extra: Any
    ) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, HOME=str(self.home), **(env_extra or {}))
        env.pop("SJC_DISABLE", None)
        payload = {**self.base, "hook_event_name": event, **extra}
        r = subprocess.run(
            [sjc_exe(), "hook", "codex"], input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60
        )
        assert r.returncode == 0, r.stderr
        return r

    def context(self, r: subprocess.CompletedProcess[str], event: str) -> str | None:
        if not r.stdout.strip():
            return None
        out = json.loads(r.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == event
        return str(out["additionalContext"])

    def records(self) -> list[dict[str, Any]]:
        path = self.home / ".local" / "state" / "sjc" / "decisions.jsonl"
        return [rec for _, rec, _ in decision_log.read(path)] if path.exists() else []


@pytest.fixture
def codex(tmp_path: Path) -> Codex:
    return Codex(tmp_path, rollout(tmp_path / "rollout.jsonl"))


def test_post_compact_judges_and_session_start_delivers_once(codex):
    r = codex.send("PostCompact", trigger="auto", turn_id="t1")
    assert "kept 1, flagged 1 entry" in json.loads(r.stdout)["systemMessage"]
    note = codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    assert note is not None and "Publish a blog post" in note and "go test" not in note
    assert codex.context(codex.send("UserPromptSubmit", prompt="go on", turn_id="t2"), "UserPromptSubmit") is None
    recs = codex.records()
    assert [(r["event"], r["status"], r["pruned"]) for r in recs] == [("PostCompact", "judged", 1)]


def test_session_start_judges_when_post_compact_did_not_run(codex):
    note = codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    assert note is not None and "Publish a blog post" in note
    assert [(r["event"], r["status"]) for r in codex.records()] == [("SessionStart", "judged")]


def test_session_start_other_sources_do_nothing(codex):
    for source in ("startup", "resume", "clear"):
        assert codex.send("SessionStart", source=source).stdout == ""
    assert codex.records() == []


def test_manual_compaction_note_goes_with_the_next_prompt(codex):
    codex.send("PostCompact", trigger="manual", turn_id="t1")  # no SessionStart follows a manual compaction
    note = codex.context(codex.send("UserPromptSubmit", prompt="go on", turn_id="t2"), "UserPromptSubmit")
    assert note is not None and "Publish a blog post" in note
    assert codex.send("UserPromptSubmit", prompt="and?", turn_id="t3").stdout == ""


def test_a_newer_compaction_replaces_a_note_not_yet_delivered(codex):
    codex.send("PostCompact", trigger="manual", turn_id="t1")
    with codex.rollout.open("a") as fh:
        fh.write(compacted("- Rename the repository to limiter-ng"))
    codex.send("PostCompact", trigger="auto", turn_id="t2")
    note = codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    assert note is not None and "Rename the repository" in note and "Publish a blog post" not in note
    assert codex.send("UserPromptSubmit", prompt="go on").stdout == ""


def test_session_start_sees_a_compaction_post_compact_missed(codex):
    codex.send("PostCompact", trigger="auto", turn_id="t1")
    codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    with codex.rollout.open("a") as fh:  # a second compaction whose PostCompact never ran
        fh.write(compacted("- Rename the repository to limiter-ng"))
    note = codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    assert note is not None and "Rename the repository" in note
    assert [(r["event"], r["boundary"]) for r in codex.records()] == [("PostCompact", 0), ("SessionStart", 1)]


def test_a_summary_with_nothing_unsupported_leaves_no_note(tmp_path):
    path = tmp_path / "rollout.jsonl"
    rollout(path)
    text = path.read_text().replace("\\n\\n## Next steps\\n- Publish a blog post about the rewrite", "")
    path.write_text(text)
    codex = Codex(tmp_path, path)
    codex.send("PostCompact", trigger="auto")
    assert codex.send("SessionStart", source="compact").stdout == ""
    assert codex.send("UserPromptSubmit", prompt="go on").stdout == ""
    assert [r["pruned"] for r in codex.records()] == [0]


def test_server_side_summary_is_nothing_to_judge(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_text(line("session_meta", {"id": "cx"}) + line("compacted", {"message": "", "replacement_history": []}))
    codex = Codex(tmp_path, path)
    assert codex.send("PostCompact", trigger="auto").stdout == ""
    assert codex.send("SessionStart", source="compact").stdout == ""
    assert {r["status"] for r in codex.records()} == {"nothing"}


@pytest.mark.slow
def test_a_missing_rollout_never_breaks_codex(tmp_path):
    (tmp_path / "cfg.toml").write_text("[hook]\ntime_budget_s = 1\n")
    codex = Codex(tmp_path, tmp_path / "absent.jsonl")
    r = codex.send("SessionStart", env_extra={"SJC_CONFIG": str(tmp_path / "cfg.toml")}, source="compact")
    assert r.stdout == "" and "sjc hook:" in r.stderr
    assert codex.records()[-1]["status"] in ("error", "timeout")


def test_a_rollout_that_starts_mid_session_says_so_and_flags_only_what_a_source_contradicts(tmp_path):
    """No ``session_meta`` first: the rollout is a tail. The unsourced plan is left unjudged, the
    contradicted value is flagged, and both the user's line and the model's note say why."""
    path = tmp_path / "rollout.jsonl"
    rollout(path)
    lines = path.read_text().splitlines(keepends=True)
    summary = (
        "## Progress\n- `go test ./...` passes: ok github.com/acme/limiter in 9.870s\n\n"
        "## Next steps\n- Publish a blog post about the rewrite\n"
    )
    tail = [*lines[1:-1], line("compacted", {"message": f"{PREFIX}\n{summary}", "replacement_history": []})]
    path.write_text("".join(tail))  # no session_meta: the file starts mid-session
    codex = Codex(tmp_path, path)
    r = codex.send("PostCompact", trigger="auto", turn_id="t1")
    message = json.loads(r.stdout)["systemMessage"]
    assert "starts mid-session" in message and "flagged 1 entry" in message
    note = codex.context(codex.send("SessionStart", source="compact"), "SessionStart")
    assert note is not None and "starts mid-session" in note and "9.870s" in note
    assert "Publish a blog post" not in note  # its source may lie before the file: unjudged, not flagged
    (rec,) = codex.records()
    assert rec["incomplete_span"] is True and any("incomplete span" in w for w in rec["warnings"])
