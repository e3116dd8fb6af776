"""sjc's context engine inside the real Hermes Agent (pinned from PyPI, offline, a scripted model).

Facts of hermes-agent 0.19.0 these tests rely on, each observed in their runs:

- A user plugin is a folder ``$HERMES_HOME/plugins/NAME/`` (``plugin.yaml`` + ``__init__.py`` with
  ``register(ctx)``), loaded only when ``plugins.enabled`` lists it; ``ctx.register_context_engine(engine)``
  offers a context engine, and ``context.engine: NAME`` makes every agent compact with a deep copy of it.
- ``hermes chat -q PROMPT -Q --yolo [--resume SID]`` runs one turn and prints ``session_id: SID`` on stderr.
  Hermes checks the provider's reported ``usage.prompt_tokens`` after each tool call: at or above its
  trigger (64000 for a 65536-token window) it compacts right away, mid-turn, then finishes the turn.
- The compaction request is ``POST /v1/chat/completions`` with exactly one user message beginning "You are a
  summarization agent creating a context checkpoint." (no tools, not streamed); a later one carries the
  previous summary (as Hermes keeps it: here the pruned one) after "PREVIOUS SUMMARY:".
- Manual compaction: the TUI gateway's ``session.compress`` (what ``/compress [focus]`` does in
  ``hermes --tui``; ``hermes chat -q "/compress"`` only sends the text to the model). It does not pass
  ``force`` to the engine (the classic CLI's ``/compress`` does).
- Hermes' pre-pass copies every message and replaces all but the newest of identical tool results with
  "[Duplicate tool output — same content as a more recent call]" before it picks the span to summarize.
- The summary reaches the next request behind Hermes' "[CONTEXT COMPACTION — REFERENCE ONLY]" notice and
  before its "--- END OF CONTEXT SUMMARY" line, and state.db (``compression.in_place: true``) holds it in
  an ``active = 1`` row of the same session, the pre-compaction rows kept with ``active = 0, compacted = 1``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hermes_fake import (
    END_MARKER,
    NOTICE,
    PROMPTS,
    SUPPORTED,
    WORKSPACE,
    FakeHermesModel,
    invented,
    summary,
    summary_message,
    without,
)
from hermes_harness import Hermes, config_yaml

FOCUS = "the gateway service"


def body_from_goal(text: str) -> str:
    """What follows Hermes' own task-snapshot section (which it rewrites): from "## Goal" to the END line."""
    start = text.index("## Goal")
    end = text.find(END_MARKER, start)
    return text[start : end if end >= 0 else len(text)].strip()


def expected(n: int) -> str:
    """The n-th compaction's summary with exactly its invented entries deleted."""
    return body_from_goal(without(summary(n), invented(n)))


