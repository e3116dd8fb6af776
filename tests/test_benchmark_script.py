"""The benchmark script runs end to end (on small inputs: its figures are not asserted here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT

CLAUDE_FIXTURES = FIXTURES / "claude-code"


@pytest.mark.slow
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
    # timed as a user's install (``pip install .`` of this checkout), not the test environment's editable one
    assert r.stdout.startswith("timing this checkout installed as a user installs it"), r.stdout[:300]
    for needle in (
        "judge + prune",
        "same top passages: yes",
        "sjc prune --json as a whole process",
        "judge stage",
        "hook end to end",
        "proxy pass-through",
        "audit of 200 boundaries",
        "chain and anchor intact",
        "python parsing every line with json",
        "start-up:",
        "MCP server start-up, sjc-mcp: spawn to initialize answered",
        "an MCPServer with one trivial tool",
    ):
        assert needle in r.stdout
    if CLAUDE_FIXTURES.is_dir():  # the judgment on every real transcript, where ../shared is present
        assert "real transcripts in ../shared/fixtures" in r.stdout
    # every hook event the hosts send, each run as the host runs it and timed against a bare interpreter
    events = [
        ln.split()[:2] for ln in r.stdout.splitlines() if ln.startswith("  claude-code ") or ln.startswith("  codex ")
    ]
    assert {tuple(e) for e in events} >= {
        ("claude-code", "Notification"),
        ("claude-code", "PreCompact"),
        ("claude-code", "PostToolBatch"),
        ("claude-code", "UserPromptSubmit,"),
        ("claude-code", "PostCompact"),
        ("codex", "SessionStart,"),
        ("codex", "UserPromptSubmit,"),
    }
    assert "x python" in r.stdout


@pytest.mark.slow
def test_benchmark_scaling_table():
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--scaling",
            "--runs",
            "1",
            "--scaling-points",
            "0.05:10,0.1:20",
            "--in-place",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("timing sjc as installed here")
    rows = [ln.split("|") for ln in r.stdout.splitlines() if ln.startswith("  ") and ln.count("|") == 8]
    assert [float(row[0]) for row in rows] == [0.05, 0.1]
    assert all(float(row[7]) > 0 for row in rows)  # peak RSS of the process that ran the stages
    assert all(" ms, " in row[8] for row in rows)  # sjc prune --json as a process, under the evidence limit
    assert "growth exponent" in r.stdout


@pytest.mark.slow
def test_proxy_benchmark_smoke():
    """``benchmarks/proxy.py`` runs end to end on a few requests: every row and column, the concurrent
    streams, a judged compaction (its figures are printed, never asserted)."""
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "proxy.py"),
            "--rounds",
            "2",
            "--streams",
            "4",
            "--compactions",
            "1",
            "--also",
            f"plain relay={sys.executable} {ROOT / 'benchmarks' / 'relays.py'} uvicorn+aiohttp {{port}} {{upstream}}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    for row in (
        "2 KB body, JSON answer",
        "2 MB body, JSON answer",
        "2 KB body, 400 SSE events",
        "2 MB body, 400 SSE events",
    ):
        assert row in out
    lines = out.splitlines()

    def column(name: str) -> int:  # the hop's line in each of the four rows and in the concurrent streams
        return sum(ln.startswith(f"    {name} ") for ln in lines)

    assert column("sjc proxy") == 4 + 1 and column("plain relay") == 4 + 1
    assert out.count("target: ") == 4
    assert "nginx: not installed" in out or column("nginx") == 4 + 1
    assert "4 concurrent streams of 400 events" in out and "RSS idle" in out
    assert out.count("the judgment adds") == 2 and out.count("sjc proxy said: recognised, judged") == 2
