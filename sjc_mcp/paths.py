"""Where sjc keeps its files by default, after the platform's conventions (``platformdirs``).

On Linux and the BSDs these are the XDG locations, honouring ``XDG_CONFIG_HOME`` and
``XDG_STATE_HOME``: ``~/.config/sjc/`` for the config file and the kill switch,
``~/.local/state/sjc/`` for the decision log and the hooks' per-session state. On macOS
``~/Library/Application Support/sjc/`` holds both. Each can be set in the config or the environment.

There, sjc reads the two variables itself, as platformdirs does (the variable when it is an absolute path,
else the folder under an absolute ``$HOME``; the tests compare the two): importing platformdirs costs about
11 ms (it imports tempfile, shutil and random), a fifth of a hook event, and every hook event and command
needs these paths. Anything else (another platform, no absolute ``$HOME``) asks platformdirs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "sjc"
_XDG = sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))


def _xdg(var: str, under_home: str) -> Path | None:
    if not _XDG:
        return None
    value = os.environ.get(var, "")
    if os.path.isabs(value):
        return Path(value, APP)
    home = os.environ.get("HOME", "")
    return Path(home, under_home, APP) if os.path.isabs(home) else None


def config_dir() -> Path:
    found = _xdg("XDG_CONFIG_HOME", ".config")
    if found is not None:
        return found
    from platformdirs import user_config_path

    return user_config_path(APP, appauthor=False)


def state_dir() -> Path:
    found = _xdg("XDG_STATE_HOME", ".local/state")
    if found is not None:
        return found
    from platformdirs import user_state_path

    return user_state_path(APP, appauthor=False)


def config_file() -> Path:
    return config_dir() / "config.toml"


def kill_switch() -> Path:
    return config_dir() / "disabled"


def decision_log() -> Path:
    return state_dir() / "decisions.jsonl"


def gemini_dir() -> Path:
    """Gemini CLI's folder: ``$GEMINI_CLI_HOME/.gemini`` when set (Gemini CLI keeps its settings, extensions
    and chat files there), else ``~/.gemini``."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or "~").expanduser() / ".gemini"


def codex_home() -> Path:
    """Codex's home folder: ``$CODEX_HOME`` when set (Codex reads its config, hooks and sessions there),
    else ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser()


def hermes_home() -> Path:
    """Hermes Agent's home folder: ``$HERMES_HOME`` when set, else ``~/.hermes``."""
    return Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
