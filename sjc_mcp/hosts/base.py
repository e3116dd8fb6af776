"""The one model every host reader produces: ordered items and compaction boundaries."""

from __future__ import annotations

from typing import Literal

from sjc_mcp._record import Field, Record
from sjc_mcp.models import Source, Turn

Role = Literal["user", "assistant", "tool_call", "tool_output"]

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


def choose(path: object, count: int, index: int | None) -> int:
    """Compaction ``index`` of ``count`` (newest when None; negative counts from the end), or a clear error."""
    from sjc_mcp.errors import TranscriptError

    if count == 0:
        raise TranscriptError(f"{path}: no compaction in this transcript")
    i = count - 1 if index is None else index
    if not -count <= i < count:
        raise TranscriptError(f"{path}: boundary {index} does not exist; it has {count} (0 to {count - 1})")
    return i % count


class Item(Record):
    role: Role
    content: str
    name: str | None = Field(default=None, description="tool name for tool calls and outputs")
    call_id: str | None = None
    is_error: bool = False


class Boundary(Record):
    """Compaction ``index`` of a transcript: the span it compacted and the summary it produced."""

    host: str
    index: int
    summary: str
    previous_summary: str | None = None
    span: list[Item] = Field(default_factory=list)
    retained: list[Item] = Field(default_factory=list)
    session_id: str | None = None
    boundary_id: str | None = Field(default=None, description="a stable id of this compaction in its transcript")
    task: str | None = None
    note: str | None = Field(default=None, description="why there is nothing to judge, when there is not")
    incomplete: str | None = Field(
        default=None,
        description="why the span visibly starts mid-session (a parent record not in the file), when it does",
    )

    def sources(self) -> list[Source]:
        """Tool outputs (each read with the call it answers) and user messages of the span."""
        calls = {it.call_id: it for it in self.span if it.role == "tool_call" and it.call_id}
        out: list[Source] = []
        for it in [*self.span, *self.retained]:
            if it.role == "tool_output":
                call = calls.get(it.call_id) if it.call_id else None
                if (it.name or (call.name if call else None)) in PLANNING_TOOLS:
                    continue
                out.append(
                    Source(
                        kind="tool_output",
                        content=it.content,
                        name=it.name or (call.name if call else None),
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
