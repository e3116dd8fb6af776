"""sjc's OpenClaw plugin in the real OpenClaw: a compaction provider that has the summary pruned before
OpenClaw stores it, without a proxy; ``sjc install openclaw`` / ``uninstall``.

Facts of OpenClaw 2026.9.6 these tests rely on, each observed in their runs:

- A native plugin (``openclaw.plugin.json`` + ``package.json`` ``openclaw.extensions``) loads from a folder
  named in ``plugins.load.paths``; ``plugins.entries.<id>.config`` reaches it as ``api.pluginConfig``
  (validated against the manifest's ``configSchema``). OpenClaw runs a copy of it (under the state
  folder's ``tmp/plugin-captures``) and warns that it cannot verify where it came from; it loads all the same.
- ``agents.defaults.compaction.provider: "<id>"`` makes the safeguard call the registered provider's
  ``summarize({messages, customInstructions, summarizationInstructions, previousSummary, signal})``
  instead of its own summariser: the messages are the structured ones (``user``, ``assistant`` with
  ``toolCall`` blocks, ``toolResult``), ``customInstructions`` the whole safeguard prompt, the previous
  summary the previous compaction entry's. ``before_compaction`` fires first, with the session's ids.
  The returned text is stored with OpenClaw's own sections appended (the split turn as verbatim
  ``- User:`` / ``- Tool result (exec):`` lines, no second model request; ``<read-files>``); the quality
  audit does not run on it. ``""`` or a throw: OpenClaw runs its own summariser instead, as if no
  provider were set.
- The plugin's request (agent-core's ``generateSummary`` with the model ``prepareSimpleCompletionModelForAgent``
  resolves) has OpenClaw's shape: the summariser's system prompt, ``<conversation>``, the safeguard prompt.
- A context engine (``registerContextEngine``, ``plugins.slots.contextEngine``) was tried as well and does
  not serve: its ``compact()`` delegating to the runtime returns the summary only after it is stored;
  ``rewriteTranscriptEntries`` rewrites ``message`` entries only, never a compaction entry; and without
  declaring turn fencing and an atomic ``commitTurn`` OpenClaw degrades it to the legacy engine every turn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import openclaw_fake as F
import pytest
from openclaw_fake import FakeModel, compaction_groups, has_headings_in_order, invented_in, without
from openclaw_harness import OpenClaw

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "sjc_mcp" / "plugins" / "openclaw"
STUB = Path(__file__).resolve().parent / "openclaw_stub_sjc.py"


class Run:
    oc: OpenClaw
    requests: list[F.Exchange]
    groups: list[list[F.Exchange]]
    stored: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    config_before: bytes
    config_installed: dict[str, Any]
    install: Any
    uninstall: Any
    config_after: bytes
    log: str


def _turns(oc: OpenClaw, fake: FakeModel, before_each: Any = None) -> None:
    """Two tool turns; a third whose answer reports a full window (OpenClaw compacts after it, in the
    background: the threshold), a turn and a tool turn, one that overflows (compaction, then the turn
    again), a compaction by hand and a last turn. ``before_each(i)`` runs before compaction ``i``."""
    oc.turn(F.PROMPT_BUILD)
    oc.turn(F.PROMPT_PORT)
    if before_each:
        before_each(0)
    fake.report_usage(32000, 2)
    oc.turn(F.PROMPT_TESTS)
    assert oc.wait_for_compactions(1), "no compaction after the threshold"
    oc.turn(F.PROMPT_BACKOFF)
    oc.turn(F.PROMPT_PORT)
    if before_each:
        before_each(1)
    fake.fail_overflow(1)
    oc.turn(F.PROMPT_AGAIN)  # overflow: compacts, retries
    if before_each:
        before_each(2)
    result = oc.compact()
    assert result.get("ok") and result.get("compacted"), result
    oc.turn(F.PROMPT_AGAIN)


def _finish(run: Run, oc: OpenClaw, fake: FakeModel) -> None:
    run.oc = oc
    run.requests = fake.requests()
    run.groups = compaction_groups(run.requests)
    run.stored = oc.compactions()
    run.decisions = oc.decisions()
    run.log = oc.log.read_text() if oc.log.exists() else ""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``sjc install openclaw`` into a config the user wrote, a session through the three triggers, then
    ``sjc uninstall openclaw``."""
    root = tmp_path_factory.mktemp("openclaw-plugin")
    oc = OpenClaw(root)
    out = Run()
    with FakeModel() as fake:
        oc.write_config(oc.config(fake.origin, {"keepRecentTokens": 200, "recentTurnsPreserve": 0}))
        out.config_before = oc.config_path.read_bytes()
        out.install = oc.sjc("install", "openclaw")
        out.config_installed = oc.read_config()
        with oc.gateway():
            _turns(oc, fake)
        _finish(out, oc, fake)
    out.uninstall = oc.sjc("uninstall", "openclaw")
    out.config_after = oc.config_path.read_bytes()
    return out


