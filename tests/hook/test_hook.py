"""The hook run as the host runs it: a subprocess, the hook JSON on stdin, stdout read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sjc_mcp.log import chain as decision_log
from tests.conftest import FIXTURES, sjc_exe
from tests.hosts.test_hosts import cc_record, small_cc

CC_FIXTURES = sorted((FIXTURES / "claude-code").glob("*.jsonl")) if (FIXTURES / "claude-code").is_dir() else []


def run_hook(host: str, payload: dict | str, home: Path, timeout: float = 60, **env):
    full = dict(os.environ)
    full.update({"HOME": str(home), **env})
    full.pop("SJC_DISABLE", None) if "SJC_DISABLE" not in env else None
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sjc_exe(), "hook", host], input=data, capture_output=True, text=True, env=full, timeout=timeout
    )


# what judging loads; a hook event that returns at once loads none of it (it hands the judgment to a process
# of its own)
JUDGING_MODULES = ("sjc_mcp.pipeline", "sjc_mcp.judges", "sjc_mcp.evidence", "sjc_mcp.config", "numpy")


def imported(stderr: str) -> set[str]:
    """The modules a process run with ``PYTHONPROFILEIMPORTTIME=1`` imported (its stderr)."""
    return {ln.rsplit("|", 1)[-1].strip() for ln in stderr.splitlines() if ln.startswith("import time:")}


def log_records(home: Path) -> list[dict]:
    path = home / ".local" / "state" / "sjc" / "decisions.jsonl"
    return [rec for _, rec, _ in decision_log.read(path)] if path.exists() else []


def event(name: str, path: Path | None, session: str = "s1", **extra) -> dict:
    out = {"session_id": session, "cwd": "/w", "hook_event_name": name, **extra}
    if path is not None:
        out["transcript_path"] = str(path)
    return out


def post_compact(path: Path | None, summary: str, session: str = "s1") -> dict:
    return event("PostCompact", path, session, trigger="auto", compact_summary=summary)


def before_boundary(fixture: Path, dest: Path, which: int = -1) -> str:
    """``dest``: the transcript as Claude Code has it when PostCompact runs (everything before the
    boundary of compaction ``which``); returns that compaction's summary as the hook is handed it."""
    lines = fixture.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if '"compact_boundary"' in line][which]
    dest.write_text("".join(lines[:at]))
    from sjc_mcp.hosts import read_boundary

    return read_boundary(fixture, which).summary


def judged(home: Path) -> list[dict]:
    return [r for r in log_records(home) if r["status"] == "judged"]


JUDGING = "sjc: judging the compaction summary"


def settle(home: Path, limit: float = 60) -> None:
    """Wait for the judgments PostCompact started in the background to end."""
    sessions = home / ".local" / "state" / "sjc" / "sessions"
    end = time.monotonic() + limit
    while list(sessions.glob("*.judging.*")):
        assert time.monotonic() < end, "a background judgment did not end"
        time.sleep(0.05)


ASK = "the flaky test in api/ again, please: run pytest and tell me which test fails"


