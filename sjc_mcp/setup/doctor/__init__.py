"""``sjc doctor``: is sjc set up and working, host by host? One line per check, each problem with the
command that fixes it; exit 1 if anything is broken.

Checks, for each host found (Claude Code: ``~/.claude`` or ``claude`` on PATH; Codex: ``$CODEX_HOME``
or ``codex`` on PATH; Gemini CLI: ``~/.gemini`` or ``gemini`` on PATH, its lines in ``setup/gemini.py``):
hooks installed (by ``sjc install`` or, for Claude Code, the plugin) and, for Codex, trusted; the MCP server
registered and answering ``initialize``; the proxy, if the host is pointed at one, listening. Then: the
config valid, the decision log writable, the kill switch, the judge reachable.

Every check ends in time: a settings file that is a FIFO is reported, not waited on; an MCP server gets
``timeout`` seconds in all to answer (one that drips its answer, or whose child keeps its stdout open,
is cut off there and its process group ended); a URL is shown without its password; anything a file or
a server says is printed with its control characters made visible (``terminal.clean``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sjc_mcp import paths
from sjc_mcp.setup.doctor.checks import (
    FAIL,
    INFO,
    OK,
    WARN,
    Check,
    fix_command,
    hooks_in,
    host_file,
    host_json,
    listening,
    shown_url,
)
from sjc_mcp.setup.doctor.claude_code import claude_code
from sjc_mcp.setup.doctor.codex import codex
from sjc_mcp.setup.doctor.general import _index, general
from sjc_mcp.setup.doctor.mcp import mcp_answers, mcp_http_answers, registered

# the names setup/gemini.py and setup/hermes.py import
_hooks_in, _listening, _registered = hooks_in, listening, registered

__all__ = [
    "FAIL",
    "INFO",
    "OK",
    "WARN",
    "Check",
    "_hooks_in",
    "_index",
    "_listening",
    "_registered",
    "fix_command",
    "hooks_in",
    "host_file",
    "host_json",
    "listening",
    "mcp_answers",
    "mcp_http_answers",
    "registered",
    "run",
    "shown_url",
]


def run(config_path: str | None = None, env: dict[str, str] | None = None) -> tuple[list[Check], int]:

    env = dict(os.environ) if env is None else env
    home = Path.home()
    checks: list[Check] = []
    found = False

    def is_dir(p: Path) -> bool:  # a folder on the way without search permission is a problem, not a crash
        try:
            return p.is_dir()
        except OSError as exc:
            checks.append(Check(FAIL, "home", f"{p} cannot be checked: {exc.strerror or exc}"))
            return False

    if is_dir(home / ".claude") or shutil.which("claude"):
        found = True
        checks += claude_code(home, env)
    if is_dir(paths.codex_home()) or shutil.which("codex"):
        found = True
        checks += codex()
    if is_dir(paths.gemini_dir()) or shutil.which("gemini"):
        from sjc_mcp.setup import gemini

        found = True
        checks += gemini.doctor_checks(env)
    if is_dir(paths.hermes_home()) or shutil.which("hermes"):
        from sjc_mcp.setup import hermes

        found = True
        checks += hermes.doctor_checks()
    if not found:
        checks.append(
            Check(
                INFO,
                "hosts",
                "neither Claude Code (~/.claude, claude), Codex ($CODEX_HOME, codex), Gemini CLI (~/.gemini, "
                "gemini) nor Hermes ($HERMES_HOME, hermes) found",
            )
        )
    checks += general(config_path)
    return checks, 1 if any(c.status == FAIL for c in checks) else 0
