"""The hook run as the host runs it: a subprocess, the hook JSON on stdin, stdout read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from sjc_mcp import log as decision_log
from tests.conftest import FIXTURES, sjc_exe
from tests.test_hosts import cc_record, small_cc

CC_FIXTURES = sorted((FIXTURES / "claude-code").glob("*.jsonl")) if (FIXTURES / "claude-code").is_dir() else []


def run_hook(host: str, payload: dict | str, home: Path, timeout: float = 60, **env):
    full = dict(os.environ)
    full.update({"HOME": str(home), **env})
    full.pop("SJC_DISABLE", None) if "SJC_DISABLE" not in env else None
    data = payload if isinstance(payload, str) else json.dumps(payload)
    t0 = time.monotonic()
    r = subprocess.run([sjc_exe(), "hook", host], input=data, capture_output=True, text=True, env=full, timeout=timeout)
    r.elapsed = time.monotonic() - t0  # type: ignore[attr-defined]
    return r


def log_records(home: Path) -> list[dict]:
    path = home / ".local" / "state" / "sjc" / "decisions.jsonl"
    return [rec for _, rec, _ in decision_log.read(path)] if path.exists() else []


def session_start(path: Path, session: str = "s1") -> dict:
    return {
        "session_id": session,
        "transcript_path": str(path),
        "cwd": str(path.parent),
        "hook_event_name": "SessionStart",
        "source": "compact",
    }


@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
@pytest.mark.parametrize("fixture", CC_FIXTURES, ids=lambda p: p.name[:20])
def test_session_start_on_every_real_fixture(fixture, tmp_path):
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    home = tmp_path / "home"
    r = run_hook("claude-code", session_start(path), home)
    assert r.returncode == 0, r.stderr
    recs = log_records(home)
    assert len(recs) == 1 and recs[0]["status"] == "judged" and recs[0]["event"] == "SessionStart"
    if recs[0]["pruned"] == 0:
        assert r.stdout == ""
        return
    out = json.loads(r.stdout)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart" and len(ctx) <= 10_000
    from sjc_mcp.hosts import read_boundary

    summary = read_boundary(path).summary
    quoted = [line.split('] "', 1)[1][:-1] for line in ctx.splitlines() if line.startswith("- [")]
    assert quoted and all(q in summary for q in quoted)


def test_kill_switch_file_means_no_output_and_a_disabled_record(tmp_path):
    path = small_cc(tmp_path)
    home = tmp_path / "home"
    (home / ".config" / "sjc").mkdir(parents=True)
    (home / ".config" / "sjc" / "disabled").touch()
    r = run_hook("claude-code", session_start(path), home)
    assert r.returncode == 0 and r.stdout == ""
    assert [rec["status"] for rec in log_records(home)] == ["disabled"]


@pytest.mark.parametrize("payload", ["{not json", "[1, 2]", ""])
def test_bad_payload_exits_0_silently(tmp_path, payload):
    home = tmp_path / "home"
    r = run_hook("claude-code", payload, home)
    assert r.returncode == 0 and r.stdout == ""
    if payload:
        assert "sjc hook:" in r.stderr and "Traceback" not in r.stderr
        assert log_records(home)[-1]["status"] == "error"


def test_corrupt_transcript_exits_0_with_no_output(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"uuid": "x", "parentUuid": null, garbage\n\x00\x01 not json\n')
    home = tmp_path / "home"
    cfg = tmp_path / "c.toml"
    cfg.write_text("[hook]\ntime_budget_s = 2\n")
    r = run_hook("claude-code", session_start(bad), home, SJC_CONFIG=str(cfg))
    assert r.returncode == 0 and r.stdout == ""
    assert log_records(home)[-1]["status"] in ("error", "timeout")


def test_bad_config_exits_0(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("threshold = 7\n")
    r = run_hook("claude-code", session_start(small_cc(tmp_path)), tmp_path / "home", SJC_CONFIG=str(cfg))
    assert r.returncode == 0 and r.stdout == "" and "threshold" in r.stderr


def test_waits_for_a_lagging_transcript_then_judges_once(tmp_path):
    path = small_cc(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    # the file holds only the first compaction when the hooks fire
    head = "".join(lines[:-2])
    path.write_text(head)
    home = tmp_path / "home"
    pre = {
        "session_id": "s1",
        "transcript_path": str(path),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
        "custom_instructions": "keep the push result",
    }
    assert run_hook("claude-code", pre, home).stdout == ""

    def late_write():
        time.sleep(1.5)
        with path.open("a") as fh:
            fh.write("".join(lines[-2:]))

    threading.Thread(target=late_write).start()
    r = run_hook("claude-code", session_start(path), home)
    assert r.returncode == 0, r.stderr
    judged = [rec for rec in log_records(home) if rec["status"] == "judged"]
    assert len(judged) == 1 and judged[0]["boundary"] == 1
    # PostCompact for the same compaction: one line for the user, no second judgment
    raw = "<analysis>x</analysis>\n<summary>\n1. Primary Request and Intent:\n   - push\n</summary>"
    post = {
        "session_id": "s1",
        "transcript_path": str(path),
        "hook_event_name": "PostCompact",
        "trigger": "manual",
        "compact_summary": raw,
    }
    r2 = run_hook("claude-code", post, home)
    assert r2.returncode == 0 and r2.stdout.startswith("sjc: compaction summary judged")
    assert len([rec for rec in log_records(home) if rec["status"] == "judged"]) == 1


def test_post_compact_alone_judges_the_raw_summary(tmp_path):
    path = small_cc(tmp_path)
    with path.open("a") as fh:
        fh.write(json.dumps(cc_record("u9", "S1", "user", "deploy to staging now")) + "\n")
    raw = (
        "<analysis>thinking</analysis>\n<summary>\n1. Primary Request and Intent:\n   - deploy to staging\n\n"
        "7. Pending Tasks:\n   - Email the release notes to every customer\n</summary>"
    )
    post = {"session_id": "s2", "transcript_path": str(path), "hook_event_name": "PostCompact", "compact_summary": raw}
    home = tmp_path / "home"
    r = run_hook("claude-code", post, home)
    assert r.returncode == 0 and "flagged" in r.stdout
    rec = log_records(home)[-1]
    assert rec["status"] == "judged" and rec["event"] == "PostCompact"
    assert any(e["decision"] == "prune" and "Email" in e["text"] for e in rec["entries"])


def test_time_budget_gives_up_cleanly(tmp_path):
    path = small_cc(tmp_path)
    home = tmp_path / "home"
    state = home / ".local" / "state" / "sjc" / "sessions"
    state.mkdir(parents=True)
    (state / "s1.json").write_text(json.dumps({"pre_compact": {"boundaries_before": 5}}))  # waits for a 6th
    cfg = tmp_path / "c.toml"
    cfg.write_text("[hook]\ntime_budget_s = 1.0\n")
    r = run_hook("claude-code", session_start(path), home, SJC_CONFIG=str(cfg))
    assert r.returncode == 0 and r.stdout == ""
    assert r.elapsed < 8
    assert log_records(home)[-1]["status"] in ("timeout", "error")


def test_codex_post_compact_then_user_prompt_submit(tmp_path):
    def line(t, payload):
        return json.dumps({"timestamp": "t", "type": t, "payload": payload}) + "\n"

    path = tmp_path / "rollout.jsonl"
    path.write_text(
        line("session_meta", {"id": "cx"})
        + line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix the flaky limiter test"}],
            },
        )
        + line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": '{"command": ["go", "test", "./..."]}',
            },
        )
        + line(
            "response_item",
            {"type": "function_call_output", "call_id": "c1", "output": "ok  github.com/acme/limiter 0.412s"},
        )
        + line(
            "compacted",
            {
                "message": "**Progress**\n- `go test ./...` passes: ok github.com/acme/limiter 0.412s\n\n"
                "**Next steps**\n- Publish a blog post about the rewrite\n"
            },
        )
    )
    home = tmp_path / "home"
    base = {"session_id": "cx", "transcript_path": str(path), "cwd": str(tmp_path), "model": "gpt-5"}
    r = run_hook("codex", {**base, "hook_event_name": "PostCompact", "trigger": "auto"}, home)
    assert r.returncode == 0
    assert "sjc: compaction summary judged" in json.loads(r.stdout)["systemMessage"]
    u = run_hook("codex", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}, home)
    ctx = json.loads(u.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Publish a blog post" in ctx
    again = run_hook("codex", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "and?"}, home)
    assert again.stdout == ""


def test_codex_encrypted_summary_is_nothing_to_judge(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_text(json.dumps({"timestamp": "t", "type": "compacted", "payload": {"message": ""}}) + "\n")
    home = tmp_path / "home"
    r = run_hook("codex", {"session_id": "cx", "transcript_path": str(path), "hook_event_name": "PostCompact"}, home)
    assert r.returncode == 0 and r.stdout == ""
    rec = log_records(home)[-1]
    assert rec["status"] == "nothing" and "encrypted" in rec["note"]
