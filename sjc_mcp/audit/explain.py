"""How a decision-log record and its entries read for a person: what kind of record it is, why an entry
went the way it did, its evidence, and text from the log made safe to show (``literal``). Shared by the
terminal view, the HTML page and the JSON report."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from sjc_mcp.models import DOUBTFUL


def literal(x: Any) -> str:
    """Text from the log as it may be shown: control characters (ANSI escapes, line breaks included) made
    visible, so nothing from the log can forge a line or restyle the terminal (``terminal.clean``)."""
    from sjc_mcp.terminal import clean

    return clean(x)


def kind(rec: dict[str, Any]) -> str:
    """What a record is: ``enforced`` (a decision that changed the summary, or would have had it been
    committed), ``shadow`` (judged, nothing changed: shadow mode, replays), ``judge`` (a judge-only run),
    ``tools`` (relevance pruning of tool results) or ``status`` (no judgment: disabled, error, nothing)."""
    if rec.get("op") == "tools":
        return "tools"
    if rec.get("status", "judged") != "judged":
        return "status"
    if rec.get("op") == "judge":
        return "judge"
    if rec.get("mode") == "shadow" or rec.get("op") == "replay":
        return "shadow"
    return "enforced"


def text_is_whole(e: dict[str, Any]) -> bool:
    """Whether the logged text is the entry's whole text (its hash matches), or cut by the log."""
    sha, text = e.get("text_sha"), e.get("text")
    if not sha or text is None:
        return True
    return hashlib.sha256(str(text).encode()).hexdigest()[: len(sha)] == sha


def reason(e: dict[str, Any], threshold: float | None, margin: float | None = None) -> str:
    """Why an entry went the way it did: its score against the cut (an entry is pruned when its score
    is below the threshold less the margin), and the judge's own ``reason`` when the log has one."""
    decision, score = e.get("decision"), e.get("score")
    if decision == "unjudged" or score is None:
        return str(e.get("reason") or "not judged (kept)")
    th = 0.5 if threshold is None else threshold
    cut = th - (margin or 0)
    if decision == "prune":
        why = f"score {score:.2f} < {cut:.2f}"
    elif doubtful(e):
        why = f"doubtful: score {score:.2f} < {cut:.2f}, kept (no grounds to delete it that could be checked)"
        rest = str(e.get("reason"))[len(DOUBTFUL) :].lstrip(": ")
        return f"{why}: {rest}" if rest else why
    elif e.get("near_threshold") or score < th:
        why = f"score {score:.2f} within the margin below the threshold {th:g}: kept, flagged"
    else:
        why = f"score {score:.2f} ≥ threshold {th:g}"
    if e.get("contradicted"):
        why += "; a source contradicts it"
    if e.get("reason"):
        why += f": {e['reason']}"
    return why


def doubtful(e: dict[str, Any]) -> bool:
    """Kept though scored below the cut, because the judge had no reason to delete it a person could
    check (``pipeline``: its reason starts ``doubtful, kept``): doubtful, not supported."""
    return e.get("decision") == "keep" and str(e.get("reason") or "").startswith(DOUBTFUL)


def evidence(e: dict[str, Any]) -> str:
    quote = e.get("quote")
    if not quote:
        return "no source found"
    return f"{quote} ({e['origin']})" if e.get("origin") else str(quote)


PROMPT_CHARS = 48  # what a label shows of a session's first prompt


def short_time(t: Any) -> str:
    """An ISO 8601 time to the minute (``2026-01-01 14:05``), shown literally."""
    s = literal(t or "")
    return s[:16].replace("T", " ") if len(s) >= 16 and s[10:11] == "T" else s


def session_label(b: dict[str, Any]) -> str | None:
    """A boundary's session as a person knows it: its folder (``~`` for the home folder), the start of its
    first prompt, when it started; shown literally. None when the log knows none of them."""
    parts = []
    project = b.get("project")
    if project:
        home = os.path.expanduser("~")
        if home not in ("", "/", "~") and (project == home or project.startswith(home + os.sep)):
            project = "~" + project[len(home) :]
        parts.append(literal(project))
    prompt = " ".join(str(b.get("first_prompt") or "").split())
    if prompt:
        cut = prompt if len(prompt) <= PROMPT_CHARS else prompt[: PROMPT_CHARS - 1] + "…"
        parts.append(f'"{literal(cut)}"')
    if b.get("started"):
        parts.append(f"started {short_time(b['started'])}")
    return " · ".join(parts) or None


def where(b: dict[str, Any]) -> str:
    """Which boundary a warning is about, in one line: the session's label (else its id) and the boundary."""
    n = "-" if b.get("boundary") is None else literal(b["boundary"])
    return f"{session_label(b) or literal(b.get('session'))}, boundary {n}"
