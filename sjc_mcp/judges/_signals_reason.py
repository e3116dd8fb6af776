"""Reasons a person can check in one look: for a supported entry, the quote and where it came from
(the tool and its command or file, the turn); for an unsupported one, why (no source, the agent's
own words, a contradicted value), with the nearest evidence labelled as not supporting it."""

from __future__ import annotations

from dataclasses import dataclass

from sjc_mcp.judges._signals_actions import Call, call_input, describe_input
from sjc_mcp.models import Chunk, Source


class Places:
    """Where each source of a request sits: ``Bash `git push` (turn 7)``, ``user message (turn 3)``."""

    def __init__(self, sources: list[Source]) -> None:
        self.sources = sources
        self.turns: list[int] = []
        turn = 0
        for s in sources:
            if s.kind == "user_message":
                turn += 1
            self.turns.append(max(1, turn))
        self.has_turns = turn > 0

    def of(self, index: int | None) -> str:
        if index is None or not 0 <= index < len(self.sources):
            return "evidence"
        s = self.sources[index]
        turn = f", turn {self.turns[index]}" if self.has_turns else f", output {index + 1}"
        if s.kind == "previous_summary":
            return "previous summary"
        if s.kind == "user_message":
            return f"user message{turn}"
        name, data = call_input(s.call)
        tool = s.name or name or "tool output"
        what = describe_input(name, data, s.call or "") if s.call else ""
        return f"{tool} `{_short(what, 70)}`{turn}" if what else f"{tool}{turn}"


def _short(text: str, n: int) -> str:
    """At most ``n`` characters: a path keeps its end (the file name), anything else its start."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    if "/" in text and " " not in text:
        return "…" + text[-(n - 1) :]
    return text[: n - 1] + "…"


def quoted(text: str | None, n: int = 160) -> str:
    return f'"{_short(text or "", n)}"'


@dataclass(slots=True)
class Finding:
    """What the signals found for one entry, enough to say why it was scored as it was."""

    score: float
    quote: str | None = None
    place: str | None = None  # where the quote came from
    conflict: tuple[str, str, str] | None = None  # (entry's value, evidence's value, line)
    done: Call | None = None  # the successful call that backs a completed action
    done_place: str = ""  # where that call sits
    unbacked: list[str] | None = None  # kinds of action claimed with no call of that kind
    user: bool = False  # the best source is a user message
    prose_only: str | None = None  # the agent's own words that say it, when no source does
    tally: list[str] | None = None  # values only the agent's prose states
    plan: bool = False  # worded as a plan or to-do
    chunk: Chunk | None = None  # the evidence chunk the quote is from
    source: int | None = None  # the source the quote is from, when not a chunk
    # grounds to delete it a person can check (``_signals_grounds``)
    unmade: str | None = None  # an action line no call of the span backs (``_signals_tool_claims``): why
    tally_prose: list[str] | None = None  # counts no source states and the agent's own words do
    missing: list[str] | None = None  # names it gives that no source of the span holds
    missing_in_prose: bool = False  # … and that the agent's own words give
    unbacked_claim: list[str] | None = None  # kinds of action it claims done that no call of the span was
    todo: bool = False  # a to-do
    rule: bool = False  # a rule set for the work ("Never …", "Goal: …" among the constraints)
    asked: bool = False  # … that a user message may ask for (or the previous summary carried over)
    follows: str | None = None  # … that a failure line of an output calls for
    user_line: tuple[str, str] | None = None  # … the user's line nearest to it, and where it is


def grounds(f: Finding) -> str | None:
    """Why the entry may be deleted, in words its reader can check; None when there is no such reason."""
    if f.conflict:
        said, found, line = f.conflict
        return f"contradicted: {f.place or 'evidence'} says {found}, entry says {said}: {quoted(line)}"
    if f.unmade:
        return f"no source: {f.unmade}"
    if f.missing:
        shown = ", ".join(f"`{_short(n, 60)}`" for n in f.missing[:3])
        where = "only the agent's own words give it" if f.missing_in_prose else "nor do the agent's own words"
        return f"no source: no tool output, user message or previous summary of the span gives {shown} ({where})"
    if f.tally_prose:
        return f"no source: only the agent's own words state {', '.join(f.tally_prose[:3])}, no output does"
    if f.unbacked_claim:
        return f"no source: it says a {'/'.join(f.unbacked_claim)} was done, and no such call ran in the span"
    if f.todo and not f.asked and not f.follows:
        return "no source: a to-do that no user message asks for and no failing output calls for"
    if f.rule and not f.asked:
        return "no source: a rule that no user message or previous summary sets"
    return None


def reason(f: Finding) -> str:
    """One line: what supports the entry, or why nothing does."""
    if f.conflict or f.unmade:
        return str(grounds(f))
    if f.score >= 0.5:
        if f.done is not None:
            return f"done: {f.done_place or f.done.tool} succeeded: {quoted(f.done.line)}"
        if f.quote:
            return f"{f.place or 'evidence'}: {quoted(f.quote)}"
        return "supported: its words and names occur in the evidence"
    why = grounds(f)
    plain = not (f.conflict or f.unmade or f.missing or f.tally_prose or f.unbacked_claim)
    if why is not None and (f.todo or f.rule) and plain:
        if f.user_line:  # what a reader checks a to-do against: the user's own words
            line, place = f.user_line
            return f"{why}; the nearest a user message comes: {quoted(line)} ({place})"
        return f"{why}; no user message shares its words"
    if why is None:  # no reason to delete it a person could check: it is kept (doubtful)
        why = "nothing in the span says it, but nothing it names is missing and nothing contradicts it"
        if f.todo and f.follows:
            why = f"a to-do a failing output may call for ({quoted(f.follows, 100)})"
        elif f.todo and f.asked:
            why = "a to-do a user message may ask for (or the previous summary carried over)"
        elif f.rule and f.asked:
            why = "a rule a user message or the previous summary may set"
        elif f.tally:
            why = f"no output states {', '.join(f.tally[:3])}, but it may count what the outputs list"
        elif f.prose_only:
            why = f"it says in other words what the agent said ({quoted(f.prose_only, 80)})"
    if f.quote:
        return f"{why}; nearest, does not support: {quoted(f.quote)} ({f.place or 'evidence'})"
    return f"{why}; nothing in the evidence shares its words"
