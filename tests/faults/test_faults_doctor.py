"""Fault suite, ``sjc doctor``: every check ends, whatever sits at a settings path or answers at an MCP
address, and no password it finds is printed. Run as the user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import sjc_exe
from tests.faults.test_faults_budgets import DripServer

pytestmark = pytest.mark.slow


def doctor(home: Path, timeout: float = 90, **env: str) -> subprocess.CompletedProcess[str]:
    full = {"HOME": str(home), "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin", **env}
    full.setdefault("CODEX_HOME", str(home / ".codex"))
    return subprocess.run([sjc_exe(), "doctor"], capture_output=True, text=True, timeout=timeout, env=full)


def assert_ended_in_one_line_each(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith(("ok", "warn"))  # the last check (the index) was reached


@pytest.mark.parametrize(
    "where",
    [".claude/settings.json", ".claude.json", ".codex/hooks.json", ".codex/config.toml", "all"],
)
def test_a_fifo_at_a_hosts_settings_path_is_reported_not_waited_on(where, tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    targets = [".claude/settings.json", ".claude.json", ".codex/hooks.json", ".codex/config.toml"]
    for rel in targets if where == "all" else [where]:
        os.mkfifo(home / rel)
    r = doctor(home, timeout=30)  # a hang fails by the timeout
    assert_ended_in_one_line_each(r)
    assert r.returncode == 1 and "not a regular file" in r.stdout


def test_a_dripping_http_mcp_server_is_cut_off(tmp_path):
    """The MCP URL Claude Code is given answers one byte a second, forever: doctor gives it its time and
    says so."""
    drip = DripServer(every=1.0, lifetime=60)
    try:
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True)
        (home / ".claude.json").write_text(
            json.dumps({"mcpServers": {"sjc": {"type": "http", "url": drip.url + "/mcp"}}})
        )
        r = doctor(home)
        assert_ended_in_one_line_each(r)
        assert drip.accepted >= 1
        line = next(ln for ln in r.stdout.splitlines() if "MCP server sjc (HTTP)" in ln)
        assert line.startswith("FAIL") and "no answer to initialize within" in line
    finally:
        drip.close()


@pytest.mark.parametrize("answers", [False, True], ids=["silent", "answers-then-lingers"])
def test_an_mcp_command_whose_child_keeps_stdout_open_is_cut_off(answers, tmp_path):
    """The registered command leaves a child holding its stdout (and, in one case, answers first): doctor
    does not wait for that child, and ends it."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    pidfile = tmp_path / "child.pid"
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "lingering"}}})
    script = tmp_path / "server.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"sleep 600 & echo $! > {pidfile}\n" + (f"read line; echo '{answer}'\n" if answers else "") + "exit 0\n"
    )
    script.chmod(0o755)
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"sjc": {"command": str(script)}}}))
    r = doctor(home)
    assert_ended_in_one_line_each(r)
    line = next(ln for ln in r.stdout.splitlines() if "MCP server sjc registered" in ln)
    if answers:
        assert line.startswith("ok") and "lingering answered initialize" in line
    else:
        assert line.startswith("FAIL") and "no answer to initialize within" in line
    child = int(pidfile.read_text())
    try:
        os.kill(child, 0)
        with open(f"/proc/{child}/stat") as fh:
            alive = fh.read().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive, "the child holding stdout was left running"


def test_a_judges_password_and_secret_parameters_are_never_printed(tmp_path):
    home = tmp_path / "home"
    cfg = home / ".config" / "sjc"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text(
        'judge = "openai"\nallow_remote = true\n[openai]\nbase_url = "http://judge:S3cret-pw@127.0.0.1:9/v1?api_key=K3y-123"\n'
    )
    (home / ".claude").mkdir()
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"sjc": {"type": "http", "url": "http://team:T0ken-pw@127.0.0.1:9/mcp"}}})
    )
    r = doctor(home)
    assert_ended_in_one_line_each(r)
    for secret in ("S3cret-pw", "K3y-123", "T0ken-pw"):
        assert secret not in r.stdout + r.stderr
    assert "judge:[REDACTED" in r.stdout and "team:[REDACTED" in r.stdout


def test_what_a_server_says_cannot_reach_the_terminal_raw(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    name = "evil\x1b[2J\x1b]0;pwned\x07\nok    forged line"
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": name}}})
    script = tmp_path / "server.py"
    script.write_text(f"import sys\nsys.stdin.readline()\nprint({answer!r}, flush=True)\n")
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"sjc": {"command": sys.executable, "args": [str(script)]}}})
    )
    r = doctor(home)
    assert_ended_in_one_line_each(r)
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert not any(ln.startswith("ok    forged") for ln in r.stdout.splitlines())
    assert "evil\\x1b[2J" in r.stdout
