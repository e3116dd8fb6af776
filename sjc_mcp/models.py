"""Data types shared by every stage: entries, evidence, judge requests and results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from sjc_mcp._record import Field, Record
from sjc_mcp.text import strip_marker

if TYPE_CHECKING:
    from sjc_mcp._evidence_item import EvidenceItem  # noqa: F401

SourceKind = Literal["tool_output", "user_message", "previous_summary"]
Decision = Literal["keep", "prune", "unjudged"]


class Section(Record):
    """A heading (or XML section tag) of a summary: structure, never removed."""

    title: str
    start: int = Field(description="offset of the heading line in the summary")
    end: int


class Entry(Record):
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


class ParsedSummary(Record):
    """A summary split into sections and entries; ``render`` deletes entries and nothing else."""

    text: str
    host: str
    sections: list[Section]
    entries: list[Entry]
    unstructured: str | None = Field(
        default=None, description="why the splitter found nothing to judge (no structure, not text); then no entries"
    )

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


class Source(Record):
    """One environment output a summary may draw on."""

    kind: SourceKind
    content: str
    name: str | None = Field(default=None, description="tool name for tool outputs")
    call_id: str | None = None
    call: str | None = Field(default=None, description="the tool call this output answers")
    is_error: bool = False


class Origin(Record):
    kind: SourceKind
    name: str | None = None
    call_id: str | None = None

    def label(self) -> str:
        if self.kind == "tool_output":
            bits = [b for b in (self.name, self.call_id) if b]
            return "tool_output" + (f" ({', '.join(bits)})" if bits else "")
        return self.kind


class Chunk(Record):
    """A piece of one source of at most ``chunk_chars`` characters: what a judge reads."""

    id: int
    source: int
    origin: Origin
    text: str
    start: int = Field(description="offset of the chunk in its source's content")


class JudgeEntry(Record):
    id: int
    section: str
    text: str
    evidence: list[int] = Field(default_factory=list, description="ids of retrieved chunks, best first")


class Turn(Record):
    role: str
    content: str
    name: str | None = None


class JudgeRequest(Record):
    """Everything a judge may see for one summary: nothing more is given to it."""

    task: str | None = None
    previous_summary: str | None = None
    retained: list[Turn] = Field(default_factory=list)
    evidence: list[Chunk] = Field(default_factory=list, description="pooled, deduplicated chunks")
    entries: list[JudgeEntry]
    assistant_prose: list[str] = Field(
        default_factory=list,
        description="the agent's own prose from the span: never a source, but tells plans from facts",
    )
    sources: list[Source] = Field(
        default_factory=list,
        description="every source the evidence was cut from, in span order (a chunk's ``source`` indexes it)",
    )


class Judgment(Record):
    entry_id: int
    score: float | None = None
    quote: str | None = None
    origin: Origin | None = None
    contradicted: bool = False
    reason: str | None = Field(default=None, description="why: the quote and where it came from, or why none")


class JudgeOutput(Record):
    judgments: list[Judgment]
    name: str
    model: str
    errors: list[str] = Field(default_factory=list)
    redactions: int = Field(0, description="secrets replaced before anything left the machine")


class EntryResult(Record):
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


class JudgeInfo(Record):
    name: str
    model: str


class JudgeResult(Record):
    entries: list[EntryResult]
    threshold: float
    margin: float
    judge: JudgeInfo
    host: str
    mode: str = "enforce"
    disabled: bool = False
    errors: list[str] = Field(default_factory=list)
    redactions: int = 0
    duration_ms: float = 0.0
    warnings: list[str] = Field(
        default_factory=list, description="what the caller should know: nothing judged, the guard, an incomplete span"
    )
    unstructured: bool = Field(False, description="the splitter found no entries: nothing judged, summary untouched")
    incomplete_span: bool = Field(False, description="the span starts mid-session: unsourced entries left unjudged")
    guarded: bool = Field(False, description="pruning would remove more than max_prune_share: kept whole")


class PruneResult(JudgeResult):
    pruned_summary: str
    removed: int
    kept: int
    chars_before: int
    chars_after: int
    would_leave: str | None = Field(None, exclude=True, description="what pruning leaves, even in shadow mode")


_EVIDENCE_KEYS = frozenset({"kind", "name", "content", "call"})
_EVIDENCE_KINDS = ("tool_output", "user_message")


def evidence_source(obj: Any) -> Source:
    """An evidence item as a caller hands it over (``{kind, name, content, call}``) as a ``Source``.

    The usual item (strings where strings belong, no other key) is read here; anything else is left to
    ``EvidenceItem``, the pydantic model the MCP tools declare, so it is refused with pydantic's message
    (or taken as pydantic would take it)."""
    if type(obj) is dict and obj.keys() <= _EVIDENCE_KEYS and type(obj.get("content")) is str:
        kind, name, call = obj.get("kind", "tool_output"), obj.get("name"), obj.get("call")
        if (
            type(kind) is str
            and kind in _EVIDENCE_KINDS
            and (name is None or type(name) is str)
            and (call is None or type(call) is str)
        ):
            return Source(kind=kind, content=obj["content"], name=name, call=call)
    from sjc_mcp._evidence_item import EvidenceItem

    return EvidenceItem.model_validate(obj).to_source()


def __getattr__(name: str) -> Any:
    if name == "EvidenceItem":  # a pydantic model (the MCP tools' input schema): imported when asked for
        from sjc_mcp._evidence_item import EvidenceItem

        return EvidenceItem
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
