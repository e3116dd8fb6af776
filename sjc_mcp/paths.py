"""Where sjc keeps its files by default, after the platform's conventions (``platformdirs``).

On Linux and the BSDs these are the XDG locations, honouring ``XDG_CONFIG_HOME`` and
``XDG_STATE_HOME``: ``~/.config/sjc/`` for the config file and the kill switch,
``~/.local/state/sjc/`` for the decision log and the hooks' per-session state. On macOS
``~/Library/Application Support/sjc/`` holds both. Each can be set in the config or the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "sjc"


def config_dir() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP, appauthor=False)


def state_dir() -> Path:
    from platformdirs import user_state_path

    return user_state_path(APP, appauthor=False)


def config_file() -> Path:
    return config_dir() / "config.toml"


def kill_switch() -> Path:
    return config_dir() / "disabled"


def decision_log() -> Path:
    return state_dir() / "decisions.jsonl"


def codex_home() -> Path:
    """Codex's home folder: ``$CODEX_HOME`` when set (Codex reads its config, hooks and sessions there),
    else ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser()
