from __future__ import annotations

import math
from pathlib import Path

import pytest

from sjc_mcp import Config, InputError, judge_summary, load_config, prune_summary
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment
from sjc_mcp.pipeline import decide

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples"


def example():
    summary = (EXAMPLE / "summary.md").read_text()
    evidence = [p.read_text() for p in sorted((EXAMPLE / "outputs").glob("*.txt"))]
    evidence.append(
        {
            "kind": "user_message",
            "content": "test_parse_duration is failing on main, can you fix it? "
            "Don't change the signature of parse_duration.",
        }
    )
    return summary, evidence


class FixedJudge:
    name = "fixed"
    model = "fixed-1"

    def __init__(self, scores):
        self.scores = scores

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        return JudgeOutput(
            name=self.name,
            model=self.model,
            judgments=[Judgment(entry_id=e.id, score=self.scores(e)) for e in request.entries],
        )


class BrokenJudge:
    name = "broken"
    model = "broken-1"

    def judge(self, request):
        raise RuntimeError("connection refused")


def cfg(tmp_path: Path, **kw) -> Config:
    return Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"), **kw)


def test_decide_threshold_and_margin():
    assert decide(None, 0.5, 0.05) == ("unjudged", False)
    assert decide(0.44, 0.5, 0.05) == ("prune", False)
    assert decide(0.46, 0.5, 0.05) == ("keep", True)
    assert decide(0.5, 0.5, 0.05) == ("keep", False)


def test_example_prunes_the_inventions_and_keeps_bytes(tmp_path):
    summary, evidence = example()
    r = prune_summary(summary, evidence, config=cfg(tmp_path), log=True)
    pruned = {e.text.split("\n")[0].strip("- ").strip() for e in r.entries if e.decision == "prune"}
    assert "Publish version 2.0 of the package to PyPI." in pruned
    assert "Email the changelog to every user on the mailing list." in pruned
    kept = [e for e in r.entries if e.decision != "prune"]
    assert any("48 passed in 0.61s" in e.text for e in kept)
    assert "7. Pending Tasks:" in r.pruned_summary
    assert r.removed == len(pruned) and r.chars_after < r.chars_before
    for e in kept:
        assert e.text in r.pruned_summary
    assert all(e.quote for e in kept if e.score and e.score > 0.8)


def test_unjudged_entries_are_kept_when_the_judge_fails(tmp_path):
    summary, evidence = example()
    r = prune_summary(summary, evidence, config=cfg(tmp_path), judge=BrokenJudge(), log=True)
    assert r.pruned_summary == summary
    assert all(e.decision == "unjudged" for e in r.entries)
    assert "connection refused" in r.errors[0]
    rec = list(decision_log.read(tmp_path / "log.jsonl"))[-1][1]
    assert rec["unjudged"] == len(r.entries) and rec["errors"]


@pytest.mark.parametrize("bad", [math.nan, 1.5, -0.1])
def test_unusable_scores_are_unjudged(tmp_path, bad):
    summary, evidence = example()
    r = prune_summary(summary, evidence, config=cfg(tmp_path), judge=FixedJudge(lambda e: bad), log=True)
    assert r.pruned_summary == summary and r.removed == 0
    assert all(e.decision == "unjudged" for e in r.entries) and r.errors


def test_threshold_argument_overrides_config(tmp_path):
    summary, evidence = example()
    j = FixedJudge(lambda e: 0.6)
    assert prune_summary(summary, evidence, config=cfg(tmp_path), judge=j, log=True).removed == 0
    everything = prune_summary(summary, evidence, config=cfg(tmp_path), judge=j, threshold=0.9, log=True)
    assert everything.guarded and everything.removed == 0  # all of it: the guard keeps the summary whole
    unguarded = cfg(tmp_path, max_prune_share=1.0)
    assert prune_summary(summary, evidence, config=unguarded, judge=j, threshold=0.9, log=True).removed > 0
    with pytest.raises(InputError):
        prune_summary(summary, evidence, config=cfg(tmp_path), judge=j, threshold=2, log=True)


def test_shadow_mode_judges_logs_and_changes_nothing(tmp_path):
    summary, evidence = example()
    r = prune_summary(summary, evidence, config=cfg(tmp_path, mode="shadow"), log=True)
    assert r.pruned_summary == summary and r.removed == 0
    assert any(e.decision == "prune" for e in r.entries)
    rec = list(decision_log.read(tmp_path / "log.jsonl"))[-1][1]
    assert rec["mode"] == "shadow" and rec["pruned"] > 0 and rec["chars_after"] == len(summary)


