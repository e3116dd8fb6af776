"""Incomplete spans are said, not punished: on a transcript that starts mid-session an entry with no
source in the span is unjudged (kept, not flagged), the result and the log say the span is
incomplete, and entries restating the user are never flagged on a span without the user's messages."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from sjc_mcp import Config, prune_summary
from sjc_mcp.hosts import read_boundary
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment
from sjc_mcp.pipeline import judge_boundary
from tests.conftest import FIXTURES, sjc_exe
from tests.hosts.test_hosts import small_cc

SUMMARY = """## Key Technical Concepts
- The retry budget is 3 attempts.
- The cache lives in `/var/cache/app`.

## All user messages
- "please keep the public API"

## Pending Tasks
- Deploy to production on Friday.
"""
SLICE = FIXTURES / "claude-code" / "entire_a6_e4c2a0fbd1_0.jsonl"


class ByWord:
    """Scores an entry low when it holds one of ``low``; ``contra`` marks it contradicted."""

    name, model = "byword", "byword-1"

    def __init__(self, low: tuple[str, ...], contra: tuple[str, ...] = ()) -> None:
        self.low, self.contra = low, contra

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        out = []
        for e in request.entries:
            bad = any(w in e.text for w in self.low)
            out.append(
                Judgment(entry_id=e.id, score=0.1 if bad else 0.9, contradicted=any(w in e.text for w in self.contra))
            )
        return JudgeOutput(name=self.name, model=self.model, judgments=out)


def cfg(tmp_path: Path, **kw) -> Config:
    return Config.of(
        decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"), max_prune_share=1.0, **kw
    )


EVIDENCE = [{"kind": "tool_output", "content": "retries=3"}, {"kind": "user_message", "content": "hi"}]


def test_unsourced_entries_are_unjudged_on_an_incomplete_span(tmp_path):
    judge = ByWord(low=("cache", "Deploy", "public API"), contra=("cache",))
    complete = prune_summary(SUMMARY, EVIDENCE, config=cfg(tmp_path), judge=judge, log=True)
    assert [e.decision for e in complete.entries] == ["keep", "prune", "prune", "prune"]
    assert not complete.incomplete_span and not complete.warnings
    r = prune_summary(SUMMARY, EVIDENCE, config=cfg(tmp_path), judge=judge, incomplete_span=True, log=True)
    # a contradiction is a source in the span: still pruned; the rest have no source here, so unjudged
    assert [e.decision for e in r.entries] == ["keep", "prune", "unjudged", "unjudged"]
    assert r.incomplete_span and r.removed == 1
    assert "starts mid-session" in (r.entries[3].reason or "")
    assert r.warnings[0].startswith("incomplete span: the span starts mid-session; 2 entries with no source")
    rec = [x for _, x, _ in decision_log.read(tmp_path / "log.jsonl")][-1]
    assert rec["incomplete_span"] is True and rec["warnings"] == r.warnings and rec["pruned"] == 1
    assert rec["unjudged"] == 2
    assert "Deploy to production" in r.pruned_summary and "/var/cache/app" not in r.pruned_summary


def test_user_entries_are_not_flagged_without_user_messages(tmp_path):
    judge = ByWord(low=("public API", "Deploy"))
    tools_only = [EVIDENCE[0]]
    r = prune_summary(SUMMARY, tools_only, config=cfg(tmp_path), judge=judge, log=True)
    decisions = {e.section: e.decision for e in r.entries}
    assert decisions["All user messages"] == "unjudged" and decisions["Pending Tasks"] == "prune"
    assert any("holds no user message: 1 entry" in w for w in r.warnings)
    with_user = prune_summary(SUMMARY, EVIDENCE, config=cfg(tmp_path), judge=judge, log=True)
    assert {e.section: e.decision for e in with_user.entries}["All user messages"] == "prune"


def test_the_boundary_carries_the_flag_to_every_surface(tmp_path):
    path = small_cc(tmp_path)
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[1]["parentUuid"] = "before-the-file"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    b = read_boundary(path, 0)
    assert b.incomplete and "mid-session" in b.incomplete
    r = judge_boundary(b, config=cfg(tmp_path), judge=ByWord(low=("flaky",)), log=True)
    assert r.incomplete_span and r.removed == 0 and r.entries[0].decision == "unjudged"


@pytest.mark.skipif(not SLICE.exists(), reason="../shared/fixtures is absent: no real transcript cut mid-session")
def test_a_real_transcript_cut_mid_session_through_the_cli(tmp_path):
    """The slice a6: most of its summary's sources lie before the file's first record. Judged as if it
    were complete, many entries would be flagged; said to be incomplete, only contradicted ones may be."""
    b = read_boundary(SLICE, 0)
    assert b.incomplete
    blind = judge_boundary(dataclasses.replace(b, incomplete=None), config=cfg(tmp_path), log=False)
    assert sum(e.decision == "prune" for e in blind.entries) >= 5  # what the flag prevents
    env = dict(os.environ, HOME=str(tmp_path), SJC_DECISION_LOG=str(tmp_path / "cli.jsonl"))
    r = subprocess.run(
        [sjc_exe(), "prune", "--transcript", str(SLICE), "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    pruned = [e for e in out["entries"] if e["decision"] == "prune"]
    assert all(e["contradicted"] for e in pruned)
    assert sum(e["decision"] == "unjudged" for e in out["entries"]) >= 5
    assert "sjc: incomplete span: the transcript starts mid-session" in r.stderr
    rec = [x for _, x, _ in decision_log.read(tmp_path / "cli.jsonl")][-1]
    assert rec["incomplete_span"] is True and any("incomplete span" in w for w in rec["warnings"])
