"""One compaction judged: a ``Boundary``'s parts made the arguments of ``judge_summary`` /
``prune_summary``, and its log fields (session, index, id) put before the caller's ``meta``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.judges.base import Judge
from sjc_mcp.log.records import log_nothing, session_fields
from sjc_mcp.models import Boundary, JudgeInfo, JudgeResult, PruneResult, as_dict
from sjc_mcp.pipeline.inputs import EvidenceLike
from sjc_mcp.pipeline.judging import judge_summary, prune_summary


def judge_boundary(
    boundary: Boundary,
    *,
    prune: bool = True,
    summary: str | None = None,
    evidence: Iterable[EvidenceLike] = (),
    previous_summary: str | None = None,
    task: str | None = None,
    host: str | None = None,
    threshold: float | None = None,
    config: Config | None = None,
    judge: Judge | None = None,
    meta: dict[str, Any] | None = None,
    log: bool = False,
) -> JudgeResult | PruneResult:
    """One compaction judged (and pruned, with ``prune``): ``summary`` (by default the boundary's own)
    against the span's tool outputs and user messages (plus ``evidence``), its previous summary, task,
    retained turns and the agent's prose kept apart; a span that starts mid-session says so. The log
    record names the boundary (session, index, id, host) besides ``meta`` (the surface, the transcript).
    A boundary with nothing to judge (``boundary.note``: an encrypted Codex summary) comes back with no
    entries and ``note`` set, and is logged as such. The one call every surface makes for a boundary."""
    config = config or Config()
    meta = {
        "session": boundary.session_id,
        "boundary": boundary.index,
        "boundary_id": boundary.boundary_id,
        **session_fields(boundary),
        **(meta or {}),
    }
    text = boundary.summary if summary is None else summary
    if boundary.note and not text.strip():
        return _nothing(boundary, text, config, prune, meta, log)
    kwargs: dict[str, Any] = {
        "previous_summary": boundary.previous_summary if previous_summary is None else previous_summary,
        "task": boundary.task if task is None else task,
        "retained": boundary.retained_turns(),
        "assistant_prose": boundary.assistant_prose(),
        "incomplete_span": boundary.incomplete,
        "host": host,
        "threshold": threshold,
        "config": config,
        "judge": judge,
        "meta": meta,
        "log": log,
    }
    sources: list[EvidenceLike] = [*boundary.sources(), *evidence]
    return prune_summary(text, sources, **kwargs) if prune else judge_summary(text, sources, **kwargs)


def _nothing(
    boundary: Boundary, text: str, config: Config, prune: bool, meta: dict[str, Any], log: bool
) -> JudgeResult | PruneResult:
    if log:
        log_nothing(config, boundary.note or "", {**meta, "host": boundary.host})
    base = JudgeResult(
        entries=[],
        threshold=config.threshold,
        margin=config.margin,
        judge=JudgeInfo(name="none", model="none"),
        host=boundary.host,
        mode=config.mode,
        note=boundary.note,
    )
    if not prune:
        return base
    return PruneResult(
        **as_dict(base), pruned_summary=text, removed=0, kept=0, chars_before=len(text), chars_after=len(text)
    )
