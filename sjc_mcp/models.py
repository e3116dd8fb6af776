"""The data types every stage shares: summaries and their entries, a transcript's items and boundaries,
evidence, judge requests and results. Plain ``dataclasses``: built by the package's own code from values it
has already checked; what comes from outside (the config file, evidence items, case files, a judge's
answer) is validated where it enters (``validate``)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from sjc_mcp.text import strip_marker

SourceKind = Literal["tool_output", "user_message", "previous_summary"]
Decision = Literal["keep", "prune", "unjudged"]
Role = Literal["user", "assistant", "tool_call", "tool_output"]
# how the reason of an entry starts when it scored below the cut but the judge gave no grounds to delete it
# that a person could check (``Judgment.grounded`` False): kept, and shown as doubtful, not as supported
DOUBTFUL = "doubtful, kept"

# Tools whose input is the agent's own plan or to-do list and whose output only echoes it: the agent's
# words, never a source (a plan the agent wrote down is still a plan).
PLANNING_TOOLS = frozenset(
    {
        "TodoWrite",
        "TaskCreate",
        "TaskUpdate",
        "TaskList",
        "ExitPlanMode",
        "EnterPlanMode",
        "update_plan",
        "write_todos",
        "todo_write",
    }
)


@dataclass(slots=True, kw_only=True)
class Section:
    """A heading (or XML section tag) of a summary: structure, never removed."""

    title: str
    start: int  # offset of the heading line in the summary
    end: int


@dataclass(slots=True, kw_only=True)
class Entry:
    """One judgeable unit of a summary: a bullet, a numbered item or a prose paragraph.

    ``start``/``end`` delimit exactly the characters removed when the entry is pruned: its own
    lines, its code fence, and the blank lines that separate it from the next entry of its section.
    """

    id: int
    section: str
    text: str
    start: int
    end: int
    parent: int | None = None
    kind: Literal["bullet", "paragraph", "code"] = "bullet"

    @property
    def first_line(self) -> str:
        """The entry's first line without indentation or list marker (how labels name entries)."""
        return strip_marker(self.text.split("\n", 1)[0])


@dataclass(slots=True, kw_only=True)
class ParsedSummary:
    """A summary split into sections and entries; ``render`` deletes entries and nothing else."""

    text: str
    host: str
    sections: list[Section]
    entries: list[Entry]
    unstructured: str | None = None  # why the splitter found nothing to judge; then no entries

    def render(self, remove: set[int] | frozenset[int] = frozenset()) -> str:
        if not remove:
            return self.text
        out: list[str] = []
        pos = 0
        for e in self.entries:
            if e.id in remove:
                out.append(self.text[pos : e.start])
                pos = e.end
        out.append(self.text[pos:])
        return "".join(out)


@dataclass(slots=True, kw_only=True)
class Source:
    """One environment output a summary may draw on."""

    kind: SourceKind
    content: str
    name: str | None = None  # tool name for tool outputs
    call_id: str | None = None
    call: str | None = None  # the tool call this output answers
    is_error: bool = False


@dataclass(slots=True, kw_only=True)
class Origin:
    kind: SourceKind
    name: str | None = None
    call_id: str | None = None

    def label(self) -> str:
        if self.kind == "tool_output":
            bits = [b for b in (self.name, self.call_id) if b]
            return "tool_output" + (f" ({', '.join(bits)})" if bits else "")
        return self.kind


@dataclass(slots=True, kw_only=True)
class Chunk:
    """A piece of one source of at most ``chunk_chars`` characters: what a judge reads."""

    id: int
    source: int
    origin: Origin
    text: str
    start: int  # offset of the chunk in its source's content


@dataclass(slots=True, kw_only=True)
class JudgeEntry:
    id: int
    section: str
    text: str
    evidence: list[int] = field(default_factory=list)  # ids of retrieved chunks, best first


@dataclass(slots=True, kw_only=True)
class Turn:
    role: str
    content: str
    name: str | None = None


@dataclass(slots=True, kw_only=True)
class JudgeRequest:
    """Everything a judge may see for one summary: nothing more is given to it."""

    entries: list[JudgeEntry]
    task: str | None = None
    previous_summary: str | None = None
    retained: list[Turn] = field(default_factory=list)
    evidence: list[Chunk] = field(default_factory=list)  # pooled, deduplicated chunks
    # the agent's own prose from the span: never a source, but tells plans from facts
    assistant_prose: list[str] = field(default_factory=list)
    # every source the evidence was cut from, in span order (a chunk's ``source`` indexes it)
    sources: list[Source] = field(default_factory=list)
    # every word of those sources (the evidence index's vocabulary: lower-cased [a-z0-9] runs of two or more,
    # stopwords out): is a name the entry gives anywhere in the span? Empty: not worked out
    vocabulary: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Judgment:
    entry_id: int
    score: float | None = None
    quote: str | None = None
    origin: Origin | None = None
    contradicted: bool = False
    reason: str | None = None  # why: the quote and where it came from, or why none
    # does ``reason`` give grounds to delete the entry a person could check (what was looked for and not
    # found, or another value of the same thing the environment showed)? False: the judge has none, and
    # the entry is kept as doubtful whatever its score; None: the judge does not say (a score-only judge)
    grounded: bool | None = None


@dataclass(slots=True, kw_only=True)
class JudgeOutput:
    judgments: list[Judgment]
    name: str
    model: str
    errors: list[str] = field(default_factory=list)
    redactions: int = 0  # secrets replaced before anything left the machine


