from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from importlib.resources import files

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sjc_mcp.config import Config
from sjc_mcp.judges.lexical import FEATURES, LexicalJudge, Weights, contradiction, found
from sjc_mcp.metrics import auroc, fit_logistic
from tests.conftest import PROVENANCE, need_shared, sjc_exe

DEV = PROVENANCE / "dev"


@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=40))
def test_auroc_equals_pairwise_definition(pairs):
    scores = [s / 5 for s, _ in pairs]
    ys = [y for _, y in pairs]
    pos = [s for s, y in zip(scores, ys, strict=True) if y]
    neg = [s for s, y in zip(scores, ys, strict=True) if not y]
    got = auroc(scores, ys)
    if not pos or not neg:
        assert got is None
        return
    want = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    assert got == pytest.approx(want)


def test_fit_logistic_finds_the_signal():
    rnd = random.Random(0)
    rows = [[rnd.random(), rnd.random()] for _ in range(400)]
    ys = [r[0] * 3 - 1.5 + rnd.gauss(0, 0.3) > 0 for r in rows]
    bias, w_signal, w_noise = fit_logistic(rows, ys, l2=0.1)
    assert w_signal > 3 and abs(w_noise) < 1 and bias < 0


@pytest.mark.parametrize(
    ("entry", "evidence", "hit"),
    [
        ("Full `pytest -q` run: 3 failed, 287 passed", "4 failed, 287 passed, 3 skipped in 31.06s", "4 failed"),
        ("`npx vitest run`: 41 tests passed", "Tests  40 passed (40)\n (7 tests) 41ms", "40 passed"),
        ("Project virtualenv is `.venv` on Python 3.12", ".venv/lib/python3.11/site-packages/", "python3.11"),
        ("Run 9131977712: all four jobs green, 7m14s end to end", "9131977712  7m41s", "7m41s"),
        ("Full `pytest -q` run: 4 failed, 287 passed", "4 failed, 287 passed", None),
        ("N+1 queries on the order list", "Expected to perform 4 queries but 27 were done", None),
        ("PostgreSQL 12+ skips the scan", "Prod is PostgreSQL 15 on RDS", None),
    ],
)
def test_contradiction(entry, evidence, hit):
    got = contradiction(entry, [evidence])
    if hit is None:
        assert got is None
    else:
        assert got is not None and hit in got.line


def test_whole_identifier_match_only():
    assert found("cli/strategy/foo.go", "see cmd/cli/strategy/foo.go:12")
    assert not found("strategy/foo.go", "strategy/foo.gox")
    assert not found("sjc.judges", "sjc.judgesx")
    assert not found("judges.lexical", "sjc.judges_lexical")


def test_judge_marks_contradictions_with_the_conflicting_quote(tmp_path):
    from sjc_mcp import judge_summary

    summary = "## Problem Solving\n- Full `pytest -q` run: 3 failed, 287 passed.\n"
    r = judge_summary(
        summary,
        ["$ pytest -q\n....\n4 failed, 287 passed, 3 skipped in 31.06s"],
        config=Config.of(decision_log=str(tmp_path / "l.jsonl")),
    )
    e = r.entries[0]
    assert e.contradicted and "4 failed" in e.quote and e.score < 0.45
    assert "contradicted: " in e.reason and "says 4, entry says 3" in e.reason


def test_shipped_weights_load_and_cover_every_feature():
    data = json.loads(files("sjc_mcp").joinpath("data/lexical_weights.json").read_text())
    assert set(data["forward"]["weights"]) == set(FEATURES) == set(data["other"]["weights"])
    w = Weights.default()
    assert w.forward.weights == data["forward"]["weights"]


