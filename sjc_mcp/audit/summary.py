"""``sjc audit``: read the decision log back. What was pruned at each boundary and why, what it saved,
what went wrong (``audit_view`` shows it in a terminal; ``log_verify`` checks that the log itself is whole
and unedited, ``--verify``).

Totals mean one thing: per boundary (session and boundary id), the latest enforce-mode decision
counts. A shadow-mode run or replay, or a ``judge`` that changed nothing, is shown as what it is
(what pruning would have done) and never added to what was removed; earlier decisions of the same
boundary are listed as its history.

Reading is streaming and tolerant: a corrupt line is reported and skipped, never fatal. Text from
the log is shown literally: no markup, control characters made visible.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

from sjc_mcp.errors import InputError
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import DOUBTFUL

THRESHOLD_CLUSTER_SHARE = 0.15  # warn when more than this share of scores sit within the margin of the threshold
WIDTH = 100  # the terminal audit fits this many columns
SUM_KEYS = ("kept", "pruned", "unjudged", "chars_before", "chars_after", "tokens_before", "tokens_after")


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


def expected_models(config: Any) -> dict[str, str]:
    """The model id each judge's weights or threshold were calibrated for."""
    out: dict[str, str] = {}
    try:
        from sjc_mcp.judges.lexical import LexicalJudge

        weights_model = None
        if config is not None and config.lexical.weights:
            weights_model = json.loads(Path(config.lexical.weights).expanduser().read_text()).get("model")
        out["lexical"] = weights_model or LexicalJudge.model
    except (OSError, ValueError):
        pass
    if config is not None and getattr(config, "calibrated_model", None):
        out[config.judge] = config.calibrated_model
    return out


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


def _boundary_keys(records: list[dict]) -> list[tuple[str, str]]:
    """(session, boundary id) per record. A record without a caller-given id (tool results, a status)
    joins the boundary its session and index name, when another record gives that one an id."""
    alias: dict[tuple[str, Any], str] = {}
    for rec in records:
        bid = rec.get("boundary_id")
        if bid and not str(bid).startswith(decision_log.DERIVED_PREFIX) and rec.get("boundary") is not None:
            alias.setdefault((str(rec.get("session")), rec["boundary"]), str(bid))
    keys = []
    for rec in records:
        session = str(rec.get("session") or rec.get("source") or "-")
        bid = rec.get("boundary_id")
        if bid is None or str(bid).startswith(decision_log.DERIVED_PREFIX):
            bid = alias.get((session, rec.get("boundary")), bid)
        if bid is None:
            bid = f"#{rec['boundary']}" if rec.get("boundary") is not None else "-"
        keys.append((session, str(bid)))
    return keys


def _shown(rec: dict[str, Any], counted: bool) -> dict[str, Any]:
    judge = rec.get("judge") or {}
    threshold = rec.get("threshold", 0.5)
    entries = rec.get("entries", [])
    return {
        "kind": "enforced" if counted else kind(rec),
        "op": rec.get("op"),
        "time": rec.get("time"),
        "host": rec.get("host"),
        "judge": judge,
        "mode": rec.get("mode"),
        "threshold": threshold,
        "margin": rec.get("margin", 0.05),
        **{k: rec.get(k, 0) or 0 for k in SUM_KEYS},
        "tokens_estimated": rec.get("tokens_estimated", True),
        "duration_ms": rec.get("duration_ms", 0) or 0,
        "chars_after_enforced": rec.get("chars_after_enforced"),
        "tokens_after_enforced": rec.get("tokens_after_enforced"),
        "errors": rec.get("errors", []),
        "entries": entries,
        "pruned_entries": [
            {
                "section": e.get("section"),
                "entry": e.get("text"),
                "text_whole": text_is_whole(e),
                "score": e.get("score"),
                "reason": reason(e, threshold, rec.get("margin", 0.05)),
                "quote": e.get("quote") or "no source found",
                "origin": e.get("origin"),
            }
            for e in entries
            if e.get("decision") == "prune"
        ],
        "line": rec.get("_line"),
    }


