"""``sjc doctor`` and ``sjc config``, run as a user runs them, in a throw-away HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import sjc_exe


def sjc(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SJC_", "XDG_", "CODEX_", "ANTHROPIC_"))}
    base["PATH"] = f"{Path(sjc_exe()).parent}:/usr/bin:/bin"  # no claude or codex binaries from the machine
    return subprocess.run(
        [sjc_exe(), *args], capture_output=True, text=True, timeout=60, env={**base, "HOME": str(home), **env}
    )


def lines(r: subprocess.CompletedProcess[str], scope: str) -> list[str]:
    return [line for line in r.stdout.splitlines() if line.split()[1:2] == [scope]]


def test_doctor_on_a_fresh_machine_finds_no_host_and_passes(tmp_path):
    r = sjc(tmp_path, "doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "neither Claude Code" in r.stdout
    assert any(line.startswith("ok") and "lexical" in line for line in lines(r, "judge"))


@pytest.mark.slow
def test_doctor_claude_code_hooks_and_a_registered_server_that_answers(tmp_path):
    (tmp_path / ".claude").mkdir()
    r = sjc(tmp_path, "doctor")
    assert any(
        "hooks not installed" in line and "fix: sjc install claude-code" in line for line in r.stdout.splitlines()
    )
    assert sjc(tmp_path, "install", "claude-code").returncode == 0
    (tmp_path / ".claude.json").write_text(
        json.dumps({"mcpServers": {"sjc": {"type": "stdio", "command": str(Path(sjc_exe()).parent / "sjc-mcp")}}})
    )
    r = sjc(tmp_path, "doctor")
    cc = lines(r, "claude-code")
    assert any(line.startswith("ok") and "hooks installed" in line for line in cc), r.stdout
    assert any(line.startswith("ok") and "answered initialize" in line for line in cc), r.stdout
    assert r.returncode == 0


def test_doctor_fails_on_a_server_that_does_not_start(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude.json").write_text(json.dumps({"mcpServers": {"sjc": {"command": "/nowhere/sjc-mcp"}}}))
    r = sjc(tmp_path, "doctor")
    assert r.returncode == 1
    assert any(line.startswith("FAIL") and "fix: claude mcp" in line for line in lines(r, "claude-code"))


@pytest.mark.slow
def test_doctor_says_codex_hooks_are_untrusted_until_trusted(tmp_path):
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    assert sjc(tmp_path, "install", "codex", CODEX_HOME=str(codex_home)).returncode == 0
    r = sjc(tmp_path, "doctor", CODEX_HOME=str(codex_home))
    assert r.returncode == 1
    assert any(line.startswith("FAIL") and "not trusted" in line and "--trust" in line for line in lines(r, "codex"))
    assert sjc(tmp_path, "install", "codex", "--trust", CODEX_HOME=str(codex_home)).returncode == 0
    r = sjc(tmp_path, "doctor", CODEX_HOME=str(codex_home))
    assert any(line.startswith("ok") and "hooks trusted" in line for line in lines(r, "codex")), r.stdout
    assert r.returncode == 0


@pytest.mark.slow
def test_doctor_reports_a_bad_config_a_dead_judge_and_the_kill_switch(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("threshold = 7\n")
    r = sjc(tmp_path, "doctor", SJC_CONFIG=str(bad))
    assert r.returncode == 1 and any(line.startswith("FAIL") for line in lines(r, "config"))
    judge = tmp_path / "judge.toml"
    judge.write_text('judge = "openai"\n[openai]\nbase_url = "http://127.0.0.1:9/v1"\n')
    r = sjc(tmp_path, "doctor", "--config", str(judge))
    assert r.returncode == 1 and any(line.startswith("FAIL") and "unreachable" in line for line in lines(r, "judge"))
    (tmp_path / ".config" / "sjc").mkdir(parents=True)
    (tmp_path / ".config" / "sjc" / "disabled").touch()
    r = sjc(tmp_path, "doctor")
    assert any(
        line.startswith("warn") and "switched off" in line and "fix: rm" in line for line in r.stdout.splitlines()
    )


@pytest.mark.slow
def test_config_path_init_show(tmp_path):
    r = sjc(tmp_path, "config", "path", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert r.returncode == 0 and str(tmp_path / "xdg" / "sjc" / "config.toml") in r.stdout
    r = sjc(tmp_path, "config", "init")
    target = tmp_path / ".config" / "sjc" / "config.toml"
    assert r.returncode == 0 and target.is_file() and "threshold = 0.5" in target.read_text()
    again = sjc(tmp_path, "config", "init")
    assert again.returncode == 2 and "exists already" in again.stderr and len(again.stderr.splitlines()) == 1
    shown = json.loads(sjc(tmp_path, "config", "show").stdout)
    assert shown["file"] == str(target) and shown["config"]["threshold"] == 0.5


@pytest.mark.slow
def test_doctor_checks_an_http_registration_with_its_token(tmp_path):
    """A team server registered over HTTP as `claude mcp add --transport http … --header` writes it."""
    from tests.server.test_server_http import TOKEN, http_server

    (tmp_path / ".claude").mkdir()
    with http_server(tmp_path) as (_, url, _):
        entry = {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${SJC_MCP_TOKEN}"}}
        (tmp_path / ".claude.json").write_text(json.dumps({"mcpServers": {"sjc": entry}}))
        r = sjc(tmp_path, "doctor", SJC_MCP_TOKEN=TOKEN)
        assert any(
            line.startswith("ok") and "(HTTP)" in line and "answered initialize" in line
            for line in lines(r, "claude-code")
        ), r.stdout
        r = sjc(tmp_path, "doctor", SJC_MCP_TOKEN="wrong-token-0000000000")
        assert r.returncode == 1
        assert any(line.startswith("FAIL") and "401" in line for line in lines(r, "claude-code")), r.stdout


@pytest.mark.slow
def test_doctor_checks_codex_mcp_registration(tmp_path):
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('[mcp_servers.sjc]\ncommand = "/nowhere/sjc-mcp"\n')
    r = sjc(tmp_path, "doctor", CODEX_HOME=str(codex_home))
    assert r.returncode == 1
    assert any(
        line.startswith("FAIL") and "fix: fix command in [mcp_servers.sjc]" in line for line in lines(r, "codex")
    ), r.stdout
    exe = json.dumps(str(Path(sjc_exe()).parent / "sjc-mcp"))
    (codex_home / "config.toml").write_text(f"[mcp_servers.sjc]\ncommand = {exe}\nrequired = true\n")
    r = sjc(tmp_path, "doctor", CODEX_HOME=str(codex_home))
    assert any(line.startswith("ok") and "answered initialize" in line for line in lines(r, "codex")), r.stdout


def test_doctor_says_which_index_build_runs(tmp_path, monkeypatch):
    """The compiled index where the install built it; a warning with its fix where it did not (sjc still
    works, slower)."""
    from sjc_mcp import evidence
    from sjc_mcp.setup import doctor

    r = sjc(tmp_path, "doctor")
    (line,) = lines(r, "index")
    if evidence._bm25 is not None:
        assert line.startswith("ok") and "compiled" in line
    else:
        assert line.startswith("WARN") and "C compiler" in line
    monkeypatch.setattr(evidence, "_bm25", None)
    check = doctor._index()
    assert check.status == doctor.WARN and "not built" in check.what and "gcc" in (check.fix or "")
