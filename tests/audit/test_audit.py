from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sjc_mcp.log import chain as decision_log
from tests.conftest import FIXTURES, ROOT, sjc_exe
from tests.hosts.test_hosts import small_cc


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


@pytest.mark.slow
def test_replay_logs_every_boundary_in_shadow_mode(replayed):
    recs = [rec for _, rec, _ in decision_log.read(logpath(replayed))]
    assert len(recs) >= 2 and all(r["mode"] == "shadow" and r["op"] == "replay" for r in recs)
    assert all(r["chars_after"] == r["chars_before"] for r in recs)


def _record(**kw):
    base = {
        "v": 1,
        "op": "prune",
        "host": "generic",
        "judge": {"name": "lexical", "model": "lexical-2"},
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
    assert "lexical-0-old" in text and "calibrated for lexical-2" in text
    assert "judge errors" in text and "hook events produced no judgment" in text


@pytest.mark.slow
def test_audit_json(replayed):
    r = sjc("audit", "--json", home=replayed)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    b = out["boundaries"][0]
    for key in (
        "session",
        "boundary",
        "boundary_id",
        "kind",
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
        "history",
    ):
        assert key in b
    judged = [b for b in out["boundaries"] if "judge" in b]
    assert out["totals"]["judged"] == len(judged) and out["totals"]["tokens_estimated"] is True
    # a replay is shadow mode: nothing was removed, so nothing is added to the totals of what was removed
    assert all(b["kind"] == "shadow" for b in judged)
    assert out["totals"]["enforced"] == 0 and out["totals"]["pruned"] == 0
    assert out["totals"]["shadow"]["would_prune"] == sum(b["pruned"] for b in judged) > 0
    for b in judged:
        for p in b["pruned_entries"]:
            assert p["quote"] and p["reason"]  # the evidence that decided it (or "no source found"), and why
    terminal = sjc("audit", home=replayed)
    assert terminal.returncode == 0 and "totals" in terminal.stdout


@pytest.mark.slow
def test_totals_count_the_latest_enforced_decision_per_boundary(tmp_path):
    path = tmp_path / "d.jsonl"
    one = {"session": "A", "boundary": 0, "boundary_id": "b-1"}
    entries = [{"section": "s", "text": "x", "score": 0.1, "decision": "prune"}]
    decision_log.append(path, _record(**one, op="replay", mode="shadow", pruned=3, entries=entries, chars_after=10))
    decision_log.append(path, _record(**one, op="judge", pruned=3, entries=entries))
    decision_log.append(path, _record(**one, op="hook", pruned=2, chars_before=100, chars_after=80, entries=entries))
    decision_log.append(path, _record(**one, op="hook", pruned=1, chars_before=100, chars_after=90, entries=entries))
    # tool-result pruning of the same boundary names only its session and index: it joins boundary b-1
    decision_log.append(
        path,
        {
            "op": "tools",
            "session": "A",
            "boundary": 0,
            "status": "judged",
            "chars_before": 50,
            "chars_after": 20,
            "kept": 1,
            "dropped": 1,
            "truncated": 0,
            "entries": [],
        },
    )
    two = {"session": "B", "boundary": 0, "boundary_id": "b-2"}
    decision_log.append(
        path,
        _record(
            **two,
            op="replay",
            mode="shadow",
            pruned=4,
            chars_before=40,
            chars_after=40,
            chars_after_enforced=30,
            entries=entries,
        ),
    )
    decision_log.append(
        path,
        _record(
            **two,
            op="replay",
            mode="shadow",
            pruned=5,
            chars_before=40,
            chars_after=40,
            chars_after_enforced=25,
            entries=entries,
        ),
    )
    out = json.loads(sjc("audit", "--json", "--log", str(path), home=tmp_path).stdout)
    t = out["totals"]
    assert t["boundaries"] == 2 and t["records"] == 7
    assert (t["enforced"], t["pruned"], t["chars_before"], t["chars_after"]) == (1, 1, 100, 90)
    assert t["shadow"] == {"boundaries": 1, "would_prune": 5, "chars_before": 40, "chars_after_if_enforced": 25}
    assert t["tool_chars_before"] == 50 and t["tool_chars_after"] == 20
    a = next(b for b in out["boundaries"] if b["session"] == "A")
    assert a["kind"] == "enforced" and a["pruned"] == 1 and len(a["tools"]) == 1
    assert [h["counted"] for h in a["history"]] == [False, False, False, True, False]
    text = sjc("audit", "--log", str(path), home=tmp_path).stdout
    assert "also logged, not counted" in text and "would prune 5" in text
    only_b = json.loads(sjc("audit", "--json", "--session", "B", "--log", str(path), home=tmp_path).stdout)
    assert only_b["totals"]["enforced"] == 0 and only_b["totals"]["shadow"]["would_prune"] == 5


HOSTILE = "[/b] keep [test-repo-skill] \x1b[31mred\x1b[0m [bold]x[/bold] :smile: bell\x07 end"


@pytest.mark.slow
def test_terminal_audit_shows_log_text_literally(tmp_path):
    path = tmp_path / "d.jsonl"
    entries = [
        {"section": "Errors [/i]", "text": HOSTILE, "score": 0.1, "decision": "prune", "quote": "q [/] \x1b]0;t\x07"},
        {"section": "Files", "text": "kept entry", "score": 0.9, "decision": "keep"},
    ]
    decision_log.append(
        path,
        _record(
            session="s[/b]",
            mode="shadow",
            op="hook",
            pruned=1,
            entries=entries,
            chars_before=500,
            chars_after=500,
            chars_after_enforced=321,
            tokens_after_enforced=80,
        ),
    )
    r = sjc("audit", "--log", str(path), home=tmp_path, COLUMNS="200")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    flat = " ".join(out.split())
    for needle in (
        "[/b] keep [test-repo-skill]",
        "\\x1b[31mred\\x1b[0m",
        "[bold]x[/bold]",
        ":smile:",
        "bell\\x07",
        "Errors [/i]",
        "s[/b]",
        "q [/]",
        "\\x1b]0;t\\x07",
        "shadow: pruning would leave 321 characters",
    ):
        assert needle in flat, needle
    assert "\x1b" not in out and "\x07" not in out  # nothing the log holds reaches the terminal as a control code
    assert max(len(line) for line in out.splitlines()) <= 100  # fits 100 columns even when the terminal is wider
    assert "kept entry" not in out
    assert "kept entry" in sjc("audit", "--all", "--log", str(path), home=tmp_path).stdout


def test_terminal_audit_colours_pruned_red_and_kept_dim():
    import io

    from rich.console import Console

    from sjc_mcp.audit import summary as audit
    from sjc_mcp.audit import view as audit_view

    rec = _record(
        session="s",
        boundary_id="b",
        pruned=1,
        entries=[
            {"section": "A", "text": "gone " + HOSTILE, "score": 0.1, "decision": "prune", "quote": "ev-1"},
            {"section": "B", "text": "stays", "score": 0.9, "decision": "keep"},
        ],
    )
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=100, highlight=False)
    audit_view.render_terminal(audit.summarise([rec], []), console, show_kept=True)
    lines = buf.getvalue().splitlines()
    gone = next(line for line in lines if "gone" in line)
    stays = next(line for line in lines if "stays" in line)
    assert "\x1b[31m" in gone and "\x1b[2m" in stays and "\x1b[31m" not in stays
    import re

    plain = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).split())
    assert "\\x1b[31mred" in plain  # the entry's own escape is shown, not obeyed
    assert "score 0.10 < 0.45 · ev-1" in plain  # why, and the evidence


