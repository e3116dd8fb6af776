"""Decide: each entry's decision from the judge's score (the threshold and its margin), then what the
judge's grounds, the span and the guard allow.

- an entry scored below the cut whose judge has no grounds to delete it that a person could check
  (``Judgment.grounded`` False) is kept, its reason starting ``doubtful, kept``;
- on a span that visibly starts mid-session, an entry with no source in the span is ``unjudged``;
- on a span with no user message at all, entries of the sections that restate the user's words are
  ``unjudged``;
- when pruning would remove more than ``max_prune_share`` of the entries, nothing is removed (the guard).

What ``sjc prune`` and every surface apply (``decide_entries``), and what ``sjc eval`` scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sjc_mcp.models import DOUBTFUL, EntryResult, JudgeOutput, ParsedSummary, Source
from sjc_mcp.text import is_user_section


def decide(score: float | None, threshold: float, margin: float) -> tuple[str, bool]:
    """``(decision, near_threshold)``: below ``threshold - margin`` is pruned; within the margin below
    the threshold is kept and flagged; no score is kept as unjudged."""
    if score is None:
        return "unjudged", False
    if score < threshold - margin:
        return "prune", False
    return "keep", score < threshold


def entry_results(parsed: ParsedSummary, out: JudgeOutput, threshold: float, margin: float) -> list[EntryResult]:
    """Every entry's decision by its score, an ungrounded prune kept as doubtful."""
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


def _hold(entries: list[EntryResult], which: Callable[[EntryResult], bool], decision: str, why: str) -> int:
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
    entries = entry_results(parsed, out, threshold, margin)
    warnings, guarded = _caveats(entries, sources, incomplete, max_prune_share)
    return entries, warnings, guarded