def open_span(tmp_path: Path) -> Path:
    """A Claude Code transcript with two compactions and, after them, the span the next one compacts:
    the user's request, a pytest run and a file read."""
    path = small_cc(tmp_path)
    pytest_call = [{"type": "tool_use", "id": "t5", "name": "Bash", "input": {"command": "pytest -q api/"}}]
    failed = "1 failed, 44 passed\nFAILED api/test_limits.py::test_burst_window - assert 429 == 200"
    read_call = [{"type": "tool_use", "id": "t6", "name": "Read", "input": {"file_path": "api/limits.py"}}]
    records = [
        cc_record("u5", "S1", "user", ASK),
        cc_record("a5", "u5", "assistant", pytest_call),
        cc_record("r5", "a5", "user", [{"type": "tool_result", "tool_use_id": "t5", "content": failed}]),
        cc_record("a6", "r5", "assistant", read_call),
        cc_record(
            "r6", "a6", "user", [{"type": "tool_result", "tool_use_id": "t6", "content": "BURST_WINDOW_MS = 250"}]
        ),
    ]
    with path.open("a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in records))
    return path


SUPPORTED = [
    "   - pytest -q api/ reported 1 failed, 44 passed",
    "   - api/test_limits.py::test_burst_window fails with assert 429 == 200",
    "   - api/limits.py sets BURST_WINDOW_MS = 250",
]
INVENTED = "   - Email the release notes to every customer"
RAW = (
    "<analysis>\nI ran pytest -q api/ and read api/limits.py.\n</analysis>\n\n<summary>\n"
    "1. Primary Request and Intent:\n   - The user asked which test in api/ fails.\n\n"
    "3. Files and Code Sections:\n" + SUPPORTED[2] + "\n\n"
    "4. Errors and fixes:\n" + SUPPORTED[0] + "\n" + SUPPORTED[1] + "\n\n"
    "7. Pending Tasks:\n" + INVENTED + "\n</summary>"
)


def decisions_of(rec: dict) -> dict[str, str]:
    return {e["text"]: e["decision"] for e in rec["entries"]}


@pytest.mark.slow
@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
@pytest.mark.parametrize("fixture", CC_FIXTURES, ids=lambda p: p.name[:20])
def test_post_compact_on_every_real_fixture_then_the_note_is_handed_over(fixture, tmp_path):
    path = tmp_path / fixture.name
    summary = before_boundary(fixture, path)
    home = tmp_path / "home"
    r = run_hook("claude-code", post_compact(path, summary), home)
    assert r.returncode == 0 and r.stdout.startswith(JUDGING), r.stderr  # plain text: PostCompact is for the user
    settle(home)
    recs = log_records(home)
    assert len(recs) == 1 and recs[0]["status"] == "judged" and recs[0]["event"] == "PostCompact", recs
    given = run_hook("claude-code", event("UserPromptSubmit", path, prompt="go on"), home)
    if recs[0]["pruned"] == 0:
        assert given.stdout == ""
        return
    out = json.loads(given.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and len(out["additionalContext"]) <= 10_000
    quoted = [line.split('] "', 1)[1][:-1] for line in out["additionalContext"].splitlines() if line.startswith("- [")]
    assert quoted and all(q in summary for q in quoted)
    again = run_hook("claude-code", event("PostToolBatch", path, tool_calls=[]), home)
    assert again.stdout == "", "the note was handed over twice"


@pytest.mark.slow
def test_post_compact_returns_at_once_and_the_note_follows(tmp_path):
    """Nothing waits for the transcript: PostCompact starts judging what it is handed and returns; the
    note waits for the next prompt or tool batch (which waits for the judgment if it still runs);
    SessionStart is not used."""
    path = open_span(tmp_path)
    home = tmp_path / "home"
    pre = event("PreCompact", path, trigger="manual", custom_instructions="keep the pytest result")
    assert run_hook("claude-code", pre, home).stdout == ""
    start = run_hook("claude-code", event("SessionStart", path, source="compact"), home)
    assert start.returncode == 0 and start.stdout == "" and log_records(home) == []
    r = run_hook("claude-code", post_compact(path, RAW), home, PYTHONPROFILEIMPORTTIME="1")
    assert r.returncode == 0 and r.stdout.startswith(JUDGING), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    modules = imported(r.stderr)
    assert "sjc_mcp.hook" in modules and not {m for m in modules if m.startswith(JUDGING_MODULES)}, sorted(modules)
    batch = run_hook("claude-code", event("PostToolBatch", path, tool_calls=[]), home)  # waits for it
    [rec] = judged(home)
    assert rec["event"] == "PostCompact" and rec["boundary"] == 2  # the compaction being made (the third)
    decided = decisions_of(rec)
    assert decided[INVENTED] == "prune" and all(decided[x] == "keep" for x in SUPPORTED), decided
    ctx = json.loads(batch.stdout)["hookSpecificOutput"]
    assert ctx["hookEventName"] == "PostToolBatch"
    assert '"Email the release notes to every customer"' in ctx["additionalContext"]
    assert "[Analysis]" not in ctx["additionalContext"]  # the model never sees the <analysis> block
    assert run_hook("claude-code", event("UserPromptSubmit", path, prompt="and?"), home).stdout == ""
    # the same compaction reported again: no second judgment, no second note
    run_hook("claude-code", post_compact(path, RAW), home)
    settle(home)
    assert len(judged(home)) == 1
    assert run_hook("claude-code", event("UserPromptSubmit", path, prompt="and?"), home).stdout == ""


@pytest.mark.slow
def test_the_last_tool_batch_counts_when_the_transcript_lags(tmp_path):
    """Claude Code may not have written the results of the batch before a compaction when PostCompact
    runs; the PostToolBatch hook was handed them and they count as sources."""
    path = open_span(tmp_path)
    with path.open("a") as fh:  # the call is written, its result is not yet
        tool_use = [{"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "./probe"}}]
        fh.write(json.dumps(cc_record("a9", "r6", "assistant", tool_use)) + "\n")
    late = "   - The probe reported shard quokka-3 at 37ms"
    raw = RAW.replace("</summary>", f"\n5. Problem Solving:\n{late}\n</summary>")
    result = {"tool_name": "Bash", "tool_input": {"command": "./probe"}, "tool_use_id": "t9"}
    result["tool_response"] = {"stdout": "shard quokka-3 latency 37ms", "stderr": ""}
    for with_batch in (False, True):
        home = tmp_path / f"home-{with_batch}"
        if with_batch:
            assert run_hook("claude-code", event("PostToolBatch", path, tool_calls=[result]), home).stdout == ""
        run_hook("claude-code", post_compact(path, raw), home)
        settle(home)
        [rec] = judged(home)
        assert decisions_of(rec)[late] == ("keep" if with_batch else "prune"), rec["entries"]


def test_what_was_flagged_in_the_previous_summary_is_no_source(tmp_path):
    """A summary the hook could only flag, not edit, stays in the transcript; the next summary that
    repeats its flagged entries is not supported by it."""
    path = open_span(tmp_path)
    home = tmp_path / "home"
    run_hook("claude-code", post_compact(path, RAW), home)
    settle(home)
    assert decisions_of(judged(home)[0])[INVENTED] == "prune"
    # Claude Code writes that summary; the next span starts from it, and the next summary repeats the plan
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "B9",
        "parentUuid": None,
        "logicalParentUuid": "r6",
        "sessionId": "S",
        "timestamp": "2026-01-01T00:09:00Z",
    }
    stored = "This session is being continued from a previous conversation.\n\nSummary:\n"
    stored += RAW.split("<summary>\n")[1].replace("</summary>", "")
    records = [
        boundary,
        cc_record("S9", "B9", "user", stored, isCompactSummary=True),
        cc_record("u9", "S9", "user", "carry on with the burst window test"),
    ]
    with path.open("a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in records))
    run_hook("claude-code", post_compact(path, RAW), home)
    settle(home)
    rec = judged(home)[-1]
    decided = decisions_of(rec)
    assert decided[INVENTED] == "prune", rec["entries"]  # not supported by the summary it was flagged in
    assert all(decided[x] == "keep" for x in SUPPORTED)  # those the previous summary does support


def test_no_event_loads_the_config_or_the_judge_in_the_hook_process(tmp_path):
    """Every event runs before the config is loaded (PostCompact hands the judging to a process of its
    own): no pydantic, no numpy, no judge; that keeps each near Python's own start-up time."""
    path = open_span(tmp_path)
    code = (
        "import json, sys\n"
        "from sjc_mcp.hook import run_hook\n"
        "print(json.dumps([run_hook('claude-code', json.dumps(ev)) for ev in json.loads(sys.argv[1])]))\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'numpy') or m in "
        "('sjc_mcp.config', 'sjc_mcp.pipeline'))\n"
        "print(json.dumps(heavy))\n"
    )
    events = [
        event("PreCompact", path, trigger="auto", custom_instructions=None),
        event("UserPromptSubmit", path, prompt="go on"),
        event("PostToolBatch", path, tool_calls=[{"tool_use_id": "x", "tool_name": "Bash", "tool_response": "ok"}]),
        event("SessionStart", path, source="compact"),
        event("Stop", path),
        post_compact(path, RAW),
    ]
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home)}
    env.pop("SJC_DISABLE", None)
    r = subprocess.run([sys.executable, "-c", code, json.dumps(events)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    outputs, heavy = (json.loads(line) for line in r.stdout.splitlines())
    assert outputs[:-1] == [""] * 5 and outputs[-1].startswith(JUDGING)
    assert heavy == []
    settle(home)
    assert [rec["status"] for rec in log_records(home)] == ["judged"]


def test_an_event_sjc_ignores_imports_no_host_module_and_touches_nothing(tmp_path):
    """What a host sends that sjc does not act on (Claude Code's Stop and Notification, Codex's SessionStart
    at start-up, resume or clear) ends right after the payload is read: no host module, no session state,
    no config, no log (each is paid by every session's every such event)."""
    code = (
        "import json, sys\n"
        "from sjc_mcp.hook import run_hook\n"
        "print(json.dumps([run_hook(h, json.dumps(ev)) for h, ev in json.loads(sys.argv[1])]))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sjc_mcp.') and m != 'sjc_mcp.hook')))\n"
    )
    base = {"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path)}
    events = [
        ("claude-code", {**base, "hook_event_name": "Stop"}),
        ("claude-code", {**base, "hook_event_name": "Notification", "message": "waiting"}),
        *(("codex", {**base, "hook_event_name": "SessionStart", "source": s}) for s in ("startup", "resume", "clear")),
    ]
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home)}
    r = subprocess.run([sys.executable, "-c", code, json.dumps(events)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    outputs, loaded = (json.loads(line) for line in r.stdout.splitlines())
    assert outputs == [""] * len(events)
    assert loaded == []
    assert not home.exists()  # no state, no log written


@pytest.mark.slow
@pytest.mark.skipif(not CC_FIXTURES, reason="../shared/fixtures is absent: no real Claude Code transcripts")
def test_a_late_judgment_judges_the_span_before_the_compaction_claude_code_wrote_meanwhile(tmp_path):
    """The background judgment may start after Claude Code wrote the boundary, the summary and more;
    it judges the same span as one that ran while the transcript ended before the boundary."""
    fixture = CC_FIXTURES[0]
    cut = tmp_path / "cut.jsonl"
    summary = before_boundary(fixture, cut)
    later = tmp_path / "later.jsonl"
    later.write_text(fixture.read_text())
    decisions = []
    for name, path in (("cut", cut), ("later", later)):
        home = tmp_path / name
        job = {**post_compact(path, summary, session=name), "sjc_judge_now": True}
        job["sjc_transcript_size"] = cut.stat().st_size
        marker = home / "job.json"
        home.mkdir()
        marker.write_text(json.dumps({"payload": job, "config": None}))
        env = {**os.environ, "HOME": str(home)}
        env.pop("SJC_DISABLE", None)
        subprocess.run([sys.executable, "-m", "sjc_mcp.hook.claude_code", str(marker)], env=env, timeout=120)
        assert not marker.exists()
        [rec] = judged(home)
        decisions.append([(e["text"], e["decision"]) for e in rec["entries"]])
    assert decisions[0] == decisions[1]


def test_a_waiting_note_is_taken_once(tmp_path):
    from sjc_mcp.hook.state import SessionState

    state = SessionState(tmp_path, "s1")
    state.put_note({"text": "note", "key": "k"})
    got = []
    threads = [threading.Thread(target=lambda: got.append(state.take_note())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [g for g in got if g] == [{"text": "note", "key": "k"}]
    assert not state.note_waiting()


def test_kill_switch_file_means_no_output_and_a_disabled_record(tmp_path):
    path = open_span(tmp_path)
    home = tmp_path / "home"
    (home / ".config" / "sjc").mkdir(parents=True)
    (home / ".config" / "sjc" / "disabled").touch()
    for ev in (event("PreCompact", path, trigger="auto"), post_compact(path, RAW), event("UserPromptSubmit", path)):
        r = run_hook("claude-code", ev, home)
        assert r.returncode == 0 and r.stdout == ""
    assert [rec["status"] for rec in log_records(home)] == ["disabled"]
    assert not (home / ".local" / "state" / "sjc" / "sessions").exists()


@pytest.mark.parametrize("payload", ["{not json", "[1, 2]", ""])
def test_bad_payload_exits_0_silently(tmp_path, payload):
    home = tmp_path / "home"
    r = run_hook("claude-code", payload, home)
    assert r.returncode == 0 and r.stdout == ""
    if payload:
        assert "sjc hook:" in r.stderr and "Traceback" not in r.stderr
        assert log_records(home)[-1]["status"] == "error"


@pytest.mark.parametrize("what", ["corrupt", "missing"])
def test_no_readable_transcript_means_nothing_to_judge(tmp_path, what):
    bad = tmp_path / "t.jsonl"
    if what == "corrupt":
        bad.write_text('{"uuid": "x", "parentUuid": null, garbage\n\x00\x01 not json\n')
    home = tmp_path / "home"
    r = run_hook("claude-code", post_compact(bad, RAW), home)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    settle(home)
    assert [rec["status"] for rec in log_records(home)] == ["nothing"]
    assert run_hook("claude-code", event("UserPromptSubmit", bad, prompt="go"), home).stdout == ""


def test_post_compact_without_a_summary_is_an_error_not_a_crash(tmp_path):
    home = tmp_path / "home"
    r = run_hook("claude-code", event("PostCompact", small_cc(tmp_path), trigger="auto"), home)
    assert r.returncode == 0 and r.stdout == "" and "compact_summary" in r.stderr
    assert log_records(home)[-1]["status"] == "error"


def test_bad_config_exits_0(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("threshold = 7\n")
    home = tmp_path / "home"
    r = run_hook("claude-code", post_compact(small_cc(tmp_path), RAW), home, SJC_CONFIG=str(cfg))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    settle(home)
    [rec] = log_records(home)
    assert rec["status"] == "error" and "threshold" in " ".join(rec["errors"])


def test_time_budget_gives_up_cleanly(tmp_path):
    # a budget no judgment fits in (importing the judge alone takes longer): 10 ms was, at times, enough
    # for this small transcript's whole judgment once the patterns came from the cache
    cfg = tmp_path / "c.toml"
    cfg.write_text("[hook]\ntime_budget_s = 0.0001\n")
    home = tmp_path / "home"
    r = run_hook("claude-code", post_compact(small_cc(tmp_path), RAW), home, SJC_CONFIG=str(cfg))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    settle(home)
    assert log_records(home)[-1]["status"] == "timeout"
    assert run_hook("claude-code", event("UserPromptSubmit", None, prompt="go"), home).stdout == ""


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


def test_a_judgment_sweeps_away_the_state_of_sessions_idle_for_a_month(tmp_path):
    """Run as the host runs it: a Codex PostCompact judges, and the state files of sessions nobody has
    touched for over 30 days go; recent ones and the judged session's stay; a second judgment the same
    day does not sweep again."""
    from sjc_mcp.hook import state

    sessions = tmp_path / ".local" / "state" / "sjc" / "sessions"
    sessions.mkdir(parents=True)
    old = [sessions / n for n in ("gone.json", "gone.lock", "gone.recent.json", "gone.note", "gone.judging.1.2")]
    fresh = [sessions / n for n in ("busy.json", "busy.note")]
    month = time.time() - 31 * 86400
    for p in old + fresh:
        p.write_text("{}")
    for p in old:
        os.utime(p, (month, month))
    os.utime(fresh[0], (time.time() - 29 * 86400,) * 2)
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "cx"}})
        + "\n"
        + json.dumps({"timestamp": "t", "type": "compacted", "payload": {"message": "**Next steps**\n- Ship it\n"}})
        + "\n"
    )
    payload = {"session_id": "cx", "hook_event_name": "PostCompact", "transcript_path": str(rollout), "cwd": "/w"}
    r = run_hook("codex", payload, tmp_path)
    assert r.returncode == 0, r.stderr
    assert not [p for p in old if p.exists()], sorted(os.listdir(sessions))
    assert all(p.exists() for p in fresh) and (sessions / "cx.json").exists()
    # within a day: nothing is swept again, however old
    (sessions / "late.json").write_text("{}")
    os.utime(sessions / "late.json", (month, month))
    assert state.sweep(sessions) == 0 and (sessions / "late.json").exists()
    assert state.sweep(sessions, every_s=0) == 1 and not (sessions / "late.json").exists()
