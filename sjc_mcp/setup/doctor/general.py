"""``sjc doctor``'s lines for sjc itself: ``sjc`` on PATH, the config, the decision log, the kill switch, the
judge, the evidence index."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from sjc_mcp.setup.doctor.checks import FAIL, OK, WARN, Check, fix_command, listening, on_path, shown_url


def config_fix(config_path: str | None, error: str) -> str:
    """What to do about a config that does not load. Never a command that writes over a file: a missing
    file is written (``sjc config init`` refuses to replace one), a bad one is to be corrected, with a
    commented example offered beside it under a name nothing holds yet."""
    from sjc_mcp.config import default_path
    from sjc_mcp.setup.config_file import where

    variables = re.findall(r"\(with (SJC_[A-Z_]+)\)", error)
    if variables:
        return f"correct or unset {', '.join(sorted(set(variables)))}"
    path = where(config_path)
    sjc = fix_command("sjc")
    named = "" if path == default_path() else f" --config {shlex.quote(str(path))}"
    if not _taken(path):
        return f"{sjc} config init{named} (writes a commented config there)"
    example = path.with_name(f"{path.stem if path.suffix == '.toml' else path.name}.example.toml")
    if _taken(example):
        return f"correct {path}"
    return f"correct {path}; {sjc} config init --config {shlex.quote(str(example))} writes an example beside it"


def _taken(path: Path) -> bool:
    try:
        return path.exists() or path.is_symlink()
    except OSError:
        return True


def general(config_path: str | None) -> list[Check]:
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import SJCError

    out: list[Check] = [on_path("sjc", "the docs' commands, and the fixes here by its bare name, need it")]
    try:
        config = load_config(config_path)
    except SJCError as exc:
        return [*out, Check(FAIL, "config", str(exc), config_fix(config_path, str(exc)))]
    out.append(Check(OK, "config", f"valid ({config.path or 'defaults: no config file'})"))
    log = config.decision_log_path
    folder = next((p for p in [log.parent, *log.parent.parents] if p.exists()), None)
    writable = (log.exists() and os.access(log, os.W_OK) and log.is_file()) or (
        not log.exists() and folder is not None and os.access(folder, os.W_OK)
    )
    out.append(
        Check(
            OK if writable else FAIL,
            "log",
            f"decision log {log} {'writable' if writable else 'not writable'}",
            None if writable else f"make {log.parent} writable, or set decision_log in the config",
        )
    )
    off = config.disabled()
    out.append(
        Check(
            WARN,
            "kill switch",
            f"sjc is switched off: {off}",
            f"rm {config.kill_switch_path}" if "kill switch" in off else "unset SJC_DISABLE",
        )
        if off
        else Check(OK, "kill switch", f"off ({config.kill_switch_path} absent)")
    )
    try:
        from sjc_mcp.judges import make_judge

        judge = make_judge(config)
    except SJCError as exc:
        out.append(Check(FAIL, "judge", str(exc)))
        return out
    table = getattr(config, config.judge, None)
    url = getattr(table, "base_url", None)
    if url:
        up = listening(url)
        out.append(
            Check(
                OK if up else FAIL,
                "judge",
                f"{judge.name} at {shown_url(url)} {'reachable' if up else 'unreachable'}",
                None if up else f'start the server at {shown_url(url)}, or set judge = "lexical"',
            )
        )
    else:
        out.append(Check(OK, "judge", f"{judge.name} (offline, nothing to reach)"))
    out.append(_index())
    return out


def _index() -> Check:
    """Which build of the evidence index runs: compiled, or Python and numpy (the same results, slower)."""
    from sjc_mcp import evidence

    if evidence._bm25 is not None:
        return Check(OK, "index", "compiled (sjc_mcp._bm25)")
    return Check(
        WARN,
        "index",
        "Python and numpy: the compiled index was not built at install (same results, several times slower)",
        "install a C compiler and the Python headers (Debian: gcc python3-dev), then reinstall sjc-mcp",
    )