def run(*args):
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_eval_json_on_dev_cases_and_targets():
    need_shared(DEV)
    r = run("eval", str(DEV), "--lopo", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in (
        "cases",
        "projects",
        "entries_labelled",
        "entries_matched",
        "prune_precision",
        "true_lost_per_compaction",
        "unsupported_removed",
        "auroc",
        "auroc_reasoning",
        "threshold",
        "by_case",
        "by_section",
        "by_threshold",
        "entries",
    ):
        assert key in out
    assert out["entries_matched"] == out["entries_labelled"] > 500
    assert set(out["entries"][0]) >= {"case", "project", "section", "entry", "supported", "source", "score", "decision"}
    # what a user meets at the default, leave one project out (issue 26): a change that falls below fails here
    assert out["prune_precision"] >= 0.90
    assert out["true_lost_per_compaction"] <= 0.3
    assert out["unsupported_removed"] >= 0.50
    assert out["auroc"] >= 0.93 and out["auroc_reasoning"] >= 0.92
    # every deletion carries grounds a person can check: never a bare "no source"
    pruned = [e for e in out["entries"] if e["decision"] == "prune"]
    assert pruned and all(e["reason"].startswith(("contradicted:", "no source: ")) for e in pruned)
    assert out["by_section"]["Pending Tasks"]["forward"] and out["by_section"]["Pending Tasks"]["auroc"] is not None
    # the same on the other splits: each case left out, a kind of session never seen, a session left out
    case = out["group_out"]["case"]["overall"]
    assert case["prune_precision"] >= 0.90 and case["true_lost_per_compaction"] <= 0.3
    assert case["unsupported_removed"] >= 0.50
    real, syn = out["group_out"]["set"]["real"], out["group_out"]["set"]["synthetic"]
    assert real["auroc"] >= 0.92 and real["auroc_forward"] >= 0.90 and real["prune_precision"] >= 0.85
    assert syn["auroc"] >= 0.90 and syn["auroc_forward"] >= 0.95 and syn["prune_precision"] >= 0.90
    assert out["group_out"]["session"]["overall"]["entries"] == out["entries_matched"]


@pytest.mark.slow
def test_eval_text_shows_sets_sections_and_groups_left_out():
    need_shared(DEV)
    r = run("eval", str(DEV / "syn-dev-01.json"), str(DEV / "syn-dev-02.json"), str(DEV / "real-cc-04.json"), "--lopo")
    assert r.returncode == 0, r.stderr
    for line in (
        "per set",
        "leave one case out",
        "leave one set out",
        "leave one session out",
        "per section (* forward-looking)",
        "prune precision",
    ):
        assert line in r.stdout
    assert "* Pending Tasks" in r.stdout and "  All user messages" in r.stdout


def test_paper_policy_counts_user_messages_as_unsupported():
    need_shared(DEV)
    sjc = json.loads(run("eval", str(DEV / "syn-dev-01.json"), "--json").stdout)
    paper = json.loads(run("eval", str(DEV / "syn-dev-01.json"), "--json", "--policy", "paper").stdout)
    user = [i for i, e in enumerate(sjc["entries"]) if e["source"] == "user_message"]
    assert user and all(sjc["entries"][i]["supported"] for i in user)
    assert not any(paper["entries"][i]["supported"] for i in user)


@pytest.mark.slow
def test_shipped_weights_are_reproduced_by_calibrate(tmp_path):
    need_shared(DEV)
    out = tmp_path / "w.json"
    r = run("calibrate", str(DEV), "-o", str(out))
    assert r.returncode == 0, r.stderr
    fresh = json.loads(out.read_text())
    shipped = json.loads(files("sjc_mcp").joinpath("data/lexical_weights.json").read_text())
    for part in ("forward", "other"):
        assert fresh[part]["bias"] == pytest.approx(shipped[part]["bias"], abs=1e-6)
        for k, v in shipped[part]["weights"].items():
            assert fresh[part]["weights"][k] == pytest.approx(v, abs=1e-6)


def test_calibrated_weights_file_is_used_from_config(tmp_path):
    need_shared(DEV)
    out = tmp_path / "w.json"
    run("calibrate", str(DEV / "syn-dev-01.json"), str(DEV / "syn-dev-02.json"), "-o", str(out))
    from sjc_mcp.judges import make_judge

    judge = make_judge(Config.of(lexical={"weights": str(out)}))
    assert isinstance(judge, LexicalJudge)
    assert judge.weights.other.weights == json.loads(out.read_text())["other"]["weights"]


def test_eval_bad_path_is_one_line():
    r = run("eval", "/no/such/cases")
    assert r.returncode == 2 and "no such case file or folder" in r.stderr


_JUDGE_ALL = """
import json, sys
from sjc_mcp.eval.cases import case_paths, load_case
from sjc_mcp.config import Config
from sjc_mcp.eval.prepared import case_request
from sjc_mcp.judges.lexical import LexicalJudge

judge, out = LexicalJudge(), []
for path in case_paths([sys.argv[1]]):
    _, request = case_request(load_case(path), Config())
    for (f, _), j in zip(judge.features(request), judge.judge(request).judgments):
        out.append([path.name, j.entry_id, f, j.score, j.quote, j.reason])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_offline_judge_is_the_same_whatever_the_hash_seed():
    """Sets iterate in an order that depends on the process's string hash seed: the judge's sums and
    choices must not, or one summary judged twice could get two quotes (it did) or two scores."""
    dev = need_shared(DEV)
    runs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", _JUDGE_ALL, str(dev)], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout))
    assert len(runs[0]) > 100
    assert runs[0] == runs[1]


def test_calibrate_never_writes_into_the_installed_package_unless_asked(tmp_path):
    shipped = files("sjc_mcp").joinpath("data/lexical_weights.json")
    before = shipped.read_bytes()
    r = run("calibrate", "cases-are-not-read-first", "-o", str(shipped))
    assert r.returncode == 2 and "inside the installed sjc package" in r.stderr and "--replace-shipped" in r.stderr
    assert shipped.read_bytes() == before
