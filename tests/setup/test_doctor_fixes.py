"""``sjc doctor``'s fix lines name the commands of the install that runs it, so each can be run as printed: the
bare name when that install's command is the one on PATH, its absolute path when it is not; ``claude mcp add``
always gets ``sjc-mcp`` by its absolute path. The real runs (a uv tool install, the fixes run by a shell, the
real ``claude mcp add``) are in ``tests/e2e/test_tool_install.py``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import sjc_exe


def doctor(home: Path, path: str) -> dict[str, str]:
    """What each claude-code line says -> its fix."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SJC_", "XDG_", "CODEX_", "ANTHROPIC_"))}
    r = subprocess.run(
        [sjc_exe(), "doctor"], capture_output=True, text=True, timeout=60, env={**env, "HOME": str(home), "PATH": path}
    )
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] == "claude-code":
            what, _, fix = parts[2].partition(" — fix: ")
            out[what] = fix
    return out


def test_fixes_name_this_install_by_path_when_it_is_not_on_path(tmp_path):
    (tmp_path / ".claude").mkdir()
    here = Path(sjc_exe()).parent
    lines = doctor(tmp_path, "/usr/bin:/bin")
    assert lines["hooks not installed"] == f"{here / 'sjc'} install claude-code", lines
    assert lines["MCP server not registered (optional)"] == f"claude mcp add --scope user sjc -- {here / 'sjc-mcp'}"


def test_fixes_use_the_bare_name_when_this_install_is_on_path(tmp_path):
    (tmp_path / ".claude").mkdir()
    here = Path(sjc_exe()).parent
    lines = doctor(tmp_path, f"{here}:/usr/bin:/bin")
    assert lines["hooks not installed"] == "sjc install claude-code", lines
    assert lines["MCP server not registered (optional)"] == f"claude mcp add --scope user sjc -- {here / 'sjc-mcp'}"


def test_another_sjc_first_on_path_is_not_the_one_named(tmp_path):
    """A stale sjc earlier on PATH (an old install): the fix names this one by its path."""
    (tmp_path / ".claude").mkdir()
    other = tmp_path / "other-bin"
    other.mkdir()
    for name in ("sjc", "sjc-mcp"):
        (other / name).write_text("#!/bin/sh\nexit 1\n")
        (other / name).chmod(0o755)
    here = Path(sjc_exe()).parent
    lines = doctor(tmp_path, f"{other}:{here}:/usr/bin:/bin")
    assert lines["hooks not installed"] == f"{here / 'sjc'} install claude-code", lines
    assert lines["MCP server not registered (optional)"] == f"claude mcp add --scope user sjc -- {here / 'sjc-mcp'}"


def test_an_uninstalled_plugins_copy_is_named_with_its_removal(tmp_path):
    cache = tmp_path / ".claude" / "plugins" / "cache" / "sjc-mcp"
    (cache / "sjc" / "0.1.0").mkdir(parents=True)
    lines = doctor(tmp_path, "/usr/bin:/bin")
    assert not [w for w in lines if "plugin's copy" in w]  # not marked: still Claude Code's
    (cache / "sjc" / "0.1.0" / ".orphaned_at").write_text("1796151600000")
    lines = doctor(tmp_path, "/usr/bin:/bin")
    (what,) = [w for w in lines if "plugin's copy" in w]
    assert str(cache) in what and "14 days" in what
    assert lines[what] == f"rm -rf {cache}"
