"""The signals of one entry against one span: the numbers the offline judge's models weigh, and the
finding (quote, place, contradiction, backing call …) its reason is written from."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain

from sjc_mcp.judges import _signals_grounds as grounds
from sjc_mcp.judges._signals_actions import Call, backing, call_input, calls, describe_input, is_shell_tool
from sjc_mcp.judges._signals_reason import Finding, Places
from sjc_mcp.judges._signals_text import (
    CONSTRAINT,
    INFERENCE,
    NOT_WORD3,
    WORD3,
    anchors,
    claimed_kinds,
    done_marked,
    found,
    plan_wording,
    word_runs,
    words,
)
from sjc_mcp.judges._signals_values import Probe, contradiction, probes, test_count_conflict, unsourced_counts
from sjc_mcp.models import Chunk, JudgeRequest, Source
from sjc_mcp.text import is_forward_section, safe_lower, tokens

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


# the line breaks of ``str.splitlines`` other than "\n"
_OTHER_BREAK = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


class Span:
    """Per-request work shared by every entry: chunk words and lines, the calls, the user messages."""

    def __init__(self, request: JudgeRequest) -> None:
        self.chunks = {c.id: c for c in request.evidence}
        # the words of every non-blank line, the chunk lower-cased once (its lines are the lines of the
        # lower-cased chunk: lower-casing neither makes nor removes a line break). A line's words are kept
        # as read, stopwords and all: an entry's words have none, so what a line shares with an entry is the
        # same, and no set is built per line. ``words`` has each chunk's words without them.
        find = WORD3.findall
        self.lines: dict[int, list[tuple[str, list[str]]]] = {}
        for cid, c in self.chunks.items():
            if not _OTHER_BREAK.search(c.text):
                # lines end only at "\n": every character but [a-z0-9] and "\n" becomes a space (in C), so
                # a line's runs of 3 or more of them are its ``WORD3`` words (and shorter runs, dropped with
                # the stopwords wherever it matters)
                pieces = word_runs(c.text).split("\n")
                self.lines[cid] = [
                    (ln, piece.split()) for ln, piece in zip(c.text.split("\n"), pieces, strict=True) if ln.strip()
                ]
                continue
            lowered = c.text.lower().splitlines()
            self.lines[cid] = [
                (ln, find(low)) for ln, low in zip(c.text.splitlines(), lowered, strict=True) if ln.strip()
            ]
        self.words = {cid: set().union(*(w for _, w in lines)) - NOT_WORD3 for cid, lines in self.lines.items()}
        self.n_docs = max(1, len(self.chunks))
        self.df: dict[str, int] = Counter(chain.from_iterable(self.words.values()))  # chunks holding each word
        self.all_text = "\n".join(c.text for c in request.evidence)
        sources: list[Source] = list(request.sources)
        if not sources:  # a request built without its sources: the pooled chunks stand in
            sources = [Source(kind=c.origin.kind, content=c.text, name=c.origin.name) for c in request.evidence]
        self.sources = sources
        self.places = Places(sources)
        self.calls: list[Call] = calls(sources)
        self.outcomes = "\n".join(c.line for c in self.calls)
        self.users = [(i, s.content, words(s.content)) for i, s in enumerate(sources) if s.kind == "user_message"]
        self.prev_ids = [cid for cid, c in self.chunks.items() if c.origin.kind == "previous_summary"]
        self.prose = [(p, words(p)) for p in request.assistant_prose]
        self._prose_index: dict[str, list[int]] | None = None
        self._line_words: dict[str, list[tuple[str, set[str]]]] = {}
        self._safe_lower: dict[str, str | None] = {}
        self._in_evidence: dict[str, bool] = {}
        self.prose_text = "\n".join(request.assistant_prose)[:500_000]
        self.task_words = words(request.task or "")
        self._lowered: list[str] | None = None
        self._values: dict[tuple[str, int, int], set[tuple[str, ...]]] = {}
        # every word of every source, to look a name up in (the index's vocabulary, when given)
        self.vocabulary: dict[str, int] | set[str] = request.vocabulary or {
            w for s in sources for w in tokens(f"{s.call or ''}\n{s.content}")
        }
        self.user_words = [uw for _, _, uw in self.users]
        # what the previous summary carried over, line by line: a to-do or rule of it is not the compressor's
        self.carried = [w for w in map(words, (request.previous_summary or "").splitlines()) if w]
        self.prose_words: set[str] = set().union(*(pw for _, pw in self.prose)) if self.prose else set()
        self._failures: grounds.Failures | None = None

    @property
    def failures(self) -> grounds.Failures:
        """The failure lines of the span's checks and failed calls (read at the first to-do that asks)."""
        if self._failures is None:  # the outputs of checks (tests, lint, builds, merges) and of failed calls
            checks = {c.source: c for c in self.calls if not c.ok or c.kinds & grounds.REPORTING_KINDS}
            self._failures = grounds.Failures(
                (s.content, i in checks and "lint" in checks[i].kinds)
                for i, s in enumerate(self.sources)
                if s.kind == "tool_output" and (s.is_error or (i in checks and is_shell_tool(s.name)))
            )
        return self._failures

    def in_evidence(self, anchor: str, near: Sequence[str] = ()) -> bool:
        """Is ``anchor`` in the pooled evidence as a whole token (``found``; worked out once per anchor:
        a summary's entries name the same files and identifiers again and again)? ``near``: the texts of
        chunks most likely to hold it (the entry's own), searched first: a whole token in one chunk is a
        whole token in the pooled text (chunks are joined by line breaks), and most anchors are found
        there without reading the whole pool."""
        got = self._in_evidence.get(anchor)
        if got is None:
            got = self._in_evidence[anchor] = any(found(anchor, t) for t in near) or found(anchor, self.all_text)
        return got

    def stated_later(self, probe: Probe, after: int = -1) -> bool:
        """Does a source later than source ``after`` (any source, for -1) state the probe's value?"""
        if self._lowered is None:  # built once, at the first value that needs it: one lower-cased copy
            self._lowered = [f"{s.call or ''}\n{s.content}".lower() for s in self.sources]
        lowered = self._lowered
        return any(self._states(probe, i, lowered[i]) for i in range(len(self.sources) - 1, after, -1))

    def _states(self, probe: Probe, i: int, lowered: str) -> bool:
        """Does source ``i`` (``lowered``: lower-cased; every probe ignores case) state the probe's value?
        Its key first (a cheap test), then the values the probe's pattern finds there, read once per source:
        entries name the same things ("3 files", "5 files" share a pattern), and a value is asked of the
        sources after each of an entry's chunks (a 50 KB output read again and again was a third of a
        judgment)."""
        if probe.key not in lowered:
            return False
        key = (probe.rx.pattern, probe.rx.flags, i)
        values = self._values.get(key)
        if values is None:
            values = self._values[key] = {v for v, _, _ in probe.values(lowered)}
        return probe.value in values

    def lowered(self, texts: list[str]) -> list[str | None]:
        """Each text's ``safe_lower`` (worked out once per text)."""
        cache, out = self._safe_lower, []
        for t in texts:
            if t not in cache:
                cache[t] = safe_lower(t)
            out.append(cache[t])
        return out

    def lines_of(self, text: str) -> list[tuple[str, set[str]]]:
        """The lines of a user message or prose paragraph with their words (worked out once per text)."""
        got = self._line_words.get(text)
        if got is None:
            got = self._line_words[text] = _lines_of(text)
        return got

    def prose_with(self, ws: set[str]) -> list[int]:
        """The paragraphs of the agent's prose that share a word with ``ws``, in order."""
        if self._prose_index is None:
            index: dict[str, list[int]] = {}
            for i, (_, pw) in enumerate(self.prose):
                for w in pw:
                    index.setdefault(w, []).append(i)
            self._prose_index = index
        get = self._prose_index.get
        return sorted({i for w in ws for i in get(w, ())})

    def shared(self, cid: int, ws: set[str]) -> list[set[str]]:
        """The words of ``ws`` on each line of chunk ``cid`` (its ``lines``, in order)."""
        return [ws.intersection(lw) for _, lw in self.lines[cid]]

    @staticmethod
    def best_window(hits: list[set[str]], cov: Callable[[set[str]], float]) -> float:
        """The best ``cov`` of three consecutive lines of a chunk (of all its lines when it has fewer), from
        the words of an entry each line has (``shared``): a window with none of them costs nothing."""
        if len(hits) <= 2:
            return cov(set().union(*hits)) if any(hits) else 0.0
        best, last = 0.0, None
        for a, b, c in zip(hits, hits[1:], hits[2:], strict=False):
            if a or b or c:
                w = a | b | c
                if w != last:  # the next window often holds the same words: worked out once
                    best, last = max(best, cov(w)), w
        return best

    def place(self, chunk: Chunk | None) -> str:
        return self.places.of(chunk.source) if chunk is not None else "evidence"