def _tampered(path: Path, tmp_path: Path, lines: list[str], name: str) -> Path:
    out = tmp_path / name / "d.jsonl"
    out.parent.mkdir()
    out.write_text("".join(lines))
    shutil.copy(decision_log.anchor_path(path), decision_log.anchor_path(out))
    return out


@pytest.mark.slow
def test_verify_proves_the_log_whole(tmp_path):
    path = tmp_path / "d.jsonl"
    for i in range(6):
        decision_log.append(path, _record(session=f"s{i}", boundary_id=f"b{i}"))
    ok = sjc("audit", "--verify", "--log", str(path), home=tmp_path)
    assert ok.returncode == 0 and "6 records, whole" in ok.stdout, ok.stdout
    lines = path.read_text().splitlines(keepends=True)
    edited = json.loads(lines[2])
    edited["pruned"] = 99
    cases = {
        "cut": (lines[:-1], "cut from the end"),
        "cut2": (lines[:-2], "the log ends early: the anchor counts 6 records, the log has 4"),
        "removed": ([*lines[:2], *lines[3:]], "removed"),
        "removed_first": (lines[1:], "removed"),
        "edited": ([*lines[:2], json.dumps(edited) + "\n", *lines[3:]], "altered"),
        "edited_last": ([*lines[:-1], lines[-1].replace('"kept":1', '"kept":7')], "altered"),
        "reordered": ([lines[0], lines[2], lines[1], *lines[3:]], "out of order"),
    }
    for name, (new_lines, needle) in cases.items():
        r = sjc("audit", "--verify", "--log", str(_tampered(path, tmp_path, new_lines, name)), home=tmp_path)
        assert r.returncode == 1 and needle in r.stdout, (name, r.stdout)
    # the anchor gone: a cut tail can no longer be ruled out, and verify says so
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(lines[:-1]))
    r = sjc("audit", "--verify", "--log", str(bare), home=tmp_path)
    assert r.returncode == 1 and "anchor" in r.stdout and "missing" in r.stdout


