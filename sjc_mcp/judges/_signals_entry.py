"""The signals of one entry against one span: the numbers the offline judge's models weigh, and the
finding (quote, place, contradiction, backing call …) its reason is written from."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sjc_mcp.judges import _signals_grounds as grounds
from sjc_mcp.judges._signals_actions import Backing, backing, call_input, describe_input
from sjc_mcp.judges._signals_reason import Finding
from sjc_mcp.judges._signals_span import Span, lines_of
from sjc_mcp.judges._signals_text import (
    CONSTRAINT,
    INFERENCE,
    anchors,
    claimed_kinds,
    done_marked,
    plan_wording,
    words,
)
from sjc_mcp.judges._signals_values import Conflict, Probe, contradiction, probes, test_count_conflict, unsourced_counts
from sjc_mcp.models import Chunk
from sjc_mcp.text import is_forward_section

FEATURES = (
    # how much of the entry the evidence retrieved for it states
    "mass",
    "best_window",
    "anchor",
    "no_anchor",
    "missing_anchor",
    # values, actions, and who said it
    "contradicted",
    "done_backed",
    "user",
    "user_restated",
    "previous",
    "prose",
    "tally",
    # wording
    "directive",
    "directive_nouser",
    "constraint_nouser",
    "inference",
    "task_only",
    "forward",
)


# A user message that covers this share of an entry's weighted words asked for it.
ASKED = 0.9
# Identifiers, values, claims and wording are read from an entry's first HEAD characters: a summary
# entry is a few lines, and a pathological one (a megabyte on one line) costs no more than this.
HEAD = 20_000


@dataclass(slots=True)
class _Coverage:
    """How much of one entry the span states, and where: the entry's words weighted by rarity (``cov``:
    the weighted share of them a set of words holds), its own chunks and their best line window, and the
    user message, previous summary and prose paragraph that cover most of it."""

    text: str  # the entry's first HEAD characters
    words: set[str]
    weight: dict[str, float]
    cov: Callable[[set[str]], float]
    mine: list[int]  # the entry's evidence chunks
    mine_texts: list[str]
    seen: set[str]  # every word of them
    shared: dict[int, list[set[str]]]  # per chunk line, the entry's words on it
    best_chunk: float
    best_window: float
    user: float
    user_src: int | None
    user_text: str | None
    user_restated: float
    previous: float
    prose_best: tuple[str, set[str]] | None
    prose_cov: float


@dataclass(slots=True)
class _Values:
    """What the entry names, counts and claims, checked against the span."""

    anchors: set[str]
    hits: int  # anchors found in the evidence
    unsourced: list[tuple[str, bool]]  # counts no source states, each with whether the prose does
    conflict: Conflict | None
    conflict_chunk: Chunk | None
    directive: float
    kinds: list[str]  # the kinds of action it claims were done
    back: Backing


def signals(span: Span, entry: str, section: str, evidence: list[int]) -> tuple[dict[str, float], Finding]:
    """The features of one entry, and what was found for its reason."""
    c = _coverage(span, entry, evidence)
    v = _values(span, c)
    f = _features(span, c, v, section)
    return f, _finding(span, c, v, section, f)


def _coverage(span: Span, entry: str, evidence: list[int]) -> _Coverage:
    chunks = span.chunks
    ew = words(entry)
    weight = {w: math.log(1 + span.n_docs / (1 + span.df.get(w, 0))) for w in ew}
    total = math.fsum(weight.values()) or 1.0

    def cov(ws: set[str]) -> float:
        return math.fsum(map(weight.__getitem__, weight.keys() & ws)) / total if ew else 0.0

    mine = [cid for cid in evidence if cid in chunks]
    seen: set[str] = set().union(*(span.words[cid] for cid in mine)) if mine else set()
    best_chunk = max((cov(span.words[cid]) for cid in mine), default=0.0)
    shared = {cid: span.shared(cid, ew) for cid in mine}  # per chunk line, the entry's words on it
    best_window = max((span.best_window(shared[cid], cov) for cid in mine), default=0.0)
    user, user_src, user_text = max(
        ((cov(uw), i, content) for i, content, uw in span.users), default=(0.0, None, None), key=lambda t: t[0]
    )
    # how much of one user message the entry restates (a short request covered by a longer entry)
    user_restated = max((len(ew & uw) / max(3, len(uw)) for _, _, uw in span.users), default=0.0) if ew else 0.0
    previous = max((cov(span.words[cid]) for cid in span.prev_ids), default=0.0)
    # the first paragraph that covers most (one sharing no word covers nothing: the first of all, then)
    candidates = [span.prose[i] for i in span.prose_with(ew)] if ew else []
    prose_best = max(candidates or span.prose[:1], key=lambda p: cov(p[1]), default=None)
    return _Coverage(
        text=entry[:HEAD],
        words=ew,
        weight=weight,
        cov=cov,
        mine=mine,
        mine_texts=[chunks[c].text for c in mine],
        seen=seen,
        shared=shared,
        best_chunk=best_chunk,
        best_window=best_window,
        user=user,
        user_src=user_src,
        user_text=user_text,
        user_restated=user_restated,
        previous=previous,
        prose_best=prose_best,
        prose_cov=cov(prose_best[1]) if prose_best else 0.0,
    )


def _values(span: Span, c: _Coverage) -> _Values:
    chunks, text, mine, mine_texts = span.chunks, c.text, c.mine, c.mine_texts
    an = anchors(text)

    def in_evidence(anchor: str) -> bool:
        return span.in_evidence(anchor, mine_texts)

    hits = sum(1 for a in an if in_evidence(a))

    def later(p: Probe, i: int) -> bool:
        return span.stated_later(p, chunks[mine[i]].source if i >= 0 else -1)

    values = probes(text, in_evidence, an)
    others = mine_texts + [u for _, u, _ in span.users]
    unsourced = unsourced_counts(
        text, span.prose_text, others, later, values, span.lowered(others), span.lowered([span.prose_text])[0]
    )
    conflict = contradiction(text, mine_texts, span.all_text, later, values) if mine else None
    conflict_chunk = chunks[mine[conflict.text]] if conflict else None
    if conflict is None:
        conflict = test_count_conflict(text, span.calls, span.outcomes)
    # a to-do a user message states (nearly) word for word is the user's request, not a plan
    directive = 0.0 if c.user >= ASKED else plan_wording(text)
    kinds = claimed_kinds(text)
    return _Values(an, hits, unsourced, conflict, conflict_chunk, directive, kinds, backing(text, kinds, span.calls))


def _features(span: Span, c: _Coverage, v: _Values, section: str) -> dict[str, float]:
    """The numbers the lexical judge's models weigh (``FEATURES``)."""
    text, an, user, previous = c.text, v.anchors, c.user, c.previous
    first = text.lstrip("-*+ 0123456789.)")
    return {
        "mass": math.log1p(math.fsum(w for k, w in c.weight.items() if k in c.seen)) / 3,
        "best_window": c.best_window,
        "anchor": v.hits / len(an) if an else 0.0,
        "no_anchor": 0.0 if an else 1.0,
        "missing_anchor": math.log1p(len(an) - v.hits) / 2,
        "contradicted": 1.0 if v.conflict else 0.0,
        "done_backed": v.back.share,
        "user": user,
        "user_restated": c.user_restated,
        "previous": previous,
        "prose": max(0.0, c.prose_cov - max(c.best_chunk, c.best_window, user, previous)),
        "tally": min(1.0, float(len(v.unsourced))),
        "directive": v.directive,
        "directive_nouser": v.directive * (1.0 - user),
        "constraint_nouser": (1.0 - max(user, previous)) if CONSTRAINT.match(first) else 0.0,
        "inference": 1.0 if INFERENCE.search(text) else 0.0,
        "forward": 1.0 if is_forward_section(section) else 0.0,
        "task_only": max(0.0, c.cov(span.task_words) - max(c.best_chunk, c.best_window, user, previous)),
    }