def test_install_selects_the_plugin_as_compaction_provider(run: Run) -> None:
    assert run.install.returncode == 0, run.install.stderr
    cfg = run.config_installed
    assert cfg["agents"]["defaults"]["compaction"]["provider"] == "sjc"
    assert cfg["agents"]["defaults"]["compaction"]["keepRecentTokens"] == 200  # the user's own keys stay
    (path,) = cfg["plugins"]["load"]["paths"]  # the plugin as this sjc installed it
    for name in ("openclaw.plugin.json", "package.json", "index.js"):
        assert (Path(path) / name).read_bytes() == (PLUGIN / name).read_bytes()
    entry = cfg["plugins"]["entries"]["sjc"]
    assert entry["enabled"] is True
    assert Path(entry["config"]["command"]).name == "sjc-hook"


def test_each_compaction_is_written_once_and_pruned_before_it_is_stored(run: Run) -> None:
    assert len(run.groups) == 3 and len(run.stored) == 3, [[e.answer["format"] for e in g] for g in run.groups]
    for group, entry in zip(run.groups, run.stored, strict=True):
        # the plugin's one request; no turn-prefix request (OpenClaw appends the split turn verbatim)
        assert [e.answer["format"] for e in group] == ["safeguard"]
        req = group[0]
        assert F.system_text("anthropic", req.body).startswith(F.SUMMARY_SYSTEM)
        assert req.prompt.startswith("<conversation>\n") and F.SAFEGUARD_MARK in req.prompt
        assert "Additional focus: Preserve all opaque identifiers exactly as written" in req.prompt
        summary = entry["summary"]
        assert not invented_in(summary), invented_in(summary)
        assert summary.startswith(without(req.answer["text"], req.answer["invented"]))
        assert all(line in summary.splitlines() for line in req.answer["supported"])
        assert has_headings_in_order(summary)


def test_the_previous_summary_is_redistilled(run: Run) -> None:
    """From the second compaction on, the previous (pruned) summary is the conversation's first item."""
    for group, prev in zip(run.groups[1:], run.stored[:-1], strict=True):
        prompt = group[0].prompt
        assert prompt.startswith("<conversation>\n[User]: <previous-compaction-summary>\n")
        assert prev["summary"].split("\n\n**Turn Context")[0].strip() in prompt


def test_the_next_request_carries_the_pruned_summary(run: Run) -> None:
    for entry, group in zip(run.stored, run.groups, strict=True):
        after = [e for e in run.requests if e.time > group[-1].time and e.kind == "ordinary"]
        wrapped = [t for t in F.user_texts(after[0].body) if t.startswith(F.SUMMARY_WRAPPER)]
        assert wrapped and entry["summary"] in wrapped[0]
        assert not invented_in(after[0].raw())


def test_every_judgment_is_in_the_decision_log(run: Run) -> None:
    judged = [d for d in run.decisions if d.get("status") == "judged"]
    assert len(judged) == 3, [d.get("status") for d in run.decisions]
    for d, group in zip(judged, run.groups, strict=True):
        assert d["host"] == "openclaw" and d.get("surface") == "hook"
        assert [x["text"] for x in d["entries"] if x["decision"] == "prune"] == group[0].answer["invented"]
        assert d.get("session")  # the session id from before_compaction


def test_uninstall_restores_the_config_byte_for_byte(run: Run) -> None:
    assert run.uninstall.returncode == 0, run.uninstall.stderr
    assert run.config_after == run.config_before


