"""The judge protocol: one request in (every entry of one summary), one probability or None out per
entry. A backend is one module with a class that satisfies ``Judge`` and a factory ``make(config)``;
``judges._BACKENDS`` maps config names to those modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from sjc_mcp.models import JudgeOutput, JudgeRequest


@runtime_checkable
class Judge(Protocol):
    name: str
    model: str

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        """Score every entry of ``request``: a probability that it has a source, or None."""
        ...


@runtime_checkable
class RelevanceJudge(Protocol):
    """A judge that can also say whether each tool result is still needed (relevance pruning)."""

    name: str
    model: str

    def relevance(self, request: Any) -> JudgeOutput: ...
