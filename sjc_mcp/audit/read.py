"""Reading the decision log back for ``sjc audit``: streaming and tolerant. A corrupt line, or a record of
a shape the audit cannot read (a count that is text, entries that are not a list), is reported and
skipped, never fatal; a lone surrogate escape is made printable."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

from sjc_mcp.audit.explain import literal
from sjc_mcp.errors import InputError
from sjc_mcp.log import chain as decision_log


def _parse_since(since: str | None) -> str | None:
    if not since:
        return None
    try:
        dt = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--since wants a date like 2026-11-30 or 2026-11-30T14:00, got {since!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_log(path: Path, session: str | None = None, since: str | None = None) -> tuple[list[dict], list[str]]:
    """Records (filtered), and one message per corrupt line."""
    problem = decision_log.regular_file_problem(path)
    if problem is not None:
        raise InputError(problem)
    records, corrupt = [], []
    cutoff = _parse_since(since)
    for n, rec, raw in decision_log.read(path):
        if rec is None:
            corrupt.append(f"line {n}: corrupt, not a JSON record; skipped ({literal(raw[:60])!r})")
            continue
        if "\\ud" in raw.lower():  # a lone surrogate escape (the standard reader takes it): unprintable, made "?"
            rec = _no_surrogates(rec)
        wrong = wrong_shape(rec)
        if wrong is not None:  # a hand-edited or damaged record: a count that is text, entries that are not a list
            corrupt.append(f"line {n}: corrupt, not a decision record ({literal(wrong)}); skipped")
            continue
        if session and rec.get("session") != session:
            continue
        if cutoff and str(rec.get("time", "")) < cutoff:
            continue
        rec["_line"] = n
        records.append(rec)
    return records, corrupt


# The shape the audit reads: every field it computes with or lists has the type sjc writes (numbers are
# numbers, entries a list of objects, errors a list of strings); any other field may hold anything.
class _Entry(msgspec.Struct):
    section: str | None = None
    text: str | None = None
    text_sha: str | None = None
    score: float | None = None
    decision: str | None = None
    near_threshold: bool = False
    contradicted: bool = False
    quote: str | None = None
    origin: str | None = None
    reason: str | None = None


class _Judge(msgspec.Struct):
    name: str | None = None
    model: str | None = None


class _Result(msgspec.Struct):
    tool: str | None = None
    note: str | None = None
    decision: str | None = None


class _Record(msgspec.Struct):
    judge: _Judge | None = None
    threshold: float = 0.5
    margin: float = 0.05
    entries: list[_Entry] = []
    results: list[_Result] = []
    errors: list[str] = []
    kept: float | None = 0
    pruned: float | None = 0
    unjudged: float | None = 0
    truncated: float | None = 0
    dropped: float | None = 0
    superseded: float | None = 0
    chars_before: float | None = 0
    chars_after: float | None = 0
    tokens_before: float | None = 0
    tokens_after: float | None = 0
    chars_after_enforced: float | None = None
    tokens_after_enforced: float | None = None
    duration_ms: float | None = 0
    tokens_estimated: bool = True


def _no_surrogates(x: Any) -> Any:
    if isinstance(x, str):
        return x.encode("utf-8", "replace").decode("utf-8")
    if isinstance(x, list):
        return [_no_surrogates(v) for v in x]
    if isinstance(x, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in x.items()}
    return x


def wrong_shape(rec: dict[str, Any]) -> str | None:
    """What is wrong with a log record's shape (a count that is text, entries that are not a list), or
    None when the audit can read it."""
    try:
        msgspec.convert(rec, _Record)
    except msgspec.ValidationError as exc:
        return str(exc)
    return None