def test_switched_off_or_broken_sjc_leaves_openclaws_own_path(tmp_path: Path) -> None:
    """The kill switch, then a config sjc cannot read: each time the plugin returns "" and OpenClaw's own
    summariser runs (history and split-turn requests) and stores what the model wrote; sjc logs why."""
    oc = OpenClaw(tmp_path)
    kill = oc.home / ".config" / "sjc" / "disabled"
    config = oc.home / ".config" / "sjc" / "config.toml"

    def before(i: int) -> None:
        kill.unlink(missing_ok=True)
        config.unlink(missing_ok=True)
        if i == 0:
            kill.parent.mkdir(parents=True, exist_ok=True)
            kill.write_text("")
        elif i == 1:
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text("[judge\nthis is not toml")

    run = Run()
    with FakeModel() as fake:
        oc.write_config(oc.config(fake.origin, {"keepRecentTokens": 200, "recentTurnsPreserve": 0}))
        assert oc.sjc("install", "openclaw").returncode == 0
        with oc.gateway():
            _turns(oc, fake, before)
        _finish(run, oc, fake)
    assert len(run.stored) == 3
    for group, entry in zip(run.groups[:2], run.stored[:2], strict=True):
        # no request of the plugin's own: the check said no; then OpenClaw's history (+ prefix) requests
        history = [e for e in group if e.answer["format"] == "safeguard"]
        assert len(history) == 1, [e.answer["format"] for e in group]
        assert history[0].answer["text"] in entry["summary"]
        assert invented_in(entry["summary"])
    # the unreadable config's fault goes to the decision log the environment names (SJC_DECISION_LOG), as
    # everything else does, though no config could be read
    assert [d.get("status") for d in run.decisions] == ["disabled", "error", "judged"], run.decisions
    assert "not valid TOML" in run.decisions[1]["errors"][0]
    assert not (oc.home / ".local" / "state" / "sjc" / "decisions.jsonl").exists()
    # everything back in order: judged again. The to-dos OpenClaw's own summary carried over while sjc was off
    # are that previous summary's (after a compaction it is where the user's older asks live): kept, as
    # doubtful, not deleted for want of a user message asking for them
    carried = [e for e in run.decisions[2]["entries"] if invented_in(e["text"])]
    assert carried and all(e["decision"] == "keep" and e["reason"].startswith("doubtful, kept") for e in carried)


def test_a_hanging_failing_or_garbled_sjc_leaves_openclaws_own_path(tmp_path: Path) -> None:
    """sjc answering nothing in time, exiting with an error, or answering no JSON: the plugin gives up
    (within ``timeoutSeconds`` for the hang) and OpenClaw's own summariser runs; OpenClaw's log says why."""
    oc = OpenClaw(tmp_path)
    control = tmp_path / "stub-control"
    stub_log = tmp_path / "stub.jsonl"
    stub = tmp_path / "sjc-stub"
    stub.write_text(f"#!{sys.executable}\n" + STUB.read_text())
    stub.chmod(0o755)
    modes = ["hang", "exit", "garbage"]

    def before(i: int) -> None:
        control.write_text(modes[i])

    run = Run()
    with FakeModel() as fake:
        cfg = oc.config(
            fake.origin,
            {"keepRecentTokens": 200, "recentTurnsPreserve": 0, "provider": "sjc"},
            plugins={
                "load": {"paths": [str(PLUGIN)]},
                "entries": {"sjc": {"enabled": True, "config": {"command": str(stub), "timeoutSeconds": 3}}},
            },
        )
        oc.write_config(cfg)
        with oc.gateway(env={"SJC_STUB_CONTROL": str(control), "SJC_STUB_LOG": str(stub_log)}):
            _turns(oc, fake, before)
        _finish(run, oc, fake)
    assert len(run.stored) == 3
    for group, entry in zip(run.groups, run.stored, strict=True):
        formats = [e.answer["format"] for e in group]
        # the plugin's request, then OpenClaw's own (history, and the prefix of a split turn)
        assert formats[:2] == ["safeguard", "safeguard"], formats
        own = group[1]
        assert own.answer["text"] in entry["summary"]
        assert invented_in(entry["summary"])
    calls = [json.loads(line) for line in stub_log.read_text().splitlines()]
    assert [c["event"] for c in calls if c["event"] == "Summarize"] == ["Summarize"] * 3
    assert all(c["argv"] == ["openclaw"] for c in calls)
    faults = [c["message"] for c in calls if c["event"] == "Fault"]
    assert len(faults) == 3 and "no answer within 3 s" in faults[0] and "exited 3" in faults[1]
    assert "no JSON" in faults[2]
    assert run.log.count("OpenClaw's own summariser runs") >= 3
