"""The sjc hooks inside the real Codex CLI (no proxy: Codex talks to the scripted model directly).

Facts of Codex 0.171.0 these tests rely on, each observed in its runs:

- Hooks live in ``$CODEX_HOME/hooks.json``; Codex runs one only once ``$CODEX_HOME/config.toml`` trusts it
  (``[hooks.state."<canonical hooks.json path>:<event_snake>:<group>:<handler>"] trusted_hash =
  "sha256:…"``), and skips an untrusted one without a word in ``codex exec``. ``codex app-server``
  ``hooks/list`` reports ``trustStatus`` and the hash it expects (``currentHash``).
- At a compaction: PreCompact, the compaction request, the ``compacted`` record, PostCompact, then
  SessionStart with ``source: "compact"`` (matcher ``compact`` selects it); SessionStart's
  ``additionalContext`` is sent as a developer message right after the summary in the very next request,
  within the same turn, and stays in the history until the next compaction. This holds for mid_turn and
  pre_turn (``exec resume``) compactions. A manual compaction (``app-server thread/compact/start``, what
  the TUI's /compact does) runs PostCompact but no SessionStart: the note goes with the next prompt
  (UserPromptSubmit), which is then the very next request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import codex_fake as fake_model
import pytest
from codex_fake import SUPPORTED, FakeModel, messages, turn_metadata
from codex_harness import Codex

NOTE = "sjc (source-judged compaction)"


def notes(req: dict[str, Any]) -> list[str]:
    return [m for m in messages(req["body"], "developer") if m.startswith(NOTE)]


def session_of(req: dict[str, Any]) -> str:
    return str(turn_metadata(req["headers"]).get("session_id"))


def sjc_hooks(hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for h in hooks if "sjc-hook codex" in str(h.get("command"))]


class Run:
    pass


@pytest.fixture(scope="module")
def trusted(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``sjc install codex --trust`` with CODEX_HOME outside HOME, then one session through the three
    compaction phases, and a second session with the kill switch on."""
    root = tmp_path_factory.mktemp("codex-hooks")
    cx = Codex(root, codex_home=root / "elsewhere" / "codex-home")
    out = Run()
    out.cx = cx
    with FakeModel(always_big=True) as fake:
        cx.write_config(fake.base_url + "/v1", compact_limit=20_000)
        out.config_before = cx.config.read_bytes()
        out.install = cx.sjc("install", "codex", "--trust")
        with cx.app_server() as srv:
            out.hooks = srv.hooks(cx.work)
        out.hooks_file = (cx.codex_home / "hooks.json").exists(), (cx.home / ".codex" / "hooks.json").exists()
        out.config_installed = cx.config.read_text()
        r = cx.run(fake_model.PROMPT)
        assert r.returncode == 0, r.stderr[-2000:]
        fake.always_big = False  # after this resume's compaction the usage is small: no more auto compaction
        r = cx.run("resume", "--last", "What is left to do?")
        assert r.returncode == 0, r.stderr[-2000:]
        with cx.app_server() as srv:
            srv.compact(cx.thread_id())
        r = cx.run("resume", "--last", "Anything else?")
        assert r.returncode == 0, r.stderr[-2000:]
        out.thread = cx.thread_id()
        r = cx.run(fake_model.PROMPT, env={"SJC_DISABLE": "1"})  # a new session, kill switch on
        assert r.returncode == 0, r.stderr[-2000:]
        out.requests = fake.responses()
    out.decisions = [d for d in cx.decisions() if d.get("surface") == "hook"]
    out.uninstall = cx.sjc("uninstall", "codex")
    with cx.app_server() as srv:
        out.hooks_after = srv.hooks(cx.work)
    return out


def test_install_honours_codex_home_and_trusts_what_codex_expects(trusted: Run) -> None:
    assert trusted.install.returncode == 0, trusted.install.stderr
    assert trusted.hooks_file == (True, False)  # $CODEX_HOME/hooks.json, not ~/.codex/hooks.json
    hooks = sjc_hooks(trusted.hooks)
    assert sorted((h["eventName"], h["matcher"]) for h in hooks) == [
        ("postCompact", None),
        ("sessionStart", "compact"),
        ("userPromptSubmit", None),
    ]
    # the hash sjc computed is the one Codex computes, so Codex counts the hooks as trusted
    assert {h["trustStatus"] for h in hooks} == {"trusted"}
    text = trusted.config_installed
    for h in hooks:
        assert f"[hooks.state.{json.dumps(h['key'])}]\ntrusted_hash = {json.dumps(h['currentHash'])}\n" in text


