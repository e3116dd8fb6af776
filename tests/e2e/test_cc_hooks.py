"""The sjc hooks inside the real Claude Code CLI (``sjc install claude-code`` in a throw-away HOME, the
CLI talking straight to the scripted model): the note naming the unsupported entries reaches the model,
a hooked ``/compact`` costs little, the switches work, uninstall restores the settings.

Facts of the real CLI (2.1.332) these tests rely on and check, seen with probe hooks:

- At a compaction the hooks run one after the other, each once the one before has exited:
  PreCompact, the compaction request, SessionStart (source "compact"), PostCompact; then the boundary
  and summary are written to the transcript and the next request goes out. SessionStart(compact) is
  handed no summary and cannot find it in the transcript: it runs before anything can be judged.
- PostCompact's plain stdout reaches the user (and, after a manual /compact, the model inside
  <local-command-stdout>); its hookSpecificOutput is rejected by Claude Code's validation.
- UserPromptSubmit and PostToolBatch additionalContext reach the model's next request.
- Claude Code writes the transcript behind the conversation: when PostCompact runs in the middle of a
  turn, the results of the tool batch just before the compaction may not be in it yet (seen both ways);
  PostToolBatch's payload (``tool_calls``) has them.
"""

from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

import cc_fake
import pytest
from cc_fake import FakeClaudeAPI
from cc_host import ANSWER, User, after

pytestmark = pytest.mark.e2e

HEAD = "sjc (source-judged compaction)"
AUTO = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}
INSTALLED = {"PreCompact", "PostCompact", "UserPromptSubmit", "PostToolBatch"}
# a fact only the output of the tool batch right before the auto-compaction shows (the command prints it
# from base64, so neither the prompt nor the call has its words); Claude Code may not have written that
# output to the transcript yet when PostCompact runs (its writes lag; seen missing, and seen there)
LATE = "latency 37ms on shard quokka-3"
LATE_CMD = "echo aGVhbHRoY2hlY2sgbGF0ZW5jeSAzN21zIG9uIHNoYXJkIHF1b2trYS0z | base64 -d"


def note_of(ex: cc_fake.Exchange) -> str | None:
    """The sjc note in what a request showed the model, if any."""
    t = ex.text
    i = t.find(HEAD)
    return t[i : i + 3000] if i >= 0 else None


def named(note: str) -> list[str]:
    return [k for k in cc_fake.INVENTED_KEYS if f'"{k}' in note]


def hook_records(user: User, event: str | None = None) -> list[dict]:
    recs = [r for r in user.decisions() if r.get("surface") == "hook"]
    return [r for r in recs if event is None or r.get("event") == event]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cc-hooks")


@pytest.fixture(scope="module")
def hooked(root: Path, fake: FakeClaudeAPI) -> User:
    user = User(root / "hooked", fake.url)
    r = user.sjc("install", "claude-code")
    assert r.returncode == 0, r.stderr
    hooks = json.loads(user.settings.read_text())["hooks"]
    assert set(hooks) == INSTALLED, hooks
    return user


@pytest.fixture(scope="module")
def plain(root: Path, fake: FakeClaudeAPI) -> User:
    return User(root / "plain", fake.url)


PROBE = """
import json, os, sys, time
start = time.time()
p = json.load(sys.stdin)
event, source = p.get("hook_event_name"), p.get("source") or p.get("trigger")
path = p.get("transcript_path") or ""
written = os.path.exists(path) and "compact_boundary" in open(path).read()
time.sleep(0.2)  # long enough to see whether the next hook waits for this one
row = {"event": event, "source": source, "start": start, "end": time.time(), "written": written,
       "summary": bool(p.get("compact_summary"))}
with open(sys.argv[1], "a") as fh:
    fh.write(json.dumps(row) + "\\n")
if event in ("SessionStart", "PostCompact"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": "PROBE-" + event}}))
"""


