from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sjc_mcp import log as decision_log
from tests.conftest import FIXTURES, sjc_exe
from tests.test_hosts import small_cc


def sjc(*args, home: Path, **env):
    full = dict(os.environ, HOME=str(home), **env)
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, env=full, timeout=300)


def logpath(home: Path) -> Path:
    return home / ".local" / "state" / "sjc" / "decisions.jsonl"


@pytest.fixture
def replayed(tmp_path):
    """A real decision log: every compaction of a small transcript (and the real fixtures, if present)."""
    home = tmp_path / "home"
    paths = [str(small_cc(tmp_path))]
    if (FIXTURES / "claude-code").is_dir():
        paths += [str(p) for p in sorted((FIXTURES / "claude-code").glob("entire_1e*.jsonl"))]
    r = sjc("replay", *paths, home=home)
    assert r.returncode == 0, r.stderr
    assert "replayed" in r.stdout
    return home


def test_replay_logs_every_boundary_in_shadow_mode(replayed):
    recs = [rec for _, rec, _ in decision_log.read(logpath(replayed))]
    assert len(recs) >= 2 and all(r["mode"] == "shadow" and r["op"] == "replay" for r in recs)
    assert all(r["chars_after"] == r["chars_before"] for r in recs)


def test_audit_json(replayed):
    r = sjc("audit", "--json", home=replayed)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    b = out["boundaries"][0]
    for key in (
        "session",
        "boundary",
        "kept",
        "pruned",
        "chars_before",
        "chars_after",
        "tokens_before",
        "tokens_after",
        "judge",
        "mode",
        "errors",
        "duration_ms",
        "pruned_entries",
    ):
        assert key in b
    assert out["totals"]["judged"] == len(out["boundaries"]) and out["totals"]["tokens_estimated"] is True
    for b in out["boundaries"]:
        for p in b["pruned_entries"]:
            assert p["quote"]  # the evidence that decided it, or "no source found"
    terminal = sjc("audit", home=replayed)
    assert terminal.returncode == 0 and "totals" in terminal.stdout


def test_audit_filters_and_corrupt_lines(replayed):
    path = logpath(replayed)
    with path.open("a") as fh:
        fh.write("{broken json\n")
    r = sjc("audit", "--json", "--session", "S", home=replayed)
    assert r.returncode == 0 and "corrupt" in r.stderr
    out = json.loads(r.stdout)
    assert {b["session"] for b in out["boundaries"]} == {"S"}
    future = sjc("audit", "--json", "--since", "2999-01-01", home=replayed)
    assert json.loads(future.stdout)["boundaries"] == []
    bad = sjc("audit", "--since", "yesterday", home=replayed)
    assert bad.returncode == 2 and "--since" in bad.stderr


def _record(**kw):
    base = {
        "v": 1,
        "op": "prune",
        "host": "generic",
        "judge": {"name": "lexical", "model": "lexical-1"},
        "threshold": 0.5,
        "margin": 0.05,
        "mode": "enforce",
        "status": "judged",
        "kept": 1,
        "pruned": 0,
        "unjudged": 0,
        "chars_before": 10,
        "chars_after": 10,
        "tokens_before": 3,
        "tokens_after": 3,
        "duration_ms": 1.0,
        "errors": [],
        "entries": [],
    }
    base.update(kw)
    return base


def test_audit_warnings(tmp_path):
    path = tmp_path / "d.jsonl"
    near = [{"section": "s", "text": "x", "score": 0.48, "decision": "keep"}] * 5
    decision_log.append(path, _record(session="a", entries=near))
    decision_log.append(path, _record(session="b", judge={"name": "lexical", "model": "lexical-0-old"}))
    decision_log.append(path, _record(session="c", errors=["jev: HTTP 500 after 3 attempt(s)"]))
    decision_log.append(path, _record(session="d", op="hook", status="timeout", errors=["time budget of 20s spent"]))
    out = json.loads(sjc("audit", "--json", "--log", str(path), home=tmp_path).stdout)
    text = "\n".join(out["warnings"])
    assert "move the threshold off the cluster" in text
    assert "lexical-0-old" in text and "calibrated for lexical-1" in text
    assert "judge errors" in text and "hook events produced no judgment" in text


