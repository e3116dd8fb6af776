"""The audit speaks of sessions as a person knows them (project folder, first prompt, when it started), shows
every warning a judgment logged (JSON, terminal, HTML; replay naming the file), and replay counts what it
judged as the audit counts it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sjc_mcp.config import Config
from sjc_mcp.hosts import read_boundary
from sjc_mcp.log import chain as decision_log
from sjc_mcp.pipeline import judge_boundary
from tests.audit.test_audit import logpath, sjc
from tests.conftest import FIXTURES
from tests.hosts.test_hosts import _write, cc_record, small_cc

PROJECT = "/home/dev/code/api"
SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"
PROMPT = f"please fix the flaky \x1b[31mtest in api/ (key {SECRET})"
SUMMARY = (
    "This session is being continued from a previous conversation.\n\nSummary:\n"
    "1. Primary Request and Intent:\n   - fix the flaky test in api/\n"
    "2. Key Technical Concepts:\n   - the release is signed with the vault key 7f3c\n"
    "3. Pending Tasks:\n   - publish version 2.0 to the registry\n   - 3 failed, 41 passed in the suite\n"
)


def mid_session(folder: Path, name: str = "mid.jsonl", *, mid: bool = True) -> Path:
    """A Claude Code transcript that starts mid-session (its first record's parent is not in the file; with
    ``mid`` False, the session's start), its first prompt holding an escape sequence and a secret; one
    compaction."""
    rec = [
        cc_record("u1", "before-the-file" if mid else None, "user", PROMPT, ts="2026-03-02T09:15:00Z", cwd=PROJECT),
        cc_record(
            "a1",
            "u1",
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
            cwd=PROJECT,
        ),
        cc_record("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "3 failed, 41 passed"}]),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "B0",
            "parentUuid": None,
            "logicalParentUuid": "r1",
            "sessionId": "S-mid",
            "timestamp": "2026-03-02T10:00:00Z",
        },
        cc_record("S0", "B0", "user", SUMMARY, isCompactSummary=True),
    ]
    for r in rec:
        r["sessionId"] = "S-mid"
    return _write(folder / name, rec)


def _log_one(tmp_path: Path, path: Path, index: int | None = None) -> dict:
    log = tmp_path / f"log-{path.stem}.jsonl"
    judge_boundary(read_boundary(path, index), config=Config(decision_log=str(log)), log=True)
    return json.loads(log.read_text().splitlines()[-1])


def test_records_name_the_session_redacted_and_cut(tmp_path):
    rec = _log_one(tmp_path, mid_session(tmp_path))
    assert rec["project"] == PROJECT and rec["started"] == "2026-03-02T09:15:00Z"
    assert rec["first_prompt"].startswith("please fix the flaky \x1b[31mtest")  # the log keeps it as it was
    assert SECRET not in rec["first_prompt"] and SECRET not in json.dumps(rec)  # redacted as entries are
    cc = _log_one(tmp_path, small_cc(tmp_path))  # commands and reminders are not the prompt
    assert cc["first_prompt"] == "please fix the flaky test in api/" and "project" not in cc
    long = tmp_path / "long"
    long.mkdir()
    path = mid_session(long)
    path.write_text(path.read_text().replace("please fix", "please " + "really " * 100 + "fix"))
    assert len(_log_one(tmp_path, path)["first_prompt"]) == 200


def test_a_reader_without_them_gives_the_first_prompt_of_the_sessions_start(tmp_path):
    """A generic transcript names no folder: the first prompt is the span's first user message where the
    span is the session's start, and is not guessed after an earlier compaction."""
    lines = [
        {"role": "user", "content": "rename the config loader"},
        {"role": "tool", "content": "renamed 3 files"},
        {"role": "summary", "content": "## Done\n- renamed 3 files"},
        {"role": "user", "content": "now the tests"},
        {"role": "summary", "content": "## Done\n- tests pass"},
    ]
    path = _write(tmp_path / "t.jsonl", lines)
    first, second = _log_one(tmp_path, path, 0), _log_one(tmp_path, path, 1)
    assert first["first_prompt"] == "rename the config loader" and "first_prompt" not in second
    assert first["session"] == str(path.resolve())  # the file stands for the session it has no id for


@pytest.mark.skipif(not (FIXTURES / "codex").is_dir(), reason="../shared/fixtures/codex is absent")
def test_codex_rollouts_name_the_session(tmp_path):
    path = FIXTURES / "codex" / "agent-history__compaction__session_with_compaction.jsonl"
    rec = _log_one(tmp_path, path)
    assert rec["project"] == "/home/testuser/codex-compact-project"
    assert rec["first_prompt"] == "Help me build the API endpoints"
    assert rec["started"] == "2025-10-28T04:00:00.000Z"


@pytest.mark.slow
def test_audit_names_sessions_and_shows_every_warning(tmp_path):
    home = tmp_path / "home"
    path = mid_session(tmp_path)
    replayed = sjc("replay", str(path), home=home)
    assert replayed.returncode == 0, replayed.stderr
    # replay's warning names the file and boundary it is about
    assert f"sjc: warning: {path} boundary 0: incomplete span: the transcript starts mid-session" in replayed.stderr
    out = json.loads(sjc("audit", "--json", home=home).stdout)
    (b,) = out["boundaries"]
    assert (b["project"], b["started"]) == (PROJECT, "2026-03-02T09:15:00Z")
    assert b["first_prompt"].startswith("please fix the flaky")
    assert b["warnings"] and b["warnings"][0].startswith("incomplete span: the transcript starts mid-session")
    assert b["unjudged"] > 0  # the warning is why
    # the report's warnings hold it too, naming the session as a person knows it
    (w,) = [w for w in out["warnings"] if "incomplete span" in w]
    assert w.startswith(f'{PROJECT} · "please fix the flaky \\x1b[31mtest in api/') and ", boundary 0: " in w
    assert out["totals"]["boundary_warnings"] == 1
    terminal = sjc("audit", home=home)
    text = " ".join(terminal.stdout.split())
    assert "\x1b" not in terminal.stdout  # the prompt's escape is shown, not obeyed
    assert f'{PROJECT} · "please fix the flaky \\x1b[31mtest in api/' in text and "started 2026-03-02 09:15" in text
    assert "warning incomplete span: the transcript starts mid-session" in text
    assert "1 warnings at the boundaries above" in text
    page = tmp_path / "report.html"
    assert sjc("audit", "--html", str(page), home=home).returncode == 0
    html = page.read_text()
    assert "warning: incomplete span: the transcript starts mid-session" in html
    assert f"{PROJECT} · &quot;please fix the flaky" in html or f'{PROJECT} · "please fix the flaky' in html
    assert "\x1b" not in html and SECRET not in html


@pytest.mark.slow
def test_replay_and_audit_count_alike(tmp_path):
    """Replay said more would be pruned than the audit did: it counted each file's compaction, while the
    audit counts each compaction once (a session continued in a new file carries its earlier records, the
    compaction among them), and it read a file again when a folder and a file in it were both given. Now
    each file is read once and replay counts its records with the audit's own function."""
    home = tmp_path / "home"
    projects = tmp_path / "projects"
    (projects / "a").mkdir(parents=True)
    (projects / "b").mkdir()
    first = mid_session(projects / "a", "s1.jsonl", mid=False)
    shutil.copy(first, projects / "b" / "s2.jsonl")  # the same compaction in a second file
    generic = [
        {"role": "user", "content": "rename the loader"},
        {"role": "tool", "content": "renamed 3 files; 12 passed"},
        {"role": "summary", "content": "## Done\n- renamed 3 files\n- 12 passed\n## Plan\n- publish version 2.0"},
    ]
    _write(projects / "a" / "t.jsonl", generic)  # two different sessions in files of the same name
    _write(projects / "b" / "t.jsonl", [*generic[:2], {**generic[2], "content": generic[2]["content"] + " now"}])
    r = sjc("replay", str(projects), str(first), home=home)
    assert r.returncode == 0, r.stderr
    out = json.loads(sjc("audit", "--json", home=home).stdout)
    shadow = out["totals"]["shadow"]
    records = [rec for _, rec, _ in decision_log.read(logpath(home))]
    assert len(records) == 4  # s1 once though named twice, s2, both t.jsonl
    assert shadow["boundaries"] == 3 and shadow["would_prune"] == 3  # "publish version 2.0" in each
    assert (
        f"replayed 4 compactions from 4 files in shadow mode: {shadow['would_prune']} entries would have been "
        "pruned at 3 boundaries (1 read from more than one file, counted once)"
    ) in " ".join(r.stdout.split())
