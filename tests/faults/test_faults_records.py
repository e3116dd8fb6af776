"""Fault suite, records: malformed lines in a real transcript are skipped, never fatal."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, need_shared, sjc_exe

REAL = "claude-code/entire_e1_2c3e2b3f2a_0.jsonl"

HOSTILE = [
    "[" * 100_000 + "]" * 100_000,  # nested past the JSON reader's recursion limit
    '{"type": "user", "uuid": "x1", "parentUuid": null, "message": null}',
    '{"type": "user", "uuid": "x2", "parentUuid": "x1", "message": "a string"}',
    '{"type": "user", "uuid": "x3", "parentUuid": "x2", "message": 42}',
    '{"type": "user", "uuid": "x4", "parentUuid": "x3", "isCompactSummary": true, "message": {"content": null}}',
    '{"type": "assistant", "uuid": "x5", "parentUuid": "x4", "message": {"content": 7}}',
    '{"type": "user", "uuid": "x6", "message": {"content": [{"type": "tool_result", "content": null}]}}',
    "not json at all",
    "\x00\x01\x02",
]


def spliced(tmp_path: Path) -> Path:
    src = need_shared(FIXTURES / REAL)
    lines = src.read_text().splitlines()
    out = []
    for n, line in enumerate(lines):
        out.append(line)
        if n % 20 == 5:
            out.extend(HOSTILE)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def run(*args: str, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(home / "log.jsonl")}
    return subprocess.run([sjc_exe(), *args], input=stdin, capture_output=True, text=True, timeout=120, env=env)


def test_malformed_records_are_skipped_and_the_compaction_still_judged(tmp_path):
    clean = run("judge", "--transcript", str(need_shared(FIXTURES / REAL)), "--json", home=tmp_path)
    assert clean.returncode == 0, clean.stderr
    r = run("judge", "--transcript", str(spliced(tmp_path)), "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    got, want = json.loads(r.stdout), json.loads(clean.stdout)
    assert [e["text"] for e in got["entries"]] == [e["text"] for e in want["entries"]]


@pytest.mark.slow
@pytest.mark.parametrize("event", ["PreCompact", "PostCompact", "UserPromptSubmit"])
def test_the_hook_survives_malformed_records(tmp_path, event):
    path = spliced(tmp_path)
    payload = {
        "hook_event_name": event,
        "session_id": "s-bad",
        "transcript_path": str(path),
        "cwd": str(tmp_path),
        "trigger": "manual",
        "compact_summary": "## Pending Tasks\n- Publish version 2.0 to PyPI\n",
        "prompt": "go on",
    }
    r = run("hook", "claude-code", home=tmp_path, stdin=json.dumps(payload))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    if event == "PostCompact":  # one plain line for the user; the judgment runs in a process of its own
        assert r.stdout.startswith("sjc: "), r.stdout + r.stderr
        log = tmp_path / "log.jsonl"
        deadline = time.monotonic() + 60

        def logged() -> list[dict]:
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

        while time.monotonic() < deadline and not any(r["status"] == "judged" for r in logged()):
            time.sleep(0.2)
        records = logged()
        assert any(r["status"] == "judged" and len(r["entries"]) == 1 for r in records), records
    else:
        assert r.stdout == "" or json.loads(r.stdout)