def test_verify_finds_edits_deletions_and_swaps(replayed, tmp_path):
    path = logpath(replayed)
    for i in range(3):  # a few more records so there is a middle to tamper with
        decision_log.append(path, _record(session=f"extra{i}"))
    ok = sjc("audit", "--verify", home=replayed)
    assert ok.returncode == 0 and "chain intact" in ok.stdout
    lines = path.read_text().splitlines(keepends=True)

    def check(new_lines, needle):
        tampered = tmp_path / "t.jsonl"
        tampered.write_text("".join(new_lines))
        r = sjc("audit", "--verify", "--log", str(tampered), home=replayed)
        assert r.returncode == 1 and needle in r.stdout, r.stdout

    rec = json.loads(lines[1])
    rec["pruned"] = 99
    check([lines[0], json.dumps(rec) + "\n", *lines[2:]], "altered")
    check([lines[0], *lines[2:]], "removed")
    check([lines[0], lines[2], lines[1], *lines[3:]], "out of order")


def test_html_report_is_self_contained(replayed, tmp_path):
    out = tmp_path / "report.html"
    r = sjc("audit", "--html", str(out), home=replayed)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    for needle in ('<svg id="histogram"', '<svg id="curve"', '<select id="session"', "<del>", "<details"):
        assert needle in page
    import re

    # nothing is fetched: no external script, style, image or font (URLs inside logged text are only text)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script src" not in page and "<link" not in page and "url(" not in page and "@import" not in page


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = ["apt-get", "install", "-y", "-q", "chromium"]
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=600)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env, timeout=600)
            subprocess.run(cmd, capture_output=True, env=env, timeout=600)
    return shutil.which("chromium")


CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_html_report_in_headless_chromium(replayed, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium and it could not be installed here (Debian's chromium package)")
    out = tmp_path / "report.html"
    sjc("audit", "--html", str(out), home=replayed)
    base = [exe, *CHROME_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*base, "--dump-dom", f"file://{out}#session=S"], capture_output=True, text=True, timeout=120
    ).stdout
    assert 'id="histogram"' in dom and dom.count('class="point"') == 9
    visible = dom.count('<div class="boundary" data-session="S">')
    hidden = dom.count('<div class="boundary hidden"')
    total = out.read_text().count('<div class="boundary"')
    assert visible >= 1 and visible + hidden == total and (hidden > 0) == (total > visible)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1200,1400", f"file://{out}"], capture_output=True, timeout=120
    )
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000


def test_ten_thousand_boundaries(tmp_path):
    path = tmp_path / "big.jsonl"
    prev = decision_log.GENESIS
    entries = [
        {
            "id": i,
            "section": "Pending Tasks",
            "text": "x" * 120,
            "score": i / 30,
            "decision": "prune" if i < 10 else "keep",
            "quote": None,
        }
        for i in range(30)
    ]
    with path.open("w") as fh:
        for i in range(10_000):
            rec = _record(session=f"s{i % 50}", boundary=i, entries=entries, pruned=10, kept=20, time=f"t{i}")
            rec["prev"] = prev
            rec["hash"] = decision_log.record_hash(rec)
            prev = rec["hash"]
            fh.write(json.dumps(rec) + "\n")
    r = sjc("audit", "--json", "--log", str(path), home=tmp_path)
    out = json.loads(r.stdout)
    assert out["totals"]["judged"] == 10_000 and out["totals"]["pruned"] == 100_000
    assert sjc("audit", "--verify", "--log", str(path), home=tmp_path).returncode == 0
