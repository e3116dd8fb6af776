"""What a judgment writes to the decision log: one record per boundary, and one for a boundary with no
judgment (switched off, failed, timed out, nothing to judge). Entry texts, quotes and reasons are
redacted and cut; the full texts stay out of the log. The log file itself (append-only, hash-chained) is
``sjc_mcp.log.chain``.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import Boundary, JudgeResult, PruneResult
from sjc_mcp.redact import redacted, redacted_each
from sjc_mcp.text import estimate_tokens

FIRST_PROMPT_CHARS = 200  # what the log keeps of a session's first prompt


def session_fields(boundary: Boundary) -> dict[str, str]:
    """The session as a person knows it, for a record of one of its compactions: its working folder
    (``project``), the first thing the user asked (``first_prompt``, redacted and cut as entry texts are;
    taken from the span when the span is where the session starts and the reader gave none) and when it
    started (``started``). Only what is known."""
    prompt = boundary.first_prompt
    if prompt is None and boundary.previous_summary is None and not boundary.incomplete:
        prompt = next((it.content.strip() for it in boundary.span if it.role == "user" and it.content.strip()), None)
    fields = {
        "project": boundary.project,
        "first_prompt": redacted(prompt[:20_000])[:FIRST_PROMPT_CHARS] if prompt else None,
        "started": boundary.started,
    }
    return {k: v for k, v in fields.items() if v}


def judged(result: JudgeResult, summary: str, after: str, meta: dict[str, Any], config: Config) -> dict:
    """The record of a judged boundary: each entry's section, a hash of its text and the first 200
    characters of it, its score, decision, quote, origin and reason (redacted); the counts, sizes, judge,
    config hash, status, and what went wrong."""
    # every entry's text, quote and reason, redacted together (one trigger-word test for all of them)
    clean = iter(redacted_each([t for e in result.entries for t in (e.text, e.quote or "", e.reason or "")]))
    entries = [
        {
            "id": e.id,
            "section": e.section,
            "text_sha": hashlib.sha256(e.text.encode()).hexdigest()[:16],
            "text": next(clean)[:200],
            "score": e.score,
            "decision": e.decision,
            "near_threshold": e.near_threshold,
            "contradicted": e.contradicted,
            "quote": next(clean)[:200] or None,
            "origin": e.origin,
            "reason": next(clean)[:300] or None,
        }
        for e in result.entries
    ]
    return {
        "v": 1,
        **{k: v for k, v in meta.items() if v is not None},
        "host": result.host,
        "judge": {"name": result.judge.name, "model": result.judge.model},
        "config_hash": config.digest(),
        "threshold": result.threshold,
        "margin": result.margin,
        "mode": result.mode,
        "status": (
            "disabled"
            if result.disabled
            else "unstructured"
            if result.unstructured
            else ("error" if result.errors and not entries else "judged")
        ),
        "entries": entries,
        "kept": sum(e.decision != "prune" for e in result.entries),
        "pruned": sum(e.decision == "prune" for e in result.entries),
        "unjudged": sum(e.decision == "unjudged" for e in result.entries),
        "chars_before": len(summary),
        "chars_after": len(after),
        "tokens_before": estimate_tokens(summary),
        "tokens_after": estimate_tokens(after),
        "tokens_estimated": True,
        "duration_ms": round(result.duration_ms, 2),
        "redactions": result.redactions,
        "errors": result.errors,
        **({"warnings": result.warnings} if result.warnings else {}),
        **({"note": result.warnings[0].removeprefix("unstructured: ")} if result.unstructured else {}),
        **({"incomplete_span": True} if result.incomplete_span else {}),
        **({"guard": {"max_prune_share": config.max_prune_share, "kept_whole": True}} if result.guarded else {}),
    }


def write(config: Config, record: dict[str, Any], result: JudgeResult) -> None:
    """Append ``record``; a log that cannot be written is an error of ``result`` (and a line on stderr),
    not an exception."""
    try:
        decision_log.append(config.decision_log_path, record)
    except OSError as exc:
        msg = f"could not write the decision log {config.decision_log_path}: {exc.strerror or exc}"
        result.errors.append(msg)
        print(f"sjc: {msg}", file=sys.stderr)


def log_prune(pruned: PruneResult, summary: str, config: Config, meta: dict[str, Any] | None = None) -> None:
    """Write ``prune_summary``'s decision-log record (for a caller that passed ``log=False`` and decides
    later whether the judgment still counts, as the proxy does when its budget runs out)."""
    record = judged(pruned, summary, pruned.pruned_summary, {"op": "prune", **(meta or {})}, config)
    if pruned.mode != "enforce" and not pruned.disabled:  # shadow: what pruning would have left
        would = pruned.would_leave if pruned.would_leave is not None else pruned.pruned_summary
        record["chars_after_enforced"] = len(would)
        record["tokens_after_enforced"] = estimate_tokens(would)
    write(config, record, pruned)


def log_status(config: Config | None, status: str, errors: list[str], meta: dict[str, Any]) -> None:
    """Record an event that produced no judgment (disabled, error, timeout); never raises."""
    decision_log.append_status((config or Config()).decision_log_path, status, errors, meta)


def log_nothing(config: Config, note: str, meta: dict[str, Any]) -> None:
    """Record a boundary with nothing to judge (an encrypted Codex summary, an empty one)."""
    decision_log.append_status(
        config.decision_log_path,
        "nothing",
        [],
        {**meta, "note": note, "config_hash": config.digest(), "mode": config.mode},
    )