@pytest.mark.parametrize("how", ["manual", "auto"])
def test_what_claude_code_hands_the_compaction_hooks(root: Path, fake: FakeClaudeAPI, how: str) -> None:
    """The host facts the hook design rests on, from probe hooks in the real CLI."""
    user = User(root / f"probe-{how}", fake.url)
    script, rows = root / f"probe-{how}.py", root / f"probe-{how}.jsonl"
    script.write_text(PROBE)
    cmd = {"type": "command", "command": f"python3 {script} {rows}"}
    events = {"PreCompact": "manual|auto", "SessionStart": "compact", "PostCompact": "manual|auto"}
    user.settings.parent.mkdir(parents=True)
    user.settings.write_text(json.dumps({"hooks": {e: [{"matcher": m, "hooks": [cmd]}] for e, m in events.items()}}))
    work = root / f"work-probe-{how}"
    sid = user.session(work)
    if how == "manual":
        user.compact(work)
        user.ask(work, ANSWER)
    else:
        fake.report_input_tokens(sid, 95_000)
        user.ask(work, ANSWER, env=AUTO)
    seen = [json.loads(line) for line in rows.read_text().splitlines()]
    # one after the other, each once the one before has exited, before the summary is in the transcript;
    # only PostCompact is handed the summary
    assert [(r["event"], r["source"]) for r in seen] == [
        ("PreCompact", how),
        ("SessionStart", "compact"),
        ("PostCompact", how),
    ]
    assert all(b["start"] >= a["end"] for a, b in itertools.pairwise(seen))
    assert not [r for r in seen if r["written"]] and [r["summary"] for r in seen] == [False, False, True]
    # SessionStart(compact) additionalContext reaches the next request; PostCompact's is refused (after a
    # manual /compact the refusal is in the command output the model sees)
    compaction = next(e for e in fake.requests(sid) if e.kind == "compaction")
    nxt = after(fake.requests(sid), compaction)[0].text
    assert "SessionStart hook additional context: PROBE-SessionStart" in nxt
    assert "hook additional context: PROBE-PostCompact" not in nxt
    assert ("Hook JSON output validation failed" in nxt) == (how == "manual")


def test_install_and_uninstall_keep_the_users_settings(root: Path, fake: FakeClaudeAPI) -> None:
    user = User(root / "settings", fake.url)
    assert user.sjc("install", "claude-code").returncode == 0
    assert set(json.loads(user.settings.read_text())["hooks"]) == INSTALLED
    assert user.sjc("uninstall", "claude-code").returncode == 0
    assert not user.settings.exists() or json.loads(user.settings.read_text()) in ({}, {"hooks": {}})

    mine = {
        "cleanupPeriodDays": 45,
        "permissions": {"allow": ["Bash(echo:*)"]},
        "hooks": {"Notification": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]},
    }
    user.settings.write_text(json.dumps(mine, indent=2))
    assert user.sjc("install", "claude-code").returncode == 0
    installed = json.loads(user.settings.read_text())
    assert installed["cleanupPeriodDays"] == 45 and installed["permissions"] == mine["permissions"]
    assert set(installed["hooks"]) == INSTALLED | {"Notification"}
    assert user.sjc("uninstall", "claude-code").returncode == 0
    assert json.loads(user.settings.read_text()) == mine


def test_manual_compact_the_next_request_carries_the_note(hooked: User, plain: User, fake: FakeClaudeAPI, root: Path):
    seconds: dict[str, list[float]] = {"hooked": [], "plain": []}
    for name, user in (("hooked", hooked), ("plain", plain)):
        work = root / f"work-manual-{name}"
        sid = user.session(work)
        seconds[name].append(user.compact(work).seconds)
        user.ask(work, ANSWER)
        seconds[name].append(user.compact(work).seconds)  # a second compaction in the same session
        user.ask(work, "And the host? [[bash echo db-7.internal]]")
        if name == "plain":
            assert not [e for e in fake.requests(sid) if note_of(e)]
            continue
        asked = [e for e in fake.requests(sid) if e.kind == "compaction"]
        assert len(asked) == 2
        # the model's next request after each /compact carries the note naming every invented entry (the
        # second summary repeats them: the first summary, flagged but not edited, is no source for them)
        for k, compaction in enumerate(asked):
            note = note_of(after(fake.requests(sid), compaction)[0])
            assert note is not None, f"the next request after /compact #{k + 1} has no sjc note"
            assert sorted(named(note)) == sorted(cc_fake.INVENTED_KEYS), f"/compact #{k + 1}: {note}"
            assert not [s for s in compaction.answer["supported"] if s.strip().lstrip("- ") in note], note
        # it was judged once, by PostCompact, and handed over once
        judged = hook_records(hooked, "PostCompact")
        assert judged and all(r["status"] == "judged" for r in judged)
        handed = [e for e in fake.requests(sid) if e.kind == "ordinary" and (note_of(e) or "").startswith(HEAD)]
        assert handed and all(e.text.count(HEAD) <= 2 for e in handed), "a note was handed over more than once"
    # what a hooked /compact costs, for the record (pytest -s): no limit here, a loaded machine sets it. That
    # PostCompact hands the judgment to a process of its own, loading no judge, is tests/hook/test_hook.py's
    # to check; benchmarks/run.py times each hook event
    extra = statistics.median(seconds["hooked"]) - statistics.median(seconds["plain"])
    print(f"/compact seconds: hooked {seconds['hooked']}, without hooks {seconds['plain']}, extra {extra:.2f}")


