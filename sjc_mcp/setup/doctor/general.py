"""``sjc doctor``'s lines for sjc itself: the config, the decision log, the kill switch, the judge, the
evidence index."""

from __future__ import annotations

import os

from sjc_mcp.setup.doctor.checks import FAIL, OK, WARN, Check, listening, shown_url


def general(config_path: str | None) -> list[Check]:
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import SJCError

    out: list[Check] = []
    try:
        config = load_config(config_path)
    except SJCError as exc:
        return [
            Check(
                FAIL, "config", str(exc), "correct the file (`sjc config init --force` writes a fresh, commented one)"
            )
        ]
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
