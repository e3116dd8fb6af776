"""``sjc doctor`` reports what a host feels and checks what it relies on, run as a user runs it (a throw-away
HOME, a chosen PATH):

- the MCP server's ``initialize`` time is what ``benchmarks/mcp_startup.py`` measures, from the spawn to the
  answer, at a second start; the server's ending after its stdin closes is not in it (it was: a server that
  took its time to end read as a start of seconds), and a much slower first start is named as such;
- the commands each surface runs are there: the plugin's hooks need ``sjc-hook`` on PATH, hook entries the
  program they name, and the user ``sjc`` itself;
- the fix for a config that does not load never writes over a file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sjc_mcp.setup.doctor.mcp import ENDING_WAIT
from tests.conftest import sjc_exe

HERE = Path(sjc_exe()).parent
SYSTEM = "/usr/bin:/bin"


def doctor(home: Path, path: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SJC_", "XDG_", "CODEX_", "ANTHROPIC_"))}
    full = {**base, "HOME": str(home), "PATH": path, "CODEX_HOME": str(home / ".codex"), **env}
    return subprocess.run(
        [str(HERE / "sjc"), "doctor", *args], capture_output=True, text=True, timeout=120, env=full, cwd=home
    )


def lines(r: subprocess.CompletedProcess[str], scope: str) -> dict[str, str]:
    """What each line of ``scope`` says -> (status, its fix)."""
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] == scope:
            what, _, fix = parts[2].partition(" — fix: ")
            out[what] = f"{parts[0]} {fix}".strip()
    return out


SERVER = """\
import json, os, pathlib, signal, sys, time
log = pathlib.Path(sys.argv[1])
first = not log.exists()
sys.stdin.readline()
if first and len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))  # a cold first start
answer = {"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "slow-to-end"}}}
os.write(1, (json.dumps(answer) + "\\n").encode())  # in one write: the client may hang up once it has it
sys.stdin.read()  # until the client closes its stdin
with log.open("a") as fh:
    fh.write(f"eof {time.monotonic()}\\n")
signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(600)  # and it never ends by itself
"""


def _registered_server(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    log = tmp_path / "server.log"
    entry = {"command": sys.executable, "args": [str(script), str(log), *args]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"sjc": entry}}))
    return home, log


def _figure(r: subprocess.CompletedProcess[str]) -> tuple[str, int]:
    (line,) = [w for w in lines(r, "claude-code") if w.startswith("MCP server sjc registered")]
    return line, int(re.search(r"answered initialize (\d+) ms after its start", line).group(1))


@pytest.mark.slow
def test_initialize_is_timed_from_the_spawn_to_the_answer_without_the_servers_ending(tmp_path):
    """The server answers, then never ends: doctor waits ENDING_WAIT seconds for it before ending it. The
    second start is spawned after that wait, and its answer read before that server saw its stdin close,
    so the figure is at most the time between the two servers' end of input, less the wait."""
    home, log = _registered_server(tmp_path)
    r = doctor(home, f"{HERE}:{SYSTEM}")
    line, ms = _figure(r)
    assert "(spawn to answer, as a host waits)" in line, line
    eof = [float(x.split()[1]) for x in log.read_text().splitlines()]
    assert len(eof) == 2  # started twice, as a host starts it
    assert ms <= (eof[1] - eof[0] - ENDING_WAIT) * 1000 + 1, (ms, eof)


@pytest.mark.slow
def test_a_cold_first_start_is_named_beside_the_figure(tmp_path):
    home, _ = _registered_server(tmp_path, "5")
    line, ms = _figure(doctor(home, f"{HERE}:{SYSTEM}"))
    first = int(re.search(r"the first start took (\d+) ms, cold", line).group(1))
    assert first >= 5000 and ms < first


@pytest.mark.slow
def test_the_plugins_hooks_need_sjc_hook_on_path(tmp_path):
    home = tmp_path / "home"
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {"sjc@sjc-mcp": [{}]}}))
    r = doctor(home, SYSTEM)
    cc = lines(r, "claude-code")
    assert cc["hooks installed (plugin sjc@sjc-mcp)"] == "ok"
    not_on_path = "the plugin's hooks run sjc-hook from PATH, and it is not on PATH: they judge nothing"
    assert (
        cc[not_on_path]
        == f'FAIL put {HERE} on the PATH Claude Code starts with (export PATH={HERE}:"$PATH" in your shell profile)'
    )
    assert r.returncode == 1
    # sjc itself is not on PATH either: said, with where this install keeps it
    (what,) = lines(r, "commands")
    assert what.startswith("sjc is not on PATH") and lines(r, "commands")[what].startswith(f"warn put {HERE} on PATH")
    r = doctor(home, f"{HERE}:{SYSTEM}")
    assert not_on_path not in lines(r, "claude-code")
    assert lines(r, "commands") == {f"sjc on PATH ({HERE / 'sjc'})": "ok"}


