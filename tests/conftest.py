from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PROVENANCE = SHARED / "provenance"
FIXTURES = SHARED / "fixtures"


def need_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the labelled cases and real transcripts live beside the repo in ../shared")
    return path


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test may read or write the developer's real ~/.config, ~/.claude or decision log."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in (
        "SJC_CONFIG",
        "SJC_JUDGE",
        "SJC_THRESHOLD",
        "SJC_MODE",
        "SJC_DECISION_LOG",
        "SJC_DISABLE",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


def case_files(*sets: str) -> list[Path]:
    out: list[Path] = []
    for s in sets:
        d = PROVENANCE / s
        if d.is_dir():
            out += sorted(d.glob("*.json"))
    return out


def load_case(path: Path) -> dict:
    return json.loads(path.read_text())


def case_summary(case: dict, path: Path) -> str:
    """The case's summary: inline, or the compaction ``boundary`` of its transcript."""
    if case.get("summary"):
        return case["summary"]
    transcript = (path.parent / case["transcript"]).resolve()
    summaries = []
    with transcript.open() as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("isCompactSummary"):
                summaries.append(rec["message"]["content"])
    return summaries[case.get("boundary", 0)]


def sjc_exe(name: str = "sjc") -> str:
    exe = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if exe is None:
        pytest.fail(f"console script {name!r} is not installed: run the README's install command")
    return exe
