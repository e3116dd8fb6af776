"""The reason rule: an entry is deleted only with grounds a person could check. An entry the judge
scores below the cut but has no such grounds for is kept, and the audit shows it as doubtful."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from sjc_mcp import Config, prune_summary
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment
from tests.conftest import sjc_exe

SUMMARY = (
    "## Pending Tasks\n"
    "- Rotate the signing keys before Friday\n"
    "- Port the importer to the new queue\n"
    "- Archive the old dashboards\n"
    "\n## Files and Code Sections\n"
    "- `src/app.py`: the entry point\n"
)


class Grounds:
    """Scores every Pending Tasks entry 0.05; ``grounded`` per entry as given."""

    name = "grounds"
    model = "grounds-1"

    def __init__(self, grounded: list[bool | None]) -> None:
        self.grounded = grounded

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        out = []
        for i, e in enumerate(request.entries):
            low = e.section == "Pending Tasks"
            out.append(
                Judgment(
                    entry_id=e.id,
                    score=0.05 if low else 0.9,
                    reason="no user message asks for it" if low else "src/app.py read",
                    grounded=self.grounded[i] if low else None,
                )
            )
        return JudgeOutput(judgments=out, name=self.name, model=self.model)


def cfg(tmp_path: Path) -> Config:
    return Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))


def test_an_entry_without_grounds_is_never_pruned(tmp_path):
    r = prune_summary(SUMMARY, ["src/app.py"], judge=Grounds([True, False, None]), config=cfg(tmp_path))
    by_text = {e.text.split("\n")[0]: e for e in r.entries}
    rotate = by_text["- Rotate the signing keys before Friday"]
    port = by_text["- Port the importer to the new queue"]
    archive = by_text["- Archive the old dashboards"]
    assert rotate.decision == "prune"  # grounds given
    assert port.decision == "keep" and port.reason.startswith("doubtful, kept: no user message")
    assert not port.near_threshold
    assert archive.decision == "prune"  # a score-only judge does not say: the score decides
    assert r.removed == 2 and "Port the importer" in r.pruned_summary and "Rotate" not in r.pruned_summary


def test_no_grounds_at_any_score(tmp_path):
    r = prune_summary(SUMMARY, ["src/app.py"], judge=Grounds([False, False, False]), config=cfg(tmp_path))
    assert r.removed == 0 and r.pruned_summary == SUMMARY
    assert [e.decision for e in r.entries] == ["keep"] * 4


def test_the_audit_shows_doubtful_entries_as_doubtful(tmp_path):
    config = cfg(tmp_path)
    prune_summary(SUMMARY, ["src/app.py"], judge=Grounds([True, False, True]), config=config, log=True)
    log = tmp_path / "log.jsonl"
    out = subprocess.run([sjc_exe(), "audit", "--log", str(log), "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    b = json.loads(out.stdout)["boundaries"][0]
    port = next(e for e in b["entries"] if "Port the importer" in e["text"])
    assert port["decision"] == "keep" and port["reason"].startswith("doubtful, kept")
    term = subprocess.run(
        [sjc_exe(), "audit", "--log", str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert term.returncode == 0, term.stderr
    flat = " ".join(term.stdout.split())
    line = next(ln for ln in term.stdout.splitlines() if "Port the importer" in ln)
    assert line.split()[0] == "doubt"  # listed without --all, as doubtful, not as kept or supported
    assert "doubtful: score 0.05 < 0.45, kept" in flat and "src/app.py" not in line
    html = tmp_path / "r.html"
    assert subprocess.run([sjc_exe(), "audit", "--log", str(log), "--html", str(html)], timeout=60).returncode == 0
    page = html.read_text()
    assert page.count('class="entry prune"') == 2 and page.count('class="entry keep doubtful"') == 1
