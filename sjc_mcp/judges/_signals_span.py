"""The work one span's judging shares across its entries: each chunk's lines and words, the calls, the user
messages, the prose, and the lookups worked out once per request (a name in the evidence, a value stated
later, a text's lines)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain

from sjc_mcp.judges import _signals_grounds as grounds
from sjc_mcp.judges._signals_actions import Call, calls, is_shell_tool
from sjc_mcp.judges._signals_reason import Places
from sjc_mcp.judges._signals_text import NOT_WORD3, WORD3, found, word_runs, words
from sjc_mcp.judges._signals_values import Probe
from sjc_mcp.models import Chunk, JudgeRequest, Source
from sjc_mcp.text import safe_lower, tokens

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
        """The failure lines of the span's command outputs and failed calls (read at the first to-do that
        asks). Every command's output is read, not only a check's: a checker the judge has no name for
        (zizmor, latexmk) reports in the same forms; a file's text is not read (code says "error")."""
        if self._failures is None:  # a linter's output (its every line a finding) is known by its command
            linters = {c.source for c in self.calls if "lint" in c.kinds}
            # the newest outputs, up to MAX_FAILURE_CHARS in all: what is pending follows from the last ones,
            # and a span of many megabytes of command output is read in bounded time
            outputs: list[tuple[str, bool]] = []
            budget = grounds.MAX_FAILURE_CHARS
            for i in range(len(self.sources) - 1, -1, -1):
                s = self.sources[i]
                if s.kind == "tool_output" and (s.is_error or is_shell_tool(s.name)):
                    outputs.append((s.content, i in linters))
                    budget -= min(len(s.content), grounds.MAX_OUTPUT_CHARS)
                    if budget <= 0:
                        break
            self._failures = grounds.Failures(reversed(outputs))
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
            got = self._line_words[text] = lines_of(text)
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


def lines_of(text: str) -> list[tuple[str, set[str]]]:
    return [(ln, words(ln)) for ln in text[:200_000].splitlines()]