def _finding(span: Span, c: _Coverage, v: _Values, section: str, f: dict[str, float]) -> Finding:
    """What was found for the entry's reason: its grounds (names the span lacks, a to-do or rule nobody
    asked for, a claim no call backs), and the quote and place a reader checks it against."""
    chunks, text, weight, kinds, user, user_text = span.chunks, c.text, c.weight, v.kinds, c.user, c.user_text
    tally = [n for n, _ in v.unsourced]
    given = grounds.names(text, v.anchors)
    gone = grounds.missing(given, span.vocabulary)
    todo = grounds.is_todo(section, text, v.directive, done_marked(text))
    rule = not todo and grounds.is_rule(section, text)
    asked = (todo or rule) and grounds.asked(c.words, span.user_words, span.carried, grounds.compounds(text))
    follows = span.failures.calling_for(c.words, given) if todo and not asked and grounds.fixing(text) else None
    finding = Finding(
        score=0.0,
        tally=tally or None,
        tally_prose=[n for n, in_prose in v.unsourced if in_prose] or None,
        missing=gone or None,
        missing_in_prose=bool(gone) and all(grounds.holds(span.prose_words, n) for n in gone),
        todo=todo,
        rule=rule,
        asked=asked,
        follows=follows,
        # (an action a user message reports, "I pushed it", is the user's word for it)
        unbacked_claim=[k for k in kinds if k in grounds.CHECKED_KINDS and not any(k in s.kinds for s in span.calls)]
        if kinds and not grounds.definition(text) and user < grounds.ASKED_COVER
        else None,
        prose_only=_line_of(c.prose_best[0], weight, span) if c.prose_best and f["prose"] > 0.25 else None,
        unbacked=[k for k in kinds if not any(k in s.kinds for s in span.calls)] or None,
        plan=bool(v.directive) or f["forward"] > 0,
    )
    if (todo or rule) and not asked and not follows:  # what to show for a to-do: how near a user message comes
        line = _line_of(user_text, weight, span) if user_text is not None and user > 0 else None
        finding.user_line = (line, span.places.of(c.user_src)) if line else None
    if v.back.share >= 0.5 and v.back.call is not None:
        finding.done, finding.done_place = v.back.call, span.places.of(v.back.call.source)
    conflict, conflict_chunk = v.conflict, v.conflict_chunk
    if conflict:
        finding.conflict = (conflict.said, conflict.found, conflict.line)
        finding.quote = conflict.line
        finding.place = span.place(conflict_chunk) if conflict_chunk else "the span's edits"
        finding.chunk = conflict_chunk
    elif user_text is not None and user > 0 and user >= max(c.best_chunk, c.best_window, c.previous):
        chunk, quote = _quote(weight, [(chunks[i], span.lines[i], c.shared[i]) for i in c.mine], span)
        finding.user, finding.source = True, c.user_src
        finding.quote = _line_of(user_text, weight, span) or quote
        finding.place = span.places.of(c.user_src)
    else:
        chunk, quote = _quote(weight, [(chunks[i], span.lines[i], c.shared[i]) for i in c.mine], span)
        finding.quote, finding.place, finding.chunk = quote, span.place(chunk), chunk
    return finding