# A user message that covers this share of an entry's weighted words asked for it.
ASKED = 0.9
# Identifiers, values, claims and wording are read from an entry's first HEAD characters: a summary
# entry is a few lines, and a pathological one (a megabyte on one line) costs no more than this.
HEAD = 20_000


def signals(span: Span, entry: str, section: str, evidence: list[int]) -> tuple[dict[str, float], Finding]:
    """The features of one entry, and what was found for its reason."""
    chunks = span.chunks
    text = entry[:HEAD]
    ew = words(entry)
    weight = {w: math.log(1 + span.n_docs / (1 + span.df.get(w, 0))) for w in ew}
    total = math.fsum(weight.values()) or 1.0

    def cov(ws: set[str]) -> float:
        return math.fsum(map(weight.__getitem__, weight.keys() & ws)) / total if ew else 0.0

    mine = [cid for cid in evidence if cid in chunks]
    mine_texts = [chunks[c].text for c in mine]
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
    prose_cov = cov(prose_best[1]) if prose_best else 0.0
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
    tally = [c for c, _ in unsourced]
    conflict = contradiction(text, mine_texts, span.all_text, later, values) if mine else None
    conflict_chunk = chunks[mine[conflict.text]] if conflict else None
    if conflict is None:
        conflict = test_count_conflict(text, span.calls, span.outcomes)
    # a to-do a user message states (nearly) word for word is the user's request, not a plan
    directive = 0.0 if user >= ASKED else plan_wording(text)
    kinds = claimed_kinds(text)
    back = backing(text, kinds, span.calls)
    first = text.lstrip("-*+ 0123456789.)")
    f = {
        "mass": math.log1p(math.fsum(v for w, v in weight.items() if w in seen)) / 3,
        "best_window": best_window,
        "anchor": hits / len(an) if an else 0.0,
        "no_anchor": 0.0 if an else 1.0,
        "missing_anchor": math.log1p(len(an) - hits) / 2,
        "contradicted": 1.0 if conflict else 0.0,
        "done_backed": back.share,
        "user": user,
        "user_restated": user_restated,
        "previous": previous,
        "prose": max(0.0, prose_cov - max(best_chunk, best_window, user, previous)),
        "tally": min(1.0, float(len(tally))),
        "directive": directive,
        "directive_nouser": directive * (1.0 - user),
        "constraint_nouser": (1.0 - max(user, previous)) if CONSTRAINT.match(first) else 0.0,
        "inference": 1.0 if INFERENCE.search(text) else 0.0,
        "forward": 1.0 if is_forward_section(section) else 0.0,
        "task_only": max(0.0, cov(span.task_words) - max(best_chunk, best_window, user, previous)),
    }
    given = grounds.names(text, an)
    gone = grounds.missing(given, span.vocabulary)
    todo = grounds.is_todo(section, text, directive, done_marked(text))
    rule = not todo and grounds.is_rule(section, text)
    asked = (todo or rule) and grounds.asked(ew, span.user_words, span.carried)
    follows = span.failures.calling_for(ew, given) if todo and not asked and grounds.fixing(text) else None
    finding = Finding(
        score=0.0,
        tally=tally or None,
        tally_prose=[c for c, in_prose in unsourced if in_prose] or None,
        missing=gone or None,
        missing_in_prose=bool(gone) and all(grounds.holds(span.prose_words, n) for n in gone),
        todo=todo,
        rule=rule,
        asked=asked,
        follows=follows,
        # (an action a user message reports, "I pushed it", is the user's word for it)
        unbacked_claim=[k for k in kinds if k in grounds.CHECKED_KINDS and not any(k in c.kinds for c in span.calls)]
        if kinds and not grounds.definition(text) and user < grounds.ASKED_COVER
        else None,
        prose_only=_line_of(prose_best[0], weight, span) if prose_best and f["prose"] > 0.25 else None,
        unbacked=[k for k in kinds if not any(k in c.kinds for c in span.calls)] or None,
        plan=bool(directive) or f["forward"] > 0,
    )
    if (todo or rule) and not asked and not follows:  # what to show for a to-do: how near a user message comes
        line = _line_of(user_text, weight, span) if user_text is not None and user > 0 else None
        finding.user_line = (line, span.places.of(user_src)) if line else None
    if back.share >= 0.5 and back.call is not None:
        finding.done, finding.done_place = back.call, span.places.of(back.call.source)
    if conflict:
        finding.conflict = (conflict.said, conflict.found, conflict.line)
        finding.quote = conflict.line
        finding.place = span.place(conflict_chunk) if conflict_chunk else "the span's edits"
        finding.chunk = conflict_chunk
    elif user_text is not None and user > 0 and user >= max(best_chunk, best_window, previous):
        chunk, quote = _quote(weight, [(chunks[c], span.lines[c], shared[c]) for c in mine], span)
        finding.user, finding.source = True, user_src
        finding.quote = _line_of(user_text, weight, span) or quote
        finding.place = span.places.of(user_src)
    else:
        chunk, quote = _quote(weight, [(chunks[c], span.lines[c], shared[c]) for c in mine], span)
        finding.quote, finding.place, finding.chunk = quote, span.place(chunk), chunk
    return f, finding


def _line_of(text: str, weight: dict[str, float], span: Span | None = None) -> str | None:
    """The line of ``text`` that covers the entry's weighted words best."""
    best, line = 0.0, None
    for ln, lw in span.lines_of(text) if span is not None else _lines_of(text):
        s = math.fsum(map(weight.__getitem__, lw & weight.keys()))
        if s > best:
            best, line = s, ln.strip()[:240]
    return line


def _lines_of(text: str) -> list[tuple[str, set[str]]]:
    return [(ln, words(ln)) for ln in text[:200_000].splitlines()]


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