def test_the_note_reaches_the_very_next_request_after_every_compaction(trusted: Run) -> None:
    reqs = [r for r in trusted.requests if session_of(r) == trusted.thread]
    comps = [(i, r) for i, r in enumerate(reqs) if r["answer"]["tag"] == "compaction"]
    phases = [turn_metadata(r["headers"])["compaction"]["phase"] for _, r in comps]
    assert phases == ["mid_turn", "pre_turn", "standalone_turn"], phases
    for i, comp in comps:
        nxt = reqs[i + 1]
        got = notes(nxt)
        # once: one copy
        assert len(got) == 1, (turn_metadata(comp["headers"])["compaction"]["phase"], nxt["answer"]["tag"])
        for inv in comp["answer"]["invented"]:
            assert inv.removeprefix("- ") in got[0]
        assert not any(s.removeprefix("- ")[:40] in got[0] for s in SUPPORTED)
    # mid_turn and pre_turn: the turn goes on with the note (SessionStart), not a prompt later
    assert [reqs[i + 1]["answer"]["tag"] for i, _ in comps[:2]] == ["after-summary", "text"]
    # manual: the next request is the next prompt's, the note with it (UserPromptSubmit)
    assert messages(reqs[comps[2][0] + 1]["body"], "user")[-1] == "Anything else?"
    # and the note stays in the history, once, until the next compaction
    assert len(notes(reqs[-1])) == 1


def test_each_compaction_judged_once_and_its_note_handed_over_once(trusted: Run) -> None:
    judged = [d for d in trusted.decisions if d.get("status") == "judged" and d.get("session") == trusted.thread]
    assert [d["boundary"] for d in judged] == [0, 1, 2] and {d["event"] for d in judged} == {"PostCompact"}
    assert all(d["pruned"] == 3 and d["kept"] == 2 for d in judged)
    state = trusted.cx.home / ".local" / "state" / "sjc" / "sessions" / f"{trusted.thread}.json"
    by = [rec.get("delivered_by") for rec in json.loads(state.read_text())["judged"].values()]
    assert by == ["SessionStart", "SessionStart", "UserPromptSubmit"]  # mid_turn, pre_turn, manual


def test_kill_switch_in_codex_env(trusted: Run) -> None:
    other = {session_of(r) for r in trusted.requests} - {trusted.thread}
    assert len(other) == 1
    reqs = [r for r in trusted.requests if session_of(r) in other]
    assert "compaction" in [r["answer"]["tag"] for r in reqs]
    assert not any(notes(r) for r in reqs)
    recs = [d for d in trusted.decisions if d.get("session") in other]
    assert recs and {d["status"] for d in recs} == {"disabled"}


def test_uninstall_removes_hooks_and_trust(trusted: Run) -> None:
    assert trusted.uninstall.returncode == 0, trusted.uninstall.stderr
    assert not (trusted.cx.codex_home / "hooks.json").exists()
    assert trusted.cx.config.read_bytes() == trusted.config_before
    assert sjc_hooks(trusted.hooks_after) == []


def test_untrusted_hooks_are_skipped_and_install_says_so(tmp_path: Path) -> None:
    cx = Codex(tmp_path)
    with FakeModel() as fake:
        cx.write_config(fake.base_url + "/v1")
        r = cx.sjc("install", "codex")
        assert r.returncode == 0 and "only after it is trusted" in r.stdout and "sjc install codex --trust" in r.stdout
        with cx.app_server() as srv:
            hooks = sjc_hooks(srv.hooks(cx.work))
        assert len(hooks) == 3 and {h["trustStatus"] for h in hooks} == {"untrusted"}
        run = cx.run(fake_model.PROMPT)
        assert run.returncode == 0
        assert "compaction" in fake.tags()
        assert not any(notes(q) for q in fake.responses())
    # Codex ran none of them, and said nothing about it
    assert cx.decisions() == []
    said = run.stderr.replace(str(tmp_path), "")
    assert not [ln for ln in said.splitlines() if ln.startswith("hook:") or "trust" in ln.lower()]
