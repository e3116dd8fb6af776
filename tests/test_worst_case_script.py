"""The hostile-input benchmark runs end to end on small inputs (its figures are not asserted here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_worst_case_script_prints_every_shape_against_its_references():
    script = ROOT / "benchmarks" / "worst_case.py"
    r = subprocess.run(
        [sys.executable, str(script), "--mb", "0.02", "--runs", "1"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    for title in ("offline judge", "identifiers of one unbroken token", "secret redaction"):
        assert title in r.stdout and "ordinary text of that size" in r.stdout
    for shape in ("camelCase", "percentages", "camel tail", "PEM headers"):
        (row,) = [line for line in r.stdout.splitlines() if line.strip().startswith(shape)]
        assert len(row.split()) >= 4, row  # its time, against ordinary text, full against half