def _line_of(text: str, weight: dict[str, float], span: Span | None = None) -> str | None:
    """The line of ``text`` that covers the entry's weighted words best."""
    best, line = 0.0, None
    for ln, lw in span.lines_of(text) if span is not None else lines_of(text):
        s = math.fsum(map(weight.__getitem__, lw & weight.keys()))
        if s > best:
            best, line = s, ln.strip()[:240]
    return line


def _quote(
    weight: dict[str, float],
    chunks: list[tuple[Chunk, list[tuple[str, list[str]]], list[set[str]]]],
    span: Span,
) -> tuple[Chunk | None, str | None]:
    """The evidence line that covers the entry's weighted words best: a line of the output rather than
    the recorded call (``Bash: {"command": …}``) unless the call says much more, then the command.
    ``chunks``: each chunk with its lines and the entry's words on each (``Span.shared``)."""
    best: tuple[float, Chunk | None, str | None] = (0.0, None, None)
    best_call: tuple[float, Chunk | None, str | None] = (0.0, None, None)
    for c, lines, on_line in chunks:
        call = span.sources[c.source].call if c.source < len(span.sources) and c.start == 0 else None
        for i, ((line, _), common) in enumerate(zip(lines, on_line, strict=True)):
            if common:
                s = math.fsum(map(weight.__getitem__, common))
                if call and i == 0 and call.startswith(line.strip()[:40]):
                    if s > best_call[0]:
                        best_call = (s, c, describe_call(call))
                elif s > best[0]:
                    best = (s, c, line.strip()[:240])
    if best_call[0] > 2 * best[0]:
        return best_call[1], best_call[2]
    return best[1], best[2]


def describe_call(call: str) -> str:
    name, data = call_input(call)
    return describe_input(name, data, call)