def test_auto_compaction_the_note_reaches_the_model_at_the_first_hook_after_it(
    hooked: User, fake: FakeClaudeAPI, root: Path
) -> None:
    work = root / "work-auto"
    sid = hooked.session(work)
    fake.report_input_tokens(sid, 95_000)
    hooked.ask(work, f"Is the shard healthy? [[bash {LATE_CMD}]] [[bash echo second check]]", env=AUTO)
    reqs = fake.requests(sid)
    asked = [e for e in reqs if e.kind == "compaction"]
    assert len(asked) == 1 and hooked.compactions(sid)[0].trigger == "auto"
    following = after(reqs, asked[0])
    assert len(following) >= 2, "the turn did not go on after the compaction"
    # FACT (2.1.332): the request that continues the turn right after an auto-compaction is sent with no
    # hook in between that could add to it; the note rides on the next tool batch's hook
    assert note_of(following[0]) is None
    note = note_of(following[1])
    assert note is not None, "the request after the first tool batch since the compaction has no sjc note"
    assert sorted(named(note)) == sorted(cc_fake.INVENTED_KEYS), note
    # the output of the batch just before the compaction counts as a source
    rec = [r for r in hook_records(hooked, "PostCompact") if r.get("session") == sid][-1]
    late = [e for e in rec["entries"] if LATE in e.get("text", "")]
    assert late and all(e["decision"] == "keep" for e in late), rec["entries"]
    assert LATE not in note


def test_kill_switch_file_and_sjc_disable(hooked: User, fake: FakeClaudeAPI, root: Path) -> None:
    switch = hooked.home / ".config" / "sjc" / "disabled"
    switch.parent.mkdir(parents=True, exist_ok=True)
    switch.touch()
    try:
        for name, env in (("kill-switch", None), ("sjc-disable", {"SJC_DISABLE": "1"})):
            if name == "sjc-disable":
                switch.unlink()
            before = len(hook_records(hooked))
            work = root / f"work-{name}"
            sid = hooked.session(work, env=env)
            hooked.compact(work, env=env)
            hooked.ask(work, ANSWER, env=env)
            assert len([e for e in fake.requests(sid) if e.kind == "compaction"]) == 1
            assert not [e for e in fake.requests(sid) if note_of(e)], f"{name}: a note reached the model"
            new = hook_records(hooked)[before:]
            assert [r["status"] for r in new] == ["disabled"], f"{name}: {new}"
    finally:
        switch.unlink(missing_ok=True)


def test_uninstall_restores_the_settings_and_stops_the_hooks(hooked: User, fake: FakeClaudeAPI, root: Path) -> None:
    assert hooked.sjc("uninstall", "claude-code").returncode == 0
    assert not hooked.settings.exists() or not json.loads(hooked.settings.read_text()).get("hooks")
    before = len(hook_records(hooked))
    work = root / "work-uninstalled"
    sid = hooked.session(work)
    hooked.compact(work)
    hooked.ask(work, ANSWER)
    assert not [e for e in fake.requests(sid) if note_of(e)]
    assert len(hook_records(hooked)) == before
    assert not (hooked.home / ".local" / "state" / "sjc" / "sessions" / f"{sid}.json").exists()
