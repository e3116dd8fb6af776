"""``sjc config path | show | init``: where the config lives, what is in force, and a commented start."""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path

from sjc_mcp.errors import InputError


def example_text() -> str:
    """``config.example.toml`` as shipped in the package: every key, its default and what it does."""
    return files("sjc_mcp.examples").joinpath("config.example.toml").read_text(encoding="utf-8")


def where(config_path: str | None) -> Path:
    from sjc_mcp.config import default_path

    chosen = config_path or os.environ.get("SJC_CONFIG")
    return Path(chosen).expanduser() if chosen else default_path()


def path(config_path: str | None) -> str:
    from sjc_mcp import paths
    from sjc_mcp.config import load_config

    p = where(config_path)
    config = load_config(config_path)
    off = " (present: sjc is off)" if config.kill_switch_path.exists() else ""
    lines = [
        f"config file    {p}{'' if p.is_file() else ' (absent: defaults in force)'}",
        f"decision log   {config.decision_log_path}",
        f"kill switch    {config.kill_switch_path}{off}",
        f"state folder   {paths.state_dir()}",
    ]
    return "\n".join(lines)


def show(config_path: str | None) -> str:
    from sjc_mcp.config import load_config

    config = load_config(config_path)
    data = config.settings()
    data["kill_switch"] = str(config.kill_switch_path)
    data["decision_log"] = str(config.decision_log_path)
    return json.dumps({"file": config.path, "disabled": config.disabled(), "config": data}, indent=2)


def init(config_path: str | None, force: bool = False) -> str:
    """Write the example where the config belongs; never over an existing file unless ``force``."""
    p = where(config_path)
    if p.exists() and not force:
        raise InputError(f"{p} exists already; edit it, or pass --force to replace it with the example")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.sjc-tmp")
    tmp.write_text(example_text(), encoding="utf-8")
    os.replace(tmp, p)
    return f"wrote {p}: every key with its default, commented; edit what you need"