def test_verify_notes_a_record_written_before_its_anchor(tmp_path):
    """A writer that stopped between the line and the anchor leaves one record past the anchor: reported, not
    a hole; the next append brings the anchor up to date."""
    path = tmp_path / "d.jsonl"
    for i in range(3):
        decision_log.append(path, _record(session=f"s{i}"))
    stale = decision_log.anchor_path(path).read_text()
    decision_log.append(path, _record(session="late"))
    decision_log.anchor_path(path).write_text(stale)
    r = sjc("audit", "--verify", "--log", str(path), home=tmp_path)
    assert r.returncode == 0 and "1 record(s) after the anchor" in r.stdout, r.stdout
    decision_log.append(path, _record(session="next"))
    assert decision_log.read_anchor(path)["records"] == 5
    assert "after the anchor" not in sjc("audit", "--verify", "--log", str(path), home=tmp_path).stdout


def test_concurrent_writers_keep_the_log_whole(tmp_path):
    path = tmp_path / "d.jsonl"
    code = (
        "import sys\nfrom sjc_mcp.log import chain as log\n"
        "for i in range(40):\n    log.append(sys.argv[1], {'op': 'hook', 'w': sys.argv[2], 'i': i, 'entries': []})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(w)]) for w in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    r = sjc("audit", "--verify", "--log", str(path), home=tmp_path)
    assert r.returncode == 0 and "160 records, whole" in r.stdout, r.stdout


def test_prune_lists_what_it_removed_on_stderr(tmp_path):
    ex = ROOT / "examples"
    args = [
        "--summary",
        str(ex / "summary.md"),
        "--evidence",
        *map(str, sorted((ex / "outputs").glob("*.txt"))),
        "--evidence-jsonl",
        str(ex / "user-messages.jsonl"),
    ]
    r = sjc("prune", *args, home=tmp_path, SJC_DECISION_LOG=str(tmp_path / "l.jsonl"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith((ex / "summary.md").read_text()[:20])  # stdout is the summary only
    js = json.loads(sjc("prune", *args, "--json", home=tmp_path, SJC_DECISION_LOG=str(tmp_path / "l.jsonl")).stdout)
    gone = [e for e in js["entries"] if e["decision"] == "prune"]
    lines = [line for line in r.stderr.splitlines() if line.startswith("sjc: removed [")]
    assert len(gone) >= 1 and len(lines) == len(gone)
    for e, line in zip(gone, lines, strict=True):
        assert f"[{e['section']}]" in line and " ".join(e["text"].split()[:3]) in line
        assert f"score {e['score']:.2f} <" in line
        if e.get("reason"):  # the judge's own why, when it gives one
            assert e["reason"][:30] in line
    assert f"removed {len(gone)} of {len(js['entries'])} entries" in r.stderr


@pytest.mark.slow
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
    decision_log.anchor_path(path).write_text(json.dumps({"v": 1, "records": 10_000, "hash": prev}))
    r = sjc("audit", "--json", "--log", str(path), home=tmp_path)
    out = json.loads(r.stdout)
    assert out["totals"]["judged"] == 10_000 and out["totals"]["pruned"] == 100_000
    assert sjc("audit", "--verify", "--log", str(path), home=tmp_path).returncode == 0


@pytest.mark.slow
def test_audit_bad_log_paths_are_one_line(tmp_path):
    for args in (
        ["--log", str(tmp_path / "none.jsonl")],
        ["--log", str(tmp_path)],
        ["--verify", "--log", str(tmp_path / "none.jsonl")],
        ["--verify", "--log", str(tmp_path)],
    ):
        r = sjc("audit", *args, home=tmp_path)
        assert r.returncode == 2 and r.stderr.startswith("sjc: error:") and len(r.stderr.splitlines()) == 1, r.stderr


@pytest.mark.slow
def test_a_second_replay_is_history_not_more_savings(replayed, tmp_path):
    before = json.loads(sjc("audit", "--json", home=replayed).stdout)
    (tmp_path / "again").mkdir()
    again = sjc("replay", str(small_cc(tmp_path / "again")), home=replayed)
    assert again.returncode == 0, again.stderr
    after = json.loads(sjc("audit", "--json", home=replayed).stdout)
    assert after["totals"]["records"] > before["totals"]["records"]
    assert after["totals"]["boundaries"] == before["totals"]["boundaries"]
    assert after["totals"]["shadow"] == before["totals"]["shadow"]
    assert after["totals"]["not_counted"] == after["totals"]["records"] - before["totals"]["records"]
