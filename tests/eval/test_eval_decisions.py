"""``sjc eval`` scores the product's decision and reports what a user meets: prune precision, true
entries lost per compaction, unsupported removed; and groups cases by project for ``--lopo``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sjc_mcp.config import Config
from sjc_mcp.eval.cases import load_case, repository_of, transcript_project
from sjc_mcp.eval.judge import evaluate
from sjc_mcp.eval.report import render_text
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment
from tests.conftest import PROVENANCE, need_shared

DEV = PROVENANCE / "dev"


class TableJudge:
    """Scores each entry by the first word of its text; ``grounded`` from a second table."""

    name = "table"
    model = "table-1"

    def __init__(self, scores: dict[str, float], ungrounded: frozenset[str] = frozenset()) -> None:
        self.scores, self.ungrounded = scores, ungrounded

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        out = []
        for e in request.entries:
            key = e.text.lstrip("- ").split()[0]
            out.append(
                Judgment(
                    entry_id=e.id,
                    score=self.scores[key],
                    reason=f"reason for {key}",
                    grounded=False if key in self.ungrounded else None,
                )
            )
        return JudgeOutput(judgments=out, name=self.name, model=self.model)


def write_case(folder: Path, cid: str, entries: list[tuple[str, str, bool]], **extra) -> Path:
    """A case whose summary has one bullet per ``(section, text, supported)``."""
    sections: dict[str, list[str]] = {}
    for section, text, _ in entries:
        sections.setdefault(section, []).append(text)
    summary = "".join(f"## {s}\n" + "".join(f"- {t}\n" for t in ts) + "\n" for s, ts in sections.items())
    case = {
        "id": cid,
        "host": "generic",
        "origin": "synthetic",
        "span": [{"role": "user", "content": "please fix the parser"}],
        "summary": summary,
        "labels": [
            {"entry": t, "section": s, "supported": sup, "source": "tool_output" if sup else "none"}
            for s, t, sup in entries
        ],
        **extra,
    }
    path = folder / f"{cid}.json"
    path.write_text(json.dumps(case))
    return path


def test_user_metrics_on_hand_made_cases(tmp_path):
    # case a: 5 entries; deleted: A1 (unsupported), A2 (supported: a true entry lost); kept: A3 (unsupported)
    write_case(
        tmp_path,
        "a",
        [
            ("Pending Tasks", "A1 invented plan", False),
            ("Files", "A2 real file", True),
            ("Pending Tasks", "A3 invented kept", False),
            ("Files", "A4 real", True),
            ("Files", "A5 real", True),
        ],
    )
    # case b: 4 entries; deleted B1, B2 (both unsupported); kept B3 (supported), B4 (unsupported, ungrounded)
    write_case(
        tmp_path,
        "b",
        [
            ("Pending Tasks", "B1 invented", False),
            ("Pending Tasks", "B2 invented", False),
            ("Files", "B3 real", True),
            ("Pending Tasks", "B4 invented but no grounds", False),
        ],
    )
    scores = {"A1": 0.1, "A2": 0.2, "A3": 0.9, "A4": 0.8, "A5": 0.7, "B1": 0.05, "B2": 0.3, "B3": 0.95, "B4": 0.1}
    judge = TableJudge(scores, frozenset({"B4"}))
    r = evaluate([str(tmp_path)], Config(), judge=judge, progress=False)
    o = r["overall"]
    assert o["deleted"] == 4 and o["true_deleted"] == 1
    assert r["prune_precision"] == pytest.approx(3 / 4)
    assert r["true_lost_per_compaction"] == pytest.approx(1 / 2)
    assert r["unsupported_removed"] == pytest.approx(3 / 5, abs=1e-3)
    assert o["doubtful"] == 1  # B4: below the cut, kept because the judge had no grounds
    b4 = next(e for e in r["entries"] if e["entry"].startswith("B4"))
    assert b4["decision"] == "keep" and b4["reason"].startswith("doubtful, kept")
    cases = {c["case"]: c for c in r["by_case"]}
    assert cases["a"]["true_lost_per_compaction"] == 1.0 and cases["a"]["prune_precision"] == 0.5
    assert cases["b"]["prune_precision"] == 1.0 and cases["b"]["unsupported_removed"] == pytest.approx(2 / 3, abs=1e-3)
    pending = r["by_section"]["Pending Tasks"]
    assert pending["deleted"] == 3 and pending["prune_precision"] == 1.0 and pending["forward"]
    assert pending["true_lost_per_compaction"] == 0.0 and pending["unsupported_removed"] == pytest.approx(
        3 / 5, abs=1e-3
    )
    files = r["by_section"]["Files"]
    assert files["deleted"] == 1 and files["prune_precision"] == 0.0 and files["true_lost_per_compaction"] == 0.5
    # the decision as the threshold moves is the same decision: at 0.15 (cut 0.10) only B1 goes (A1 sits on
    # the cut, B4 has no grounds)
    at = {c["threshold"]: c for c in r["by_threshold"]}
    assert at[0.15]["deleted"] == 1 and at[0.15]["prune_precision"] == 1.0
    text = render_text(r)
    assert "prune precision" in text and "true entries lost per compaction" in text


def test_the_guard_is_applied_as_sjc_prune_applies_it(tmp_path):
    # 3 of 4 entries below the cut: more than max_prune_share (0.6), so sjc prune removes nothing
    write_case(
        tmp_path,
        "g",
        [
            ("Pending Tasks", "G1 x", False),
            ("Pending Tasks", "G2 x", False),
            ("Pending Tasks", "G3 x", True),
            ("Files", "G4 x", True),
        ],
    )
    judge = TableJudge({"G1": 0.1, "G2": 0.1, "G3": 0.1, "G4": 0.9})
    r = evaluate([str(tmp_path)], Config(), judge=judge, progress=False)
    assert r["overall"]["deleted"] == 0 and r["by_case"][0]["guarded"]
    assert r["unsupported_removed"] == 0.0
    loose = evaluate([str(tmp_path)], Config.of(max_prune_share=0.9), judge=judge, progress=False)
    assert loose["overall"]["deleted"] == 3 and loose["prune_precision"] == pytest.approx(2 / 3, abs=1e-3)
    from sjc_mcp import prune_summary

    summary = load_case(tmp_path / "g.json").boundary.summary
    assert prune_summary(summary, ["x"], judge=judge, config=Config(), log=False).removed == 0


def test_projects_from_the_case_the_transcript_or_the_id(tmp_path):
    assert repository_of("/Users/a/workspace/cli") == "cli"
    assert repository_of("/Users/a/workspace/cli/.worktrees/alex/ent-109") == "cli"
    assert repository_of("/home/u/src/app/.claude/worktrees/fix-1") == "app"
    assert repository_of("C:\\Users\\u\\src\\tool") == "tool"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        "not json\n"
        + json.dumps({"type": "summary"})
        + "\n"
        + json.dumps({"type": "user", "cwd": "/Users/b/wks/cli/.worktrees/2"})
        + "\n"
    )
    assert transcript_project(transcript) == "cli"
    codex = tmp_path / "c.jsonl"
    codex.write_text(json.dumps({"type": "session_meta", "payload": {"cwd": "/home/t/ledger"}}) + "\n")
    assert transcript_project(codex) == "ledger"
    assert transcript_project(tmp_path / "absent.jsonl") is None
    named = write_case(tmp_path, "n", [("Files", "N1 x", True)], project="acme/widgets")
    unnamed = write_case(tmp_path, "u", [("Files", "U1 x", True)])
    assert load_case(named).project == "acme/widgets"
    assert load_case(unnamed).project == "u"


def test_lopo_fits_each_project_without_its_own_cases():
    """Two real cases of one project and two synthetic ones: with --lopo the real cases are scored by
    weights fitted on the synthetic cases only (their project's other case is left out with them), and
    each synthetic case by weights fitted on the three others."""
    need_shared(DEV)
    from sjc_mcp.eval.judge import _labelled_rows
    from sjc_mcp.eval.prepared import prepare
    from sjc_mcp.judges.lexical import LexicalJudge, fit_weights

    names = ["real-cc-18", "real-cc-32", "syn-dev-01", "syn-dev-06"]
    paths = [str(DEV / f"{n}.json") for n in names]
    r = evaluate(paths, Config(), lopo=True, progress=False)
    projects = {c["case"]: c["project"] for c in r["by_case"]}
    assert projects == {
        "real-cc-18": "cli",
        "real-cc-32": "cli",
        "syn-dev-01": "syn-dev-01",
        "syn-dev-06": "syn-dev-06",
    }
    assert r["judge"] == "lexical (leave-one-project-out)" and r["projects"] == 3
    prepared = {n: prepare(load_case(p), Config()) for n, p in zip(names, paths, strict=True)}
    rows = {n: _labelled_rows(p, "sjc") for n, p in prepared.items()}

    def scores_with(train: list[str], case: str) -> list[float]:
        data = [row for n in train for row in rows[n]]
        judge = LexicalJudge(fit_weights([x for x, _ in data], [y for _, y in data]))
        out = {j.entry_id: j.score for j in judge.judge(prepared[case].request).judgments}
        return sorted(out.values())

    want = scores_with(["syn-dev-01", "syn-dev-06"], "real-cc-18")
    got = {e["entry"]: e["score"] for e in r["entries"] if e["case"] == "real-cc-18"}
    assert set(got.values()) <= set(want)
    leaky = set(scores_with(["real-cc-32", "syn-dev-01", "syn-dev-06"], "real-cc-18"))
    assert not set(got.values()) <= leaky  # fitted with the same project's other case, it would differ
    want_syn = set(scores_with(["real-cc-18", "real-cc-32", "syn-dev-06"], "syn-dev-01"))
    assert {e["score"] for e in r["entries"] if e["case"] == "syn-dev-01"} <= want_syn
    assert set(r["group_out"]) == {"case", "set", "session"}
