"""``sjc audit``: read the decision log back. What was pruned at each boundary and why, what it saved,
what went wrong (``audit.view`` shows it in a terminal, ``audit.html`` on a page; ``log.verify`` checks
that the log itself is whole and unedited, ``--verify``).

Totals mean one thing: per boundary (session and boundary id), the latest enforce-mode decision
counts. A shadow-mode run or replay, or a ``judge`` that changed nothing, is shown as what it is
(what pruning would have done) and never added to what was removed; earlier decisions of the same
boundary are listed as its history.

Each boundary is named as a person knows its session, from what its records say (``project``,
``first_prompt``, ``started``: ``log.records.session_fields``), and carries every warning its records
logged (an incomplete span, the guard), which the report's ``warnings`` repeat naming the session.
``sjc replay`` counts its own records with ``summarise``, so replay and audit count alike.

Reading (``audit.read``) is streaming and tolerant: a corrupt line is reported and skipped, never fatal.
Text from the log is shown literally (``audit.explain.literal``): no markup, control characters made visible.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sjc_mcp.audit.explain import doubtful, evidence, kind, literal, reason, text_is_whole, where
from sjc_mcp.audit.read import read_log, wrong_shape
from sjc_mcp.log import chain as decision_log

__all__ = [
    "WIDTH",
    "boundary_keys",
    "doubtful",
    "evidence",
    "expected_models",
    "kind",
    "literal",
    "read_log",
    "reason",
    "summarise",
    "text_is_whole",
    "wrong_shape",
]

THRESHOLD_CLUSTER_SHARE = 0.15  # warn when more than this share of scores sit within the margin of the threshold
WIDTH = 100  # the terminal audit fits this many columns
SUM_KEYS = ("kept", "pruned", "unjudged", "chars_before", "chars_after", "tokens_before", "tokens_after")
JUDGED = ("enforced", "shadow", "judge")
SESSION_KEYS = ("project", "first_prompt", "started")  # what the records say of the session (log.records)


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


def boundary_keys(records: list[dict]) -> list[tuple[str, str]]:
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


def _tools(tools: list[dict]) -> list[dict[str, Any]]:
    return [
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


@dataclass
class _Tally:
    """What the boundaries add up to, filled one boundary at a time."""

    totals: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    shadow: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    scores: list[float] = field(default_factory=list)
    margin_hits: int = 0
    threshold: float | None = None
    margin: float | None = None
    models: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    judge_errors: int = 0
    hook_failures: int = 0

    def add_shown(self, shown: dict[str, Any], counted: bool) -> None:
        """The record that stands for a boundary: enforced (counted), else what pruning would have done."""
        self.totals["judged"] += 1
        self.threshold, self.margin = shown.get("threshold", 0.5), shown.get("margin", 0.05)
        for e in shown.get("entries", []):
            if isinstance(e.get("score"), (int, float)):
                self.scores.append(float(e["score"]))
                if abs(e["score"] - self.threshold) <= self.margin:
                    self.margin_hits += 1
        if counted:
            self.totals["enforced"] += 1
            for k in SUM_KEYS:
                self.totals[k] += shown.get(k, 0) or 0
            return
        self.shadow["boundaries"] += 1
        self.shadow["would_prune"] += shown.get("pruned", 0) or 0
        self.shadow["chars_before"] += shown.get("chars_before", 0) or 0
        after = shown.get("chars_after_enforced")
        self.shadow["chars_after_if_enforced"] += (shown.get("chars_before", 0) or 0) if after is None else after

    def add_record(self, r: dict[str, Any], k: str) -> None:
        if r.get("op") == "hook" and r.get("status") in ("error", "timeout"):
            self.hook_failures += 1
        if k in JUDGED:
            judge = r.get("judge") or {}
            self.models[str(judge.get("name"))].add(str(judge.get("model")))
            self.totals["duration_ms"] += r.get("duration_ms", 0) or 0
            if r.get("errors"):
                self.judge_errors += 1

    def warnings(self, config: Any, corrupt: list[str]) -> list[str]:
        out: list[str] = []
        scores, hits = self.scores, self.margin_hits
        if scores and self.margin is not None and hits / len(scores) > THRESHOLD_CLUSTER_SHARE:
            out.append(
                f"{hits} of {len(scores)} scores ({hits / len(scores):.0%}) lie within "
                f"{self.margin} of the threshold {self.threshold}: move the threshold off the cluster"
            )
        expected = expected_models(config)
        for name, seen in sorted(self.models.items()):
            want = expected.get(name)
            other = sorted(m for m in seen if want and m != want)
            if other:
                out.append(
                    f"judge {name!r} ran as model {', '.join(other)}, but its weights or threshold were "
                    f"calibrated for {want}: recalibrate (sjc calibrate) or check the threshold"
                )
        if self.judge_errors:
            out.append(f"{self.judge_errors} judged summaries had judge errors (entries kept unjudged): see 'errors'")
        if self.hook_failures:
            out.append(f"{self.hook_failures} hook events produced no judgment (error or time budget): see 'errors'")
        if corrupt:
            out.append(f"{len(corrupt)} corrupt log lines were skipped")
        return out

    def report_totals(self, boundaries: int) -> dict[str, Any]:
        t = self.totals
        out = {k: (round(v, 2) if k == "duration_ms" else int(v)) for k, v in t.items()}
        for k in ("records", "judged", "enforced", "not_counted", *SUM_KEYS):
            out.setdefault(k, 0)
        shadow_keys = ("boundaries", "would_prune", "chars_before", "chars_after_if_enforced")
        return {
            **out,
            "boundaries": boundaries,
            "chars_saved": int(t["chars_before"] - t["chars_after"]),
            "tokens_estimated": True,
            "shadow": {k: int(self.shadow.get(k, 0)) for k in shadow_keys},
        }


def _warnings(recs: list[dict]) -> list[str]:
    """Every warning the boundary's records carry (an incomplete span, the guard, a span without the user's
    words, an unstructured summary), each once, in the order logged."""
    out: list[str] = []
    for r in recs:
        logged = r.get("warnings")
        for w in logged if isinstance(logged, list) else []:
            if isinstance(w, str) and w not in out:
                out.append(w)
    return out


def _boundary(session: str, bid: str, recs: list[dict], tally: _Tally) -> dict[str, Any]:
    """One boundary's report from its records; what it adds to the totals goes to ``tally``."""
    b: dict[str, Any] = {
        "session": session,
        "boundary": next((r["boundary"] for r in recs if r.get("boundary") is not None), None),
        "boundary_id": bid,
        "records": len(recs),
        "events": [r.get("event") or r.get("op") for r in recs],
    }
    for k in SESSION_KEYS:  # the session as a person knows it, from the newest record that says
        value = next((r[k] for r in reversed(recs) if isinstance(r.get(k), str) and r[k]), None)
        if value is not None:
            b[k] = value
    tally.totals["records"] += len(recs)
    kinds = {id(r): kind(r) for r in recs}  # each record's kind, worked out once
    judged = [r for r in recs if kinds[id(r)] in JUDGED]
    enforced = [r for r in judged if kinds[id(r)] == "enforced"]
    shown = enforced[-1] if enforced else (judged[-1] if judged else None)
    for r in recs:
        tally.add_record(r, kinds[id(r)])
    tools = [r for r in recs if kinds[id(r)] == "tools"]
    if tools:
        b["tools"] = _tools(tools)
        tally.totals["tool_chars_before"] += tools[-1].get("chars_before", 0) or 0
        tally.totals["tool_chars_after"] += tools[-1].get("chars_after", 0) or 0
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
    b["warnings"] = _warnings(recs)
    if shown is not None:
        b.update(_shown(shown, counted=bool(enforced)))
        tally.add_shown(shown, counted=bool(enforced))
        tally.totals["not_counted"] += len(judged) - 1  # earlier runs on the same boundary
    return b


def summarise(records: list[dict], corrupt: list[str], config: Any = None) -> dict[str, Any]:
    """The report: per boundary (session and boundary id) what its records say, and the totals."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for key, rec in zip(boundary_keys(records), records, strict=True):
        groups.setdefault(key, []).append(rec)
    tally = _Tally()
    boundaries = [_boundary(session, bid, recs, tally) for (session, bid), recs in groups.items()]
    at_boundaries = [f"{where(b)}: {w}" for b in boundaries for w in b["warnings"]]
    totals = tally.report_totals(len(boundaries))
    totals["boundary_warnings"] = len(at_boundaries)
    return {
        "boundaries": boundaries,
        "totals": totals,
        "warnings": tally.warnings(config, corrupt) + at_boundaries,  # the log's, then each boundary's
        "corrupt": corrupt,
        "scores": tally.scores,
        "threshold": tally.threshold,
        "margin": tally.margin,
    }