@dataclass(slots=True, kw_only=True)
class EntryResult:
    id: int
    section: str
    text: str
    score: float | None
    decision: Decision
    near_threshold: bool = False
    contradicted: bool = False
    quote: str | None = None
    origin: str | None = None
    reason: str | None = None


@dataclass(slots=True, kw_only=True)
class JudgeInfo:
    name: str
    model: str


@dataclass(slots=True, kw_only=True)
class JudgeResult:
    entries: list[EntryResult]
    threshold: float
    margin: float
    judge: JudgeInfo
    host: str
    mode: str = "enforce"
    disabled: bool = False
    errors: list[str] = field(default_factory=list)
    redactions: int = 0
    duration_ms: float = 0.0
    # what the caller should know: nothing judged, the guard, an incomplete span
    warnings: list[str] = field(default_factory=list)
    unstructured: bool = False  # the splitter found no entries: nothing judged, summary untouched
    incomplete_span: bool = False  # the span starts mid-session: unsourced entries left unjudged
    guarded: bool = False  # pruning would remove more than max_prune_share: kept whole
    note: str | None = None  # why there was nothing to judge (an encrypted summary), when there was not


@dataclass(slots=True, kw_only=True)
class PruneResult(JudgeResult):
    pruned_summary: str
    removed: int
    kept: int
    chars_before: int
    chars_after: int
    would_leave: str | None = None  # what pruning leaves, even in shadow mode (not part of the answer)


@dataclass(slots=True, kw_only=True)
class Item:
    """One thing that happened in a session, in order: a message, a tool call or a tool's output."""

    role: Role
    content: str
    name: str | None = None  # tool name for tool calls and outputs
    call_id: str | None = None
    is_error: bool = False


@dataclass(slots=True, kw_only=True)
class Boundary:
    """Compaction ``index`` of a transcript: the span it compacted and the summary it produced."""

    host: str
    index: int
    summary: str
    previous_summary: str | None = None
    span: list[Item] = field(default_factory=list)
    retained: list[Item] = field(default_factory=list)
    session_id: str | None = None
    boundary_id: str | None = None  # a stable id of this compaction in its transcript
    task: str | None = None
    note: str | None = None  # why there is nothing to judge, when there is not
    incomplete: str | None = None  # why the span visibly starts mid-session, when it does
    # the session as a person knows it, where the transcript says: its working folder, the first thing the
    # user asked, when it started (ISO 8601)
    project: str | None = None
    first_prompt: str | None = None
    started: str | None = None

    def sources(self) -> list[Source]:
        """Tool outputs (each read with the call it answers) and user messages of the span."""
        calls = {it.call_id: it for it in self.span if it.role == "tool_call" and it.call_id}
        out: list[Source] = []
        for it in [*self.span, *self.retained]:
            if it.role == "tool_output":
                call = calls.get(it.call_id) if it.call_id else None
                name = it.name or (call.name if call else None)
                if name in PLANNING_TOOLS:
                    continue
                out.append(
                    Source(
                        kind="tool_output",
                        content=it.content,
                        name=name,
                        call_id=it.call_id,
                        call=f"{call.name}: {call.content}" if call else None,
                        is_error=it.is_error,
                    )
                )
            elif it.role == "user" and it.content.strip():
                out.append(Source(kind="user_message", content=it.content))
        return out

    def assistant_prose(self) -> list[str]:
        """The agent's own words in the span: its messages and what it wrote into planning tools."""
        return [
            it.content
            for it in self.span
            if (it.role == "assistant" or (it.role == "tool_call" and it.name in PLANNING_TOOLS)) and it.content.strip()
        ]

    def retained_turns(self) -> list[Turn]:
        return [Turn(role=it.role, content=it.content, name=it.name) for it in self.retained]


def as_dict(record: Any, *, exclude: frozenset[str] = frozenset(), exclude_none: bool = False) -> dict[str, Any]:
    """A record's fields, one level deep (nested records as they are), leaving out ``exclude``."""
    out = {}
    for f in fields(record):
        if f.name in exclude:
            continue
        v = getattr(record, f.name)
        if exclude_none and v is None:
            continue
        out[f.name] = v
    return out


@dataclass(slots=True, kw_only=True)
class EvidenceItem:
    """Evidence as a caller hands it over (library, CLI, MCP tools): one tool output or user message."""

    content: str
    kind: Literal["tool_output", "user_message"] = "tool_output"
    name: str | None = None  # the tool's name
    call: str | None = None  # the tool call that produced this output

    # how the MCP SDK (pydantic) reads this type in a tool's input schema: no keys but these
    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 - read by pydantic, never changed

    def to_source(self) -> Source:
        return Source(kind=self.kind, content=self.content, name=self.name, call=self.call)


_EVIDENCE_KEYS = frozenset({"kind", "name", "content", "call"})
_EVIDENCE_KINDS = ("tool_output", "user_message")


def evidence_source(obj: Any) -> Source:
    """An evidence item as a caller hands it over (``{kind, name, content, call}``) as a ``Source``;
    anything but such an object is an ``InputError`` saying what is wrong (``validate``)."""
    if type(obj) is dict and obj.keys() <= _EVIDENCE_KEYS and type(obj.get("content")) is str:
        kind, name, call = obj.get("kind", "tool_output"), obj.get("name"), obj.get("call")
        if (
            type(kind) is str
            and kind in _EVIDENCE_KINDS
            and (name is None or type(name) is str)
            and (call is None or type(call) is str)
        ):
            return Source(kind=kind, content=obj["content"], name=name, call=call)  # type: ignore[arg-type]
    from sjc_mcp.validate import convert

    return convert(obj, EvidenceItem).to_source()