def test_kill_switch_file_and_env(tmp_path, monkeypatch):
    summary, evidence = example()
    c = cfg(tmp_path)
    (tmp_path / "off").touch()
    r = prune_summary(summary, evidence, config=c, log=True)
    assert r.pruned_summary == summary and r.disabled
    (tmp_path / "off").unlink()
    monkeypatch.setenv("SJC_DISABLE", "1")
    monkeypatch.setenv("SJC_DECISION_LOG", str(tmp_path / "log.jsonl"))
    r2 = prune_summary(summary, evidence, config=load_config(), log=True)
    assert r2.pruned_summary == summary and r2.disabled
    recs = [rec for _, rec, _ in decision_log.read(tmp_path / "log.jsonl")]
    assert [rec["status"] for rec in recs] == ["disabled", "disabled"]
    assert "SJC_DISABLE" in recs[-1]["errors"][0]


def test_sources_policy_without_user_messages(tmp_path):
    summary, evidence = example()
    with_user = judge_summary(summary, evidence, config=cfg(tmp_path), log=True)
    paper = judge_summary(
        summary, evidence, config=cfg(tmp_path, sources=["tool_output", "previous_summary"]), log=True
    )
    i = next(e.id for e in with_user.entries if e.section == "All user messages")
    assert paper.entries[i].score < with_user.entries[i].score


def test_previous_summary_is_a_source(tmp_path):
    summary = "## Notes\n- The staging database lives at db-7.internal on port 6543.\n"
    without = judge_summary(summary, [], config=cfg(tmp_path), log=True)
    with_prev = judge_summary(
        summary, [], previous_summary="- staging database: db-7.internal, port 6543", config=cfg(tmp_path), log=True
    )
    assert with_prev.entries[0].score > without.entries[0].score
    assert with_prev.entries[0].origin == "previous_summary"


def test_log_record_fields(tmp_path):
    summary, evidence = example()
    prune_summary(summary, evidence, config=cfg(tmp_path), meta={"session": "s1"}, log=True)
    rec = list(decision_log.read(tmp_path / "log.jsonl"))[-1][1]
    for key in (
        "time",
        "session",
        "host",
        "judge",
        "config_hash",
        "threshold",
        "mode",
        "entries",
        "kept",
        "pruned",
        "chars_before",
        "chars_after",
        "duration_ms",
        "errors",
        "prev",
        "hash",
    ):
        assert key in rec
    e = rec["entries"][0]
    assert set(e) >= {"section", "text_sha", "text", "score", "decision"} and len(e["text"]) <= 200
    assert rec["hash"] == decision_log.record_hash(rec)


def test_too_large_inputs_are_refused(tmp_path):
    with pytest.raises(InputError, match="summary is larger"):
        prune_summary("x" * 1_000_001, [], config=cfg(tmp_path), log=True)
    with pytest.raises(InputError, match="evidence is larger"):
        prune_summary("- a", ["y" * 20_000_001], config=cfg(tmp_path), log=True)
    with pytest.raises(InputError, match="evidence item 0"):
        prune_summary("- a", [{"kind": "nope", "content": "x"}], config=cfg(tmp_path), log=True)


def test_public_api_names_resolve():
    import sjc_mcp

    for name in sjc_mcp.__all__:
        assert getattr(sjc_mcp, name) is not None, name
    with pytest.raises(AttributeError):
        sjc_mcp.not_a_name  # noqa: B018


def test_the_library_writes_and_prints_nothing_unless_asked(tmp_path, capsys, isolated_home):
    """As a library call, pruning leaves no file behind (not the user's decision log either) and says what the
    caller should know in the result, not on stderr; with log=True it writes to the config's decision log."""
    from sjc_mcp import Config, prune_summary

    before = sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*"))
    r = prune_summary("## Pending Tasks\n- Publish version 2.0 to PyPI\n", ["48 passed"])
    assert r.guarded and r.warnings  # one entry of one, kept whole: something to say
    assert capsys.readouterr().err == ""
    assert sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*")) == before
    log = tmp_path / "log.jsonl"
    prune_summary(
        "## Pending Tasks\n- Publish version 2.0 to PyPI\n",
        ["48 passed"],
        config=Config.of(decision_log=str(log)),
        log=True,
    )
    assert len(log.read_text().splitlines()) == 1