def summarise(records: list[dict], corrupt: list[str], config: Any = None) -> dict[str, Any]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for key, rec in zip(_boundary_keys(records), records, strict=True):
        groups.setdefault(key, []).append(rec)
    boundaries: list[dict[str, Any]] = []
    totals: dict[str, float] = defaultdict(float)
    shadow: dict[str, float] = defaultdict(float)
    scores: list[float] = []
    margin_hits = 0
    threshold = margin = None
    models: dict[str, set[str]] = defaultdict(set)
    judge_errors = hook_failures = 0
    for (session, bid), recs in groups.items():
        b: dict[str, Any] = {
            "session": session,
            "boundary": next((r["boundary"] for r in recs if r.get("boundary") is not None), None),
            "boundary_id": bid,
            "records": len(recs),
            "events": [r.get("event") or r.get("op") for r in recs],
        }
        totals["records"] += len(recs)
        kinds = {id(r): kind(r) for r in recs}  # each record's kind, worked out once
        judged = [r for r in recs if kinds[id(r)] in ("enforced", "shadow", "judge")]
        enforced = [r for r in judged if kinds[id(r)] == "enforced"]
        shown = enforced[-1] if enforced else (judged[-1] if judged else None)
        for r in recs:
            k = kinds[id(r)]
            if r.get("op") == "hook" and r.get("status") in ("error", "timeout"):
                hook_failures += 1
            if k in ("enforced", "shadow", "judge"):
                judge = r.get("judge") or {}
                models[str(judge.get("name"))].add(str(judge.get("model")))
                totals["duration_ms"] += r.get("duration_ms", 0) or 0
                if r.get("errors"):
                    judge_errors += 1
        tools = [r for r in recs if kinds[id(r)] == "tools"]
        if tools:
            b["tools"] = [
                {
                    "status": t.get("status", "judged"),
                    "kept": t.get("kept", 0),
                    "truncated": t.get("truncated", 0),
                    "dropped": t.get("dropped", 0),
                    "superseded": t.get("superseded", 0),
                    "superseded_by": [
                        f"{r.get('tool') or 'tool'} result {r.get('id')}: {r.get('note')}"
                        for r in t.get("results") or []
                        if isinstance(r, dict) and r.get("decision") == "supersede"
                    ][:50],
                    "chars_before": t.get("chars_before", 0),
                    "chars_after": t.get("chars_after", 0),
                    "errors": t.get("errors", []),
                    "judge": t.get("judge"),
                    "time": t.get("time"),
                }
                for t in tools
            ]
            totals["tool_chars_before"] += tools[-1].get("chars_before", 0) or 0
            totals["tool_chars_after"] += tools[-1].get("chars_after", 0) or 0
        statuses = [r for r in recs if kinds[id(r)] == "status"]
        if statuses:
            b["statuses"] = [str(r.get("status")) for r in statuses]
            b["status_errors"] = [err for r in statuses for err in r.get("errors", [])]
            if shown is None:
                b["errors"] = b["status_errors"]
                b["note"] = next((r.get("note") for r in reversed(statuses) if r.get("note")), None)
        b["history"] = [
            {
                "time": r.get("time"),
                "op": r.get("op"),
                "mode": r.get("mode"),
                "kind": kinds[id(r)],
                "status": r.get("status", "judged"),
                "pruned": r.get("pruned", 0),
                "counted": r is shown and bool(enforced),
                "line": r.get("_line"),
            }
            for r in recs
        ]
        if shown is not None:
            b.update(_shown(shown, counted=bool(enforced)))
            totals["judged"] += 1
            threshold, margin = shown.get("threshold", 0.5), shown.get("margin", 0.05)
            for e in shown.get("entries", []):
                if isinstance(e.get("score"), (int, float)):
                    scores.append(float(e["score"]))
                    if abs(e["score"] - threshold) <= margin:
                        margin_hits += 1
            if enforced:
                totals["enforced"] += 1
                for k in SUM_KEYS:
                    totals[k] += shown.get(k, 0) or 0
            else:
                shadow["boundaries"] += 1
                shadow["would_prune"] += shown.get("pruned", 0) or 0
                shadow["chars_before"] += shown.get("chars_before", 0) or 0
                after = shown.get("chars_after_enforced")
                shadow["chars_after_if_enforced"] += (shown.get("chars_before", 0) or 0) if after is None else after
            totals["not_counted"] += len(judged) - 1  # earlier runs on the same boundary
        boundaries.append(b)
    warnings: list[str] = []
    if scores and margin is not None and margin_hits / len(scores) > THRESHOLD_CLUSTER_SHARE:
        warnings.append(
            f"{margin_hits} of {len(scores)} scores ({margin_hits / len(scores):.0%}) lie within "
            f"{margin} of the threshold {threshold}: move the threshold off the cluster"
        )
    expected = expected_models(config)
    for name, seen in sorted(models.items()):
        want = expected.get(name)
        other = sorted(m for m in seen if want and m != want)
        if other:
            warnings.append(
                f"judge {name!r} ran as model {', '.join(other)}, but its weights or threshold were "
                f"calibrated for {want}: recalibrate (sjc calibrate) or check the threshold"
            )
    if judge_errors:
        warnings.append(f"{judge_errors} judged summaries had judge errors (entries kept unjudged): see 'errors'")
    if hook_failures:
        warnings.append(f"{hook_failures} hook events produced no judgment (error or time budget): see 'errors'")
    if corrupt:
        warnings.append(f"{len(corrupt)} corrupt log lines were skipped")
    out_totals = {k: (round(v, 2) if k == "duration_ms" else int(v)) for k, v in totals.items()}
    for k in ("records", "judged", "enforced", "not_counted", *SUM_KEYS):
        out_totals.setdefault(k, 0)
    return {
        "boundaries": boundaries,
        "totals": {
            **out_totals,
            "boundaries": len(boundaries),
            "chars_saved": int(totals["chars_before"] - totals["chars_after"]),
            "tokens_estimated": True,
            "shadow": {
                k: int(shadow.get(k, 0))
                for k in ("boundaries", "would_prune", "chars_before", "chars_after_if_enforced")
            },
        },
        "warnings": warnings,
        "corrupt": corrupt,
        "scores": scores,
        "threshold": threshold,
        "margin": margin,
    }


# terminal -------------------------------------------------------------------------------------------


def literal(x: Any) -> str:
    """Text from the log as it may be shown: control characters (ANSI escapes, line breaks included) made
    visible, so nothing from the log can forge a line or restyle the terminal (``terminal.clean``)."""
    from sjc_mcp.terminal import clean

    return clean(x)
