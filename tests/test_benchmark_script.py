"""The benchmark script runs end to end (on small inputs: its figures are not asserted here)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_benchmark_script_smoke(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--runs",
            "1",
            "--span-mb",
            "0.2",
            "--transcript-mb",
            "3",
            "--audit-records",
            "200",
            "--proxy-requests",
            "20",
            "--keep",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    for needle in (
        "judge + prune",
        "same top passages: yes",
        "hook end to end",
        "proxy pass-through",
        "audit of 200 boundaries",
        "start-up:",
    ):
        assert needle in r.stdout