def yaml_of(hm: Hermes, path: Path) -> Any:
    """A YAML file read by Hermes' own interpreter (PyYAML is Hermes' dependency, not sjc's)."""
    code = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"
    r = subprocess.run([str(hm.venv / "bin" / "python"), "-c", code, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


class Run:
    pass


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``sjc install hermes``; three turns (the third compacts mid-turn), a fourth, a manual ``/compress``
    with a focus, a fifth; then ``sjc uninstall hermes``."""
    hm = Hermes(tmp_path_factory.mktemp("hermes-plugin"), WORKSPACE)
    out = Run()
    out.hm = hm
    with FakeHermesModel() as fake:
        hm.config.write_text(config_yaml(fake.base_url))
        out.config_before = hm.config.read_bytes()
        out.install = hm.sjc("install", "hermes")
        assert out.install.returncode == 0, out.install.stderr
        out.config_installed = yaml_of(hm, hm.config)
        out.plugin_files = sorted(p.name for p in (hm.hermes_home / "plugins" / "sjc").iterdir())
        sid = hm.turn(PROMPTS[0]).session
        out.turns = [hm.turn(p, sid) for p in PROMPTS[1:4]]
        out.auto_compactions = len(fake.compaction_requests())
        with hm.gateway() as gw:
            out.compress = gw.compress(sid, focus=FOCUS)
        out.turns.append(hm.turn(PROMPTS[4], sid))
        out.sid = sid
        out.fake = fake
        out.compaction_prompts = [r["body"]["messages"][0]["content"] for r in fake.compaction_requests()]
        out.after = [fake.after_compaction(n) for n in range(2)]
        out.stored = hm.rows("SELECT content, active, compacted FROM messages WHERE session_id = ? ORDER BY id", (sid,))
        out.decisions = hm.decisions()
    out.judge = hm.sjc("judge", "--transcript", str(hm.db), "--json")
    out.replay = hm.sjc("replay", str(hm.hermes_home), env={"SJC_DECISION_LOG": str(hm.root / "replay.jsonl")})
    out.uninstall = hm.sjc("uninstall", "hermes")
    out.config_after = hm.config.read_bytes()
    out.plugin_left = (hm.hermes_home / "plugins" / "sjc").exists()
    return out


def test_install_enables_the_engine_in_hermes_config(session: Run) -> None:
    cfg = session.config_installed
    assert "sjc" in cfg["plugins"]["enabled"]
    assert cfg["context"]["engine"] == "sjc"
    assert cfg["model"]["base_url"] == session.fake.base_url  # the user's settings kept
    assert {"plugin.yaml", "__init__.py", "sjc.json"} <= set(session.plugin_files)


def test_an_automatic_compaction_reaches_the_model_pruned(session: Run) -> None:
    assert session.auto_compactions == 1, "the third turn should have compacted on its own"
    req = session.after[0]
    assert req is not None, "no request after the automatic compaction"
    text = summary_message(req["body"])
    assert text is not None and NOTICE in text and END_MARKER in text
    assert [e for e in invented(0) if e in text] == []
    assert [e for e in SUPPORTED if e not in text] == []
    assert body_from_goal(text) == expected(0)  # kept text byte for byte; headings and None. stay


def test_a_manual_compaction_reaches_the_model_pruned(session: Run) -> None:
    assert session.compress.get("status") == "compressed", session.compress
    prompt = session.compaction_prompts[1]
    assert "PREVIOUS SUMMARY:" in prompt and f'FOCUS TOPIC: "{FOCUS}"' in prompt
    # the iterative update starts from the pruned summary: Hermes never sees the first invented set again
    assert [e for e in invented(0) if e in prompt] == []
    req = session.after[1]
    assert req is not None, "no request after the manual compaction"
    text = summary_message(req["body"])
    assert text is not None and NOTICE in text
    assert [e for e in invented(1) if e in text] == []
    assert body_from_goal(text) == expected(1)


def test_state_db_holds_the_pruned_summaries(session: Run) -> None:
    summaries = [r for r in session.stored if NOTICE in (r["content"] or "")]
    assert len(summaries) >= 2  # the first (archived by the second compaction) and the second
    for r in summaries:
        assert [e for n in (0, 1) for e in invented(n) if e in r["content"]] == []
    active = [r["content"] for r in summaries if r["active"] == 1]
    assert len(active) == 1 and body_from_goal(active[0]) == expected(1)
    assert any(r["compacted"] == 1 and r["active"] == 0 for r in session.stored)


def test_each_compaction_is_in_the_decision_log(session: Run) -> None:
    judged = [d for d in session.decisions if d.get("host") == "hermes" and d.get("status") == "judged"]
    assert len(judged) == 2, session.decisions
    assert [d["pruned"] for d in judged] == [len(invented(0)), len(invented(1))]
    assert all(d.get("session") == session.sid for d in judged)


def test_sjc_reads_hermes_state_db(session: Run) -> None:
    """``sjc judge --transcript`` and ``sjc replay`` on the state.db Hermes wrote: its two compactions, the
    newest judged against its span, Hermes' notice and END line no entries of it."""
    assert session.judge.returncode == 0, session.judge.stderr
    entries = [e["text"] for e in json.loads(session.judge.stdout)["entries"]]
    assert entries and not [t for t in entries if t.startswith(("[CONTEXT COMPACTION", "--- END OF CONTEXT"))]
    assert [t for t in SUPPORTED if t not in entries] == []  # the stored summary's entries, each found again
    assert session.replay.returncode == 0, session.replay.stderr
    assert "replayed 2 compactions" in session.replay.stdout


def test_uninstall_restores_hermes_config_byte_for_byte(session: Run) -> None:
    assert session.uninstall.returncode == 0, session.uninstall.stderr
    assert session.config_after == session.config_before
    assert not session.plugin_left


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Two sessions that compact once each: one with sjc's kill switch set, one whose sjc side never
    answers within the plugin's timeout."""
    hm = Hermes(tmp_path_factory.mktemp("hermes-faults"), WORKSPACE)
    out = Run()
    out.hm = hm
    with FakeHermesModel() as fake:
        hm.config.write_text(config_yaml(fake.base_url))
        assert hm.sjc("install", "hermes").returncode == 0
        switch = hm.home / ".config" / "sjc" / "disabled"
        switch.parent.mkdir(parents=True, exist_ok=True)
        switch.touch()
        out.killed = _compacting_session(hm)
        out.killed_after = fake.after_compaction(0)
        switch.unlink()
        settings = hm.hermes_home / "plugins" / "sjc" / "sjc.json"
        hung = json.loads(settings.read_text())
        hung.update(command=[str(hm.venv / "bin" / "python"), "-c", "import time; time.sleep(120)"], timeout_s=3)
        settings.write_text(json.dumps(hung))
        out.hung = _compacting_session(hm)
        out.hung_after = fake.after_compaction(1)
        out.decisions = hm.decisions()
        logs = hm.hermes_home / "logs"
        out.hermes_log = (
            "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*.log"))) if logs.is_dir() else ""
        )
    return out


def _compacting_session(hm: Hermes) -> list[Any]:
    sid = hm.turn(PROMPTS[0]).session
    return [hm.turn(p, sid) for p in PROMPTS[1:4]]


def test_the_kill_switch_leaves_hermes_summary(faults: Run) -> None:
    assert faults.killed_after is not None
    text = summary_message(faults.killed_after["body"])
    assert text is not None and [e for e in invented(0) if e not in text] == []
    assert any(d.get("status") == "disabled" and d.get("host") == "hermes" for d in faults.decisions)


def test_sjc_not_answering_leaves_hermes_summary_and_the_session_goes_on(faults: Run) -> None:
    assert faults.hung_after is not None
    text = summary_message(faults.hung_after["body"])
    assert text is not None and [e for e in invented(1) if e not in text] == []
    assert "no answer from sjc within 3s" in faults.hung[1].stderr  # the turn that compacted (the third)
    assert "no answer from sjc within 3s" in faults.hermes_log  # and Hermes' own log ($HERMES_HOME/logs)
    assert faults.hung[-1].stdout.strip()  # the session answered after it
