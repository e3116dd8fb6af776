"""The config ``sjc config init`` writes keeps the team server's safe default: over HTTP, ``transcript_path``
never reads the server user's own transcripts (``~/.claude/projects`` among them), while the stdio server the
user runs for themself reads them under the default roots. Run as a user would: a throw-away HOME, ``sjc config
init`` there, ``sjc-mcp`` started on that config, a real MCP client calling the tools."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import sjc_exe
from tests.hosts.test_hosts import small_cc
from tests.server.test_server_http import TOKEN, _http_session, http_server

SUMMARY_TOOLS = ("judge_summary", "prune_summary")


def _home_env(home: Path, **extra: str) -> dict[str, str]:
    """A user whose HOME is ``home``: sjc's folders under it (XDG variables pointing there), no SJC_* set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SJC_", "XDG_"))}
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "HERMES_HOME", "OPENCLAW_STATE_DIR"):
        env.pop(var, None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )
    env.update(extra)
    return env


def _initialised_home(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """``sjc config init`` in a fresh HOME, and a small Claude Code transcript under its ~/.claude/projects:
    (the config file, the transcript, the environment)."""
    home = tmp_path / "home"
    home.mkdir()
    env = _home_env(home)
    init = subprocess.run([sjc_exe("sjc"), "config", "init"], capture_output=True, text=True, timeout=60, env=env)
    assert init.returncode == 0, init.stderr
    config = home / ".config" / "sjc" / "config.toml"
    assert str(config) in init.stdout and config.is_file()
    project = home / ".claude" / "projects" / "-home-user-api"
    project.mkdir(parents=True)
    return config, small_cc(project), env


async def _call_each(s: ClientSession, path: Path):
    return [await s.call_tool(tool, {"transcript_path": str(path)}) for tool in SUMMARY_TOOLS]


@pytest.mark.slow
def test_http_server_on_an_initialised_config_refuses_the_users_transcripts(tmp_path):
    config, transcript, env = _initialised_home(tmp_path)
    # the server as a team runs it: the default config location (no --config), a token
    with http_server(tmp_path, env={**env, "SJC_MCP_TOKEN": TOKEN}) as (_, url, _err):
        refused = anyio.run(lambda: _http_session(url, lambda s: _call_each(s, transcript)))
    for r in refused:
        assert r.is_error
        text = r.content[0].text
        assert "transcript_path reads files on the server's machine" in text
        assert "allowed_roots set in the server's config file" in text
        assert "Traceback" not in text
    # nothing was judged, so nothing logged
    log = Path(env["XDG_STATE_HOME"]) / "sjc" / "decisions.jsonl"
    assert not log.exists() or log.read_text() == ""
    # the file init wrote leaves allowed_roots to the defaults (commented out)
    assert any(line.startswith("# allowed_roots") for line in config.read_text().splitlines())


@pytest.mark.slow
def test_stdio_server_on_the_same_config_reads_them(tmp_path):
    """The user's own stdio server (as their host starts it) reads a transcript under the default roots, as the
    docs say: the same config, the same file."""
    _config, transcript, env = _initialised_home(tmp_path)
    params = StdioServerParameters(command=sjc_exe("sjc-mcp"), args=[], env=env)

    async def go():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await _call_each(s, transcript)

    judged, pruned = anyio.run(go)
    assert not judged.is_error, judged.content
    assert not pruned.is_error, pruned.content
    assert judged.structured_content["entries"]
    assert "pruned_summary" in pruned.structured_content
