"""What every ``sjc doctor`` check shares: the ``Check`` line, the fix commands naming this install's own
commands, a host's files read without waiting on a FIFO, URLs shown without their secrets."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"


@dataclass
class Check:
    status: str
    scope: str
    what: str
    fix: str | None = None

    def line(self) -> str:
        from sjc_mcp.terminal import clean

        tail = f" — fix: {clean(self.fix)}" if self.fix else ""
        return f"{self.status:<4}  {self.scope:<11}  {clean(self.what)}{tail}"


def installed(name: str) -> Path | None:
    """``name`` (``sjc``, ``sjc-mcp``) as installed with this sjc: beside the ``sjc`` running (the folder
    it was called from, e.g. ``~/.local/bin``, then the one its link points into), else beside Python."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    folders = [here.absolute().parent, here.resolve().parent] if here else []
    for folder in [*folders, Path(sys.executable).parent]:
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return (folder / name).absolute()
    return None


def fix_command(name: str) -> str:
    """How a fix line runs ``name``: its bare name when the one on PATH is this install's (or none can be
    found beside it), else the absolute path of this install's."""
    mine = installed(name)
    found = shutil.which(name)
    if mine is None or (found is not None and Path(found).resolve() == mine.resolve()):
        return name
    return shlex.quote(str(mine))


INSTALL_HINT = "install sjc as a tool first (uv tool install, or pipx install; docs/install.md)"


def on_path_fix(name: str, host: str | None = "Claude Code") -> str:
    """The fix for ``name`` missing from PATH (the PATH ``host`` starts with; None: the user's shell): the
    folder this install keeps it in, else installing sjc."""
    mine = installed(name)
    if mine is None:
        return f"{INSTALL_HINT}, so that {name} is on PATH"
    folder = shlex.quote(str(mine.parent))
    where = f"the PATH {host} starts with" if host else "PATH"
    return f'put {folder} on {where} (export PATH={folder}:"$PATH" in your shell profile)'


def program_of(command: str) -> str:
    """The program a hook entry's command runs: its first word, quotes taken off."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0] if words else ""


def hook_programs(scope: str, hooks: list[Any], fix: str) -> list[Check]:
    """A failure for each program sjc's hook entries run that cannot run: a path (what ``sjc install``
    writes, so a hook runs under any PATH) that is not there, or a bare name not on PATH."""
    from sjc_mcp.setup.hook_entries import is_ours

    out = []
    for prog in sorted({program_of(str(h.get("command", ""))) for h in hooks if is_ours(h)}):
        if os.sep in prog:
            path = Path(os.path.expanduser(prog))
            if path.is_file() and os.access(path, os.X_OK):
                continue
            why = f"{prog} is not there (or not executable)"
        elif prog and shutil.which(prog) is None:
            why = f"{prog} is not on PATH"
        else:
            continue
        out.append(Check(FAIL, scope, f"the hooks run {why}: they do nothing", fix))
    return out


def on_path(name: str, why: str) -> Check:
    """Whether ``name`` is on PATH, and whether it is this install's (another earlier on PATH is an old
    install, or someone else's: what a user typing ``name`` runs is not what was checked)."""
    mine, found = installed(name), shutil.which(name)
    if found is None:
        return Check(WARN, "commands", f"{name} is not on PATH: {why}", on_path_fix(name, None))
    if mine is not None and Path(found).resolve() != mine.resolve():
        return Check(
            WARN,
            "commands",
            f"the {name} on PATH ({found}) is another install than this one ({mine})",
            f"put {shlex.quote(str(mine.parent))} first on PATH, or remove the other install",
        )
    return Check(OK, "commands", f"{name} on PATH ({found})")


_SECRET_PARAM = re.compile(r"((?:^|&)[^=&]*(?:key|token|secret|passw|pwd|sig|auth|cred)[^=&]*=)[^&]+", re.I)


def shown_url(url: str) -> str:
    """``url`` as it may be printed: no password, no secret in its query, nothing else ``redact`` finds."""
    from urllib.parse import urlsplit, urlunsplit

    from sjc_mcp.redact import redact

    try:
        u = urlsplit(url)
        if u.password is not None:
            u = u._replace(netloc=f"{u.username}:[REDACTED:url-password]@{u.netloc.rsplit('@', 1)[1]}")
        if u.query:  # ?api_key=…, ?token=…, ?sig=…
            u = u._replace(query=_SECRET_PARAM.sub(r"\1[REDACTED:url-param]", u.query))
        url = urlunsplit(u)
    except ValueError:
        pass
    return redact(url)[0]


def host_file(path: Path, problems: list[Check], scope: str) -> str | None:
    """The text of a host's file (None when absent); one that cannot be read (a FIFO, a folder, not UTF-8)
    is a problem noted in ``problems``, never waited on."""
    from sjc_mcp.errors import InputError
    from sjc_mcp.setup.settings_file import read_text

    try:
        return read_text(path)
    except InputError as exc:
        problems.append(Check(FAIL, scope, str(exc)))
        return None


def host_json(path: Path, problems: list[Check], scope: str) -> dict[str, Any]:
    """The JSON object in a host's file; {} when it is absent, unreadable (noted) or not an object."""
    text = host_file(path, problems, scope)
    try:
        data = json.loads(text.removeprefix("\ufeff")) if text else {}
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def read_toml(path: Path, problems: list[Check], scope: str) -> dict[str, Any]:
    text = host_file(path, problems, scope)
    if not text:
        return {}
    from sjc_mcp.setup.codex_trust import _parse_toml

    try:
        return _parse_toml(text, path)
    except Exception:
        return {}


def listening(url: str) -> bool:
    u = urlparse(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        socket.create_connection((u.hostname or "127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def hooks_in(settings: dict[str, Any]) -> list[Any]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [
        h
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict)
        for h in (g.get("hooks") or [])
        if isinstance(g.get("hooks"), list)
    ]
