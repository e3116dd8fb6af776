"""Judge: a summary split, its entries judged against the evidence retrieved for them, decided, and (for
``prune_summary``) rendered with the pruned entries deleted; logged when asked (``log=True``).

A summary the splitter finds no entries in comes back byte for byte, judged as nothing, with a warning;
a switched-off sjc judges nothing and says by what; a judge that fails, or gives an unusable score,
leaves its entries unjudged (kept) and says so in ``errors``. A judge that sends text off the machine
gets the sources, the previous summary and the task with their secrets redacted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from sjc_mcp.config import Config
from sjc_mcp.judges import make_judge
from sjc_mcp.judges.base import Judge
from sjc_mcp.log import chain as decision_log
from sjc_mcp.log import records as log_records
from sjc_mcp.models import (
    JudgeInfo,
    JudgeOutput,
    JudgeRequest,
    JudgeResult,
    ParsedSummary,
    PruneResult,
    Source,
    Turn,
    as_dict,
)
from sjc_mcp.pipeline.decisions import decide_entries, entry_results
from sjc_mcp.pipeline.inputs import MID_SESSION, EvidenceLike, check_sizes, check_threshold, to_sources
from sjc_mcp.pipeline.retrieve import build_request
from sjc_mcp.redact import redact_inputs
from sjc_mcp.summary import split_summary

if TYPE_CHECKING:
    import sys

    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack


class Options(TypedDict, total=False):
    """What ``judge_summary`` and ``prune_summary`` take besides the summary and its evidence, all optional:
    the previous committed summary (a source) and the task the host keeps (not one); the summary format
    (``host``; detected when None); the decision's ``threshold`` and ``margin`` (the config's when None);
    the ``config`` and a ``judge`` (the config's when None); the turns the host keeps after the summary
    (``retained``) and the agent's own prose (``assistant_prose``), read apart from the sources; and
    ``incomplete_span`` (True, or why) when the evidence is a span that starts mid-session."""

    previous_summary: str | None
    task: str | None
    host: str | None
    threshold: float | None
    margin: float | None
    config: Config | None
    judge: Judge | None
    retained: Sequence[Turn]
    assistant_prose: Sequence[str]
    incomplete_span: str | bool | None


def run_judge(judge: Judge, request: JudgeRequest) -> tuple[JudgeOutput, list[str]]:
    """The judge's output for ``request``, and what went wrong: a judge that raises judges nothing; a
    score outside 0..1 (or NaN) is dropped."""
    errors: list[str] = []
    try:
        out = judge.judge(request)
    except Exception as exc:  # a judge that fails leaves every entry unjudged, never breaks the caller
        errors.append(f"judge {getattr(judge, 'name', '?')} failed: {type(exc).__name__}: {exc}")
        return JudgeOutput(judgments=[], name=getattr(judge, "name", "?"), model=getattr(judge, "model", "?")), errors
    errors.extend(out.errors)
    for j in out.judgments:
        if j.score is not None and (math.isnan(j.score) or not 0.0 <= j.score <= 1.0):
            errors.append(f"entry {j.entry_id}: judge returned an unusable score {j.score!r}; kept unjudged")
            j.score = None
    return out, errors


def _disabled(parsed: ParsedSummary, config: Config, th: float, mg: float, off: str) -> JudgeResult:
    return JudgeResult(
        entries=entry_results(parsed, JudgeOutput(judgments=[], name="none", model="none"), th, mg),
        threshold=th,
        margin=mg,
        judge=JudgeInfo(name="none", model="none"),
        host=parsed.host,
        mode=config.mode,
        disabled=True,
        errors=[f"disabled by {off}"],
    )


def _unstructured(parsed: ParsedSummary, config: Config, th: float, mg: float) -> JudgeResult:
    return JudgeResult(
        entries=[],
        threshold=th,
        margin=mg,
        judge=JudgeInfo(name="none", model="none"),
        host=parsed.host,
        mode=config.mode,
        unstructured=True,
        warnings=[f"unstructured: nothing judged ({parsed.unstructured}); the summary is kept as it is"],
    )


def _judged(
    parsed: ParsedSummary,
    sources: list[Source],
    config: Config,
    judge: Judge,
    th: float,
    mg: float,
    *,
    previous_summary: str | None,
    task: str | None,
    retained: Sequence[Turn],
    assistant_prose: Sequence[str],
    incomplete: str | None,
) -> JudgeResult:
    """The entries of ``parsed`` judged against ``sources`` and decided."""
    given = list(sources)
    redacted = 0
    if getattr(judge, "sends_text", False):  # whole texts, before chunking can split a secret
        sources, previous_summary, task, redacted = redact_inputs(sources, previous_summary, task)
    request = build_request(
        parsed,
        sources,
        config,
        task=task,
        previous_summary=previous_summary,
        retained=retained,
        assistant_prose=assistant_prose,
    )
    if request.entries:
        out, errors = run_judge(judge, request)
    else:
        out, errors = JudgeOutput(judgments=[], name=judge.name, model=judge.model), []
    entries, warnings, guarded = decide_entries(
        parsed, out, given, threshold=th, margin=mg, max_prune_share=config.max_prune_share, incomplete=incomplete
    )
    return JudgeResult(
        entries=entries,
        threshold=th,
        margin=mg,
        judge=JudgeInfo(name=out.name, model=out.model),
        host=parsed.host,
        mode=config.mode,
        errors=errors,
        redactions=out.redactions + redacted,
        warnings=warnings,
        incomplete_span=bool(incomplete),
        guarded=guarded,
    )


def _judge(
    summary: str, evidence: Iterable[EvidenceLike], **options: Unpack[Options]
) -> tuple[JudgeResult, ParsedSummary, Config]:
    config = options.get("config") or Config()
    threshold, margin = options.get("threshold"), options.get("margin")
    incomplete_span = options.get("incomplete_span")
    host = options.get("host")
    incomplete = MID_SESSION if incomplete_span is True else (incomplete_span or None)
    sources = to_sources(evidence)
    check_sizes(summary, sources)
    th = config.threshold if threshold is None else threshold
    mg = config.margin if margin is None else margin
    check_threshold(th)
    with decision_log.Timer() as t:
        parsed = split_summary(summary, host)
        off = config.disabled()
        if off:
            result = _disabled(parsed, config, th, mg, off)
        elif parsed.unstructured:
            result = _unstructured(parsed, config, th, mg)
        else:
            result = _judged(
                parsed,
                sources,
                config,
                options.get("judge") or make_judge(config),
                th,
                mg,
                previous_summary=options.get("previous_summary"),
                task=options.get("task"),
                retained=options.get("retained", ()),
                assistant_prose=options.get("assistant_prose", ()),
                incomplete=incomplete,
            )
    result.duration_ms = t.ms
    return result, parsed, config


def judge_summary(
    summary: str,
    evidence: Iterable[EvidenceLike] = (),
    *,
    log: bool = False,
    meta: dict[str, Any] | None = None,
    **options: Unpack[Options],
) -> JudgeResult:
    """Score every entry of ``summary`` against ``evidence`` (and the previous summary) and decide; the
    other ``options`` are ``Options``'. With ``log``, one decision-log record (``meta`` added to it)."""
    result, _, config = _judge(summary, evidence, **options)
    if log:
        log_records.write(
            config, log_records.judged(result, summary, summary, {"op": "judge", **(meta or {})}, config), result
        )
    return result


def prune_summary(
    summary: str,
    evidence: Iterable[EvidenceLike] = (),
    *,
    log: bool = False,
    meta: dict[str, Any] | None = None,
    **options: Unpack[Options],
) -> PruneResult:
    """Judge, then delete the entries scored below the threshold. Kept text stays byte-identical;
    headings stay. In shadow mode, or when disabled, the summary comes back untouched. ``options`` as for
    ``judge_summary``."""
    result, parsed, config = _judge(summary, evidence, **options)
    remove = {e.id for e in result.entries if e.decision == "prune"}
    enforce = config.mode == "enforce" and not result.disabled
    would = parsed.render(remove)
    after = would if enforce else summary
    pruned = PruneResult(
        **as_dict(result),
        pruned_summary=after,
        removed=len(remove) if enforce else 0,
        kept=len(result.entries) - (len(remove) if enforce else 0),
        chars_before=len(summary),
        chars_after=len(after),
    )
    pruned.would_leave = would
    if log:
        log_records.log_prune(pruned, summary, config, meta)
    return pruned
