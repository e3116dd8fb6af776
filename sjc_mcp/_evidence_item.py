"""``EvidenceItem``: evidence as a caller hands it over, a pydantic model because the MCP tools declare it
in their input schema. Imported only where that schema or its validation is needed (the MCP server, an
evidence item ``models.evidence_source`` does not take as it is)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sjc_mcp.models import Source


class EvidenceItem(BaseModel):
    """Evidence as a caller hands it over (CLI, MCP): one tool output or user message."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tool_output", "user_message"] = "tool_output"
    name: str | None = None
    content: str
    call: str | None = Field(default=None, description="the tool call that produced this output")

    def to_source(self) -> Source:
        return Source(kind=self.kind, content=self.content, name=self.name, call=self.call)