@pytest.mark.slow
def test_hook_entries_whose_program_is_gone_fail_and_the_fix_rewrites_them(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    gone = tmp_path / "old-venv" / "bin" / "sjc-hook"
    hooks = {
        "PreCompact": [{"matcher": "manual|auto", "hooks": [{"type": "command", "command": f"{gone} claude-code"}]}]
    }
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    path = f"{HERE}:{SYSTEM}"
    cc = lines(doctor(home, path), "claude-code")
    what = f"the hooks run {gone} is not there (or not executable): they do nothing"
    assert cc[what] == "FAIL sjc install claude-code"
    fixed = subprocess.run(
        ["sh", "-c", "sjc install claude-code"],
        env={**os.environ, "HOME": str(home), "PATH": path},
        capture_output=True,
    )
    assert fixed.returncode == 0
    r = doctor(home, path)
    assert not [w for w in lines(r, "claude-code") if "they do nothing" in w] and r.returncode == 0, r.stdout


@pytest.mark.slow
def test_another_sjc_first_on_path_is_named(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "sjc").write_text("#!/bin/sh\nexit 1\n")
    (other / "sjc").chmod(0o755)
    ((what, fix),) = lines(doctor(home, f"{other}:{HERE}:{SYSTEM}"), "commands").items()
    assert what == f"the sjc on PATH ({other / 'sjc'}) is another install than this one ({HERE / 'sjc'})"
    assert fix == f"warn put {HERE} first on PATH, or remove the other install"


def _config_fix(r: subprocess.CompletedProcess[str]) -> str:
    ((_, fix),) = lines(r, "config").items()
    assert fix.startswith("FAIL ")
    return fix.removeprefix("FAIL ")


@pytest.mark.slow
def test_a_bad_config_fix_never_writes_over_a_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = f"{HERE}:{SYSTEM}"
    env = {**os.environ, "HOME": str(home), "PATH": path}
    env = {k: v for k, v in env.items() if not k.startswith(("SJC_", "XDG_"))}
    # a file that is not sjc's config at all, named by --config
    other = home / "pyproject.toml"
    other.write_text('[build-system]\nrequires = ["setuptools"]\n')
    before = other.read_bytes()
    fix = _config_fix(doctor(home, path, "--config", str(other)))
    assert "--force" not in fix and fix.startswith(f"correct {other}; ")
    command = fix.split("; ", 1)[1].removesuffix(" writes an example beside it")
    assert command == f"sjc config init --config {home / 'pyproject.example.toml'}"
    assert subprocess.run(["sh", "-c", command], env=env, capture_output=True).returncode == 0
    assert other.read_bytes() == before and (home / "pyproject.example.toml").is_file()
    assert not (home / ".config" / "sjc" / "config.toml").exists()  # the default config untouched too
    # run again: the example is there now, so only the correction is asked for
    assert _config_fix(doctor(home, path, "--config", str(other))) == f"correct {other}"
    # a file that is not there yet: written where it was named
    missing = home / "team.toml"
    fix = _config_fix(doctor(home, path, "--config", str(missing)))
    assert fix == f"sjc config init --config {missing} (writes a commented config there)"
    assert subprocess.run(["sh", "-c", fix.split(" (")[0]], env=env, capture_output=True).returncode == 0
    assert lines(doctor(home, path, "--config", str(missing)), "config") == {f"valid ({missing})": "ok"}
    # a bad value from the environment: the variable is the fix
    fix = _config_fix(doctor(home, path, SJC_THRESHOLD="7"))
    assert fix == "correct or unset SJC_THRESHOLD"
