"""Split, retrieve, judge, decide, render, log: the one library call every surface goes through.

As a library it writes nothing and prints nothing: what the caller should know comes back in the result
(``warnings``, ``errors``); a decision-log record is written only with ``log=True`` (to the config's
``decision_log``), as every surface of sjc asks for it.

What every surface inherits from here, besides the judgment itself:

- a summary the splitter finds no entries in (not text, no structure) is returned byte for byte,
  judged as nothing, with a warning (and, when logging, a record of status ``unstructured``);
- on a span that visibly starts mid-session (``incomplete_span``), an entry with no source in the
  span is ``unjudged``, not pruned: its source may lie before the file's first record;
- on a span with no user message at all, entries of the sections that restate the user's words are
  ``unjudged``, not pruned;
- an entry scored below the cut whose judge has no grounds to delete it that a person could check
  (``Judgment.grounded`` False: nothing it names was looked for and found missing, no other value of
  the same thing was shown) is kept, its reason starting ``doubtful, kept``;
- when pruning would remove more than ``max_prune_share`` of the entries, nothing is removed (the
  guard), and the log says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError
from sjc_mcp.evidence import EvidenceIndex
from sjc_mcp.judges import make_judge
from sjc_mcp.judges.base import Judge
from sjc_mcp.log import chain as decision_log
from sjc_mcp.log import records as log_records
from sjc_mcp.models import (
    DOUBTFUL,
    Boundary,
    EntryResult,
    EvidenceItem,
    JudgeEntry,
    JudgeInfo,
    JudgeOutput,
    JudgeRequest,
    JudgeResult,
    ParsedSummary,
    PruneResult,
    Source,
    Turn,
    as_dict,
    evidence_source,
)
from sjc_mcp.redact import redact_inputs
from sjc_mcp.summary import split_summary
from sjc_mcp.text import is_user_section, plain_marker

MAX_SUMMARY_BYTES = 1_000_000
MAX_EVIDENCE_BYTES = 20_000_000

EvidenceLike = Source | EvidenceItem | dict[str, Any] | str
MID_SESSION = "the span starts mid-session"


def to_sources(evidence: Iterable[EvidenceLike]) -> list[Source]:
    """Normalise caller evidence: ``Source``, ``EvidenceItem``, ``{kind, name, content}`` or a string."""
    out: list[Source] = []
    for i, item in enumerate(evidence):
        if isinstance(item, Source):
            out.append(item)
        elif isinstance(item, EvidenceItem):
            out.append(item.to_source())
        elif isinstance(item, str):
            out.append(Source(kind="tool_output", content=item))
        elif isinstance(item, dict):
            try:
                out.append(evidence_source(item))
            except InputError as exc:
                raise InputError(f"evidence item {i}: {exc}") from None
        else:
            raise InputError(f"evidence item {i}: expected an object with 'content', got {type(item).__name__}")
    return out


def _check_sizes(summary: str, sources: Sequence[Source]) -> None:
    if not isinstance(summary, str):
        raise InputError("summary must be text")
    if len(summary.encode("utf-8", "surrogatepass")) > MAX_SUMMARY_BYTES:
        raise InputError(f"summary is larger than {MAX_SUMMARY_BYTES:,} bytes")
    total = sum(len(s.content) + len(s.call or "") for s in sources)
    if total > MAX_EVIDENCE_BYTES:
        raise InputError(f"evidence is larger than {MAX_EVIDENCE_BYTES:,} bytes")


def build_request(
    parsed: ParsedSummary,
    sources: Sequence[Source],
    config: Config,
    *,
    task: str | None = None,
    previous_summary: str | None = None,
    retained: Sequence[Turn] = (),
    assistant_prose: Sequence[str] = (),
) -> JudgeRequest:
    allowed = set(config.sources)
    pool = [s for s in sources if s.kind in allowed]
    if previous_summary and "previous_summary" in allowed:
        pool.append(Source(kind="previous_summary", content=previous_summary))
    r = config.retrieval
    index = EvidenceIndex(pool, passage_chars=r.passage_chars, chunk_chars=r.chunk_chars)
    per_entry, pooled = index.retrieve([e.text for e in parsed.entries], k=r.top_k)
    entries = [  # a judge reads an entry's words, not its markup: lettered items read as bullets
        JudgeEntry(id=e.id, section=e.section, text=plain_marker(e.text), evidence=ids)
        for e, ids in zip(parsed.entries, per_entry, strict=True)
    ]
    return JudgeRequest(
        task=task,
        previous_summary=previous_summary if "previous_summary" in allowed else None,
        retained=list(retained),
        evidence=pooled,
        entries=entries,
        assistant_prose=list(assistant_prose),
        sources=pool,
        vocabulary=index.vocab,
    )


def _run_judge(judge: Judge, request: JudgeRequest) -> tuple[JudgeOutput, list[str]]:
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


def decide(score: float | None, threshold: float, margin: float) -> tuple[str, bool]:
    """``(decision, near_threshold)``: below ``threshold - margin`` is pruned; within the margin below
    the threshold is kept and flagged; no score is kept as unjudged."""
    if score is None:
        return "unjudged", False
    if score < threshold - margin:
        return "prune", False
    return "keep", score < threshold


def _results(parsed: ParsedSummary, out: JudgeOutput, threshold: float, margin: float) -> list[EntryResult]:
    by_id = {j.entry_id: j for j in out.judgments}
    results = []
    for e in parsed.entries:
        j = by_id.get(e.id)
        score = j.score if j else None
        decision, near = decide(score, threshold, margin)
        why = j.reason if j else None
        if decision == "prune" and j is not None and j.grounded is False:  # no reason a person could check
            decision, why = "keep", f"{DOUBTFUL}: {why}" if why else DOUBTFUL
        results.append(
            EntryResult(
                id=e.id,
                section=e.section,
                text=e.text,
                score=score,
                decision=decision,  # type: ignore[arg-type]
                near_threshold=near,
                contradicted=bool(j and j.contradicted),
                quote=j.quote if j else None,
                origin=j.origin.label() if j and j.origin else None,
                reason=why,
            )
        )
    return results


def _hold(entries: list[EntryResult], which: Any, decision: str, why: str) -> int:
    """Turn the ``prune`` decisions that ``which`` picks into ``decision``, saying why; how many."""
    n = 0
    for e in entries:
        if e.decision == "prune" and which(e):
            e.decision = decision  # type: ignore[assignment]
            e.reason = f"{why} ({e.reason})" if e.reason else why
            n += 1
    return n


def _caveats(
    entries: list[EntryResult], sources: Sequence[Source], incomplete: str | None, max_share: float
) -> tuple[list[str], bool]:
    """Apply what the span and the guard say about the judge's decisions; the warnings, and whether the
    guard kept the summary whole."""
    warnings: list[str] = []
    if incomplete:
        n = _hold(
            entries,
            lambda e: not e.contradicted,
            "unjudged",
            "no source in this span, which starts mid-session: its source may lie before it",
        )
        warnings.append(
            f"incomplete span: {incomplete}; {n} {'entry' if n == 1 else 'entries'} with no source in it "
            "left unjudged (kept, not flagged)"
        )
    if not any(s.kind == "user_message" for s in sources):
        n = _hold(
            entries,
            lambda e: is_user_section(e.section) and not e.contradicted,
            "unjudged",
            "restates the user, and the span holds none of the user's messages",
        )
        if n:
            warnings.append(
                f"the span holds no user message: {n} {'entry' if n == 1 else 'entries'} restating the user "
                "left unjudged (kept, not flagged)"
            )
    would = sum(e.decision == "prune" for e in entries)
    if entries and would > max_share * len(entries):
        _hold(entries, lambda e: True, "keep", "kept: the max_prune_share guard kept the summary whole")
        warnings.append(
            f"guard: pruning would remove {would} of {len(entries)} entries ({would / len(entries):.0%}, more than "
            f"max_prune_share {max_share:.0%}); the summary is kept whole"
        )
        return warnings, True
    return warnings, False


def decide_entries(
    parsed: ParsedSummary,
    out: JudgeOutput,
    sources: Sequence[Source],
    *,
    threshold: float,
    margin: float,
    max_prune_share: float,
    incomplete: str | None = None,
) -> tuple[list[EntryResult], list[str], bool]:
    """The decision for every entry of ``parsed`` from the judge's ``out``: the threshold and margin, then
    what the judge could not say why, the span and the guard allow (``sources``: the span's sources as
    given, before any redaction). ``(entries, warnings, guarded)``. What ``sjc prune`` and every surface
    apply, and what ``sjc eval`` scores."""
    entries = _results(parsed, out, threshold, margin)
    warnings, guarded = _caveats(entries, sources, incomplete, max_prune_share)
    return entries, warnings, guarded


def _judge(
    summary: str,
    evidence: Iterable[EvidenceLike],
    *,
    previous_summary: str | None,
    task: str | None,
    host: str | None,
    threshold: float | None,
    margin: float | None,
    config: Config | None,
    judge: Judge | None,
    retained: Sequence[Turn],
    assistant_prose: Sequence[str],
    incomplete_span: str | bool | None = None,
) -> tuple[JudgeResult, ParsedSummary, Config]:
    config = config or Config()
    incomplete = MID_SESSION if incomplete_span is True else (incomplete_span or None)
    sources = to_sources(evidence)
    _check_sizes(summary, sources)
    th = config.threshold if threshold is None else threshold
    mg = config.margin if margin is None else margin
    if not 0.0 <= th <= 1.0:
        raise InputError(f"threshold must be between 0 and 1, got {th}")
    with decision_log.Timer() as t:
        parsed = split_summary(summary, host)
        off = config.disabled()
        if off:
            result = JudgeResult(
                entries=_results(parsed, JudgeOutput(judgments=[], name="none", model="none"), th, mg),
                threshold=th,
                margin=mg,
                judge=JudgeInfo(name="none", model="none"),
                host=parsed.host,
                mode=config.mode,
                disabled=True,
                errors=[f"disabled by {off}"],
            )
        elif parsed.unstructured:
            result = JudgeResult(
                entries=[],
                threshold=th,
                margin=mg,
                judge=JudgeInfo(name="none", model="none"),
                host=parsed.host,
                mode=config.mode,
                unstructured=True,
                warnings=[f"unstructured: nothing judged ({parsed.unstructured}); the summary is kept as it is"],
            )
        else:
            judge = judge or make_judge(config)
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
            out, errors = (
                _run_judge(judge, request)
                if request.entries
                else (JudgeOutput(judgments=[], name=judge.name, model=judge.model), [])
            )
            entries, warnings, guarded = decide_entries(
                parsed,
                out,
                given,
                threshold=th,
                margin=mg,
                max_prune_share=config.max_prune_share,
                incomplete=incomplete,
            )
            result = JudgeResult(
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
    result.duration_ms = t.ms
    return result, parsed, config


def judge_summary(
    summary: str,
    evidence: Iterable[EvidenceLike] = (),
    *,
    previous_summary: str | None = None,
    task: str | None = None,
    host: str | None = None,
    threshold: float | None = None,
    margin: float | None = None,
    config: Config | None = None,
    judge: Judge | None = None,
    retained: Sequence[Turn] = (),
    assistant_prose: Sequence[str] = (),
    incomplete_span: str | bool | None = None,
    log: bool = False,
    meta: dict[str, Any] | None = None,
) -> JudgeResult:
    """Score every entry of ``summary`` against ``evidence`` (and the previous summary) and decide.
    ``incomplete_span`` (True, or why) says the evidence is a span that starts mid-session."""
    result, _, config = _judge(
        summary,
        evidence,
        previous_summary=previous_summary,
        task=task,
        host=host,
        threshold=threshold,
        margin=margin,
        config=config,
        judge=judge,
        retained=retained,
        assistant_prose=assistant_prose,
        incomplete_span=incomplete_span,
    )
    if log:
        log_records.write(
            config, log_records.judged(result, summary, summary, {"op": "judge", **(meta or {})}, config), result
        )
    return result


def prune_summary(
    summary: str,
    evidence: Iterable[EvidenceLike] = (),
    *,
    previous_summary: str | None = None,
    task: str | None = None,
    host: str | None = None,
    threshold: float | None = None,
    margin: float | None = None,
    config: Config | None = None,
    judge: Judge | None = None,
    retained: Sequence[Turn] = (),
    assistant_prose: Sequence[str] = (),
    incomplete_span: str | bool | None = None,
    log: bool = False,
    meta: dict[str, Any] | None = None,
) -> PruneResult:
    """Judge, then delete the entries scored below the threshold. Kept text stays byte-identical;
    headings stay. In shadow mode, or when disabled, the summary comes back untouched."""
    result, parsed, config = _judge(
        summary,
        evidence,
        previous_summary=previous_summary,
        task=task,
        host=host,
        threshold=threshold,
        margin=margin,
        config=config,
        judge=judge,
        retained=retained,
        assistant_prose=assistant_prose,
        incomplete_span=incomplete_span,
    )
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
    from sjc_mcp.log.records import log_nothing

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
