"""What the tools take and give on the wire: their parameters and structured answers.

The SDK builds the tools' input and output schemas from these annotations with pydantic, which reads the
package's own dataclasses as they are: an entry is ``models.EntryResult``, the judge ``models.JudgeInfo``, an
evidence item ``models.EvidenceItem``, a tool result's verdict ``tools.relevance.ToolVerdict`` and a message
of the pruned history ``models.Item``. What is defined here is only the answer around them: the result's
fields a caller is given (a ``JudgeResult`` also carries what only the log and the CLI use), as
``TypedDict``s the SDK publishes as each tool's output schema.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal, TypedDict

from pydantic import Field

from sjc_mcp.models import EntryResult, EvidenceItem, Item, JudgeInfo, JudgeResult, PruneResult
from sjc_mcp.tools.relevance import ToolsResult, ToolVerdict

# --- parameters -----------------------------------------------------------------------------------------

Summary = Annotated[
    str | None,
    Field(description="the candidate compaction summary, exactly as the host wrote it (or give transcript_path)"),
]
TranscriptPath = Annotated[
    str | None,
    Field(
        description="a host transcript (Claude Code, Codex, Gemini CLI or generic JSONL) under the allowed roots: "
        "its compaction gives the summary, the evidence and the previous summary"
    ),
]
BoundaryN = Annotated[int | None, Field(description="which compaction of the transcript (0 = first; default newest)")]
Evidence = Annotated[
    list[EvidenceItem],
    Field(description="the environment outputs of the compacted span: tool outputs and user messages"),
]
Previous = Annotated[str | None, Field(description="the previous committed summary, a source too")]
Task = Annotated[str | None, Field(description="the fixed task prompt the host keeps verbatim (not a source)")]
Host = Annotated[
    str | None,
    Field(description="force a format: claude-code, codex, gemini, openclaw, hermes, generic (default: detect)"),
]
Threshold = Annotated[float | None, Field(ge=0.0, le=1.0, description="prune below this score (default 0.5)")]


@dataclass
class MessageIn:
    """One message of the history a caller sends (``tool`` is taken for ``tool_output``)."""

    role: Literal["user", "assistant", "tool_call", "tool_output", "tool"]
    content: str
    name: str | None = None
    call_id: str | None = None
    is_error: bool = False


Messages = Annotated[
    list[MessageIn],
    Field(
        description="the history: user, assistant, tool_call and tool_output "
        "messages, oldest first (tool outputs name their call_id)"
    ),
]


def message_dicts(messages: list[MessageIn]) -> list[dict[str, Any]]:
    """The messages as ``tools.relevance.messages_from_json`` reads them."""
    return [asdict(m) for m in messages]


# --- answers --------------------------------------------------------------------------------------------


class JudgeAnswer(TypedDict):
    entries: list[EntryResult]
    threshold: float
    judge: JudgeInfo
    mode: str
    errors: list[str]
    warnings: Annotated[list[str], Field(description="what the caller should know: nothing lost, why")]
    unstructured: Annotated[
        bool, Field(description="no entries found: nothing judged, the summary returned as written")
    ]
    incomplete_span: Annotated[bool, Field(description="the span starts mid-session: unsourced entries left unjudged")]
    guarded: Annotated[bool, Field(description="pruning would pass max_prune_share: the summary kept whole")]


class PruneAnswer(JudgeAnswer):
    pruned_summary: str
    removed: int
    kept: int
    chars_before: int
    chars_after: int


class ToolsAnswer(TypedDict):
    results: list[ToolVerdict]
    chars_before: int
    chars_after: int
    status: Annotated[str, Field(description='"judged", "not worth a call" (saving under the floor) or "disabled"')]
    judge: dict[str, str]
    errors: list[str]


class ToolsPruneAnswer(ToolsAnswer):
    messages: Annotated[list[Item], Field(description="the history with the decisions applied")]


def judge_answer(r: JudgeResult) -> JudgeAnswer:
    return {
        "entries": r.entries,
        "threshold": r.threshold,
        "judge": r.judge,
        "mode": r.mode,
        "errors": r.errors,
        "warnings": r.warnings,
        "unstructured": r.unstructured,
        "incomplete_span": r.incomplete_span,
        "guarded": r.guarded,
    }


def prune_answer(r: PruneResult) -> PruneAnswer:
    return {
        **judge_answer(r),
        "pruned_summary": r.pruned_summary,
        "removed": r.removed,
        "kept": r.kept,
        "chars_before": r.chars_before,
        "chars_after": r.chars_after,
    }


def tools_answer(r: ToolsResult) -> ToolsAnswer:
    return {
        "results": r.results,
        "chars_before": r.chars_before,
        "chars_after": r.chars_after,
        "status": r.status,
        "judge": r.judge,
        "errors": r.errors,
    }


def tools_prune_answer(r: ToolsResult) -> ToolsPruneAnswer:
    return {**tools_answer(r), "messages": r.messages}
