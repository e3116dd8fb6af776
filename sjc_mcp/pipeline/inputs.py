"""What a caller hands the pipeline, checked: evidence in any of its accepted shapes made ``Source``s, and
the size limits of the summary and the evidence (one-line ``InputError``s)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sjc_mcp.errors import InputError
from sjc_mcp.models import EvidenceItem, Source, evidence_source

MAX_SUMMARY_BYTES = 1_000_000
MAX_EVIDENCE_BYTES = 20_000_000

EvidenceLike = Source | EvidenceItem | dict[str, Any] | str
MID_SESSION = "the span starts mid-session"


def to_sources(evidence: Iterable[EvidenceLike]) -> list[Source]:
    """Normalise caller evidence: ``Source``, ``EvidenceItem``, ``{kind, name, content}`` or a string."""
    out: list[Source] = []
    for i, item in enumerate(evidence):
        if isinstance(item, Source):
            out.append(item)
        elif isinstance(item, EvidenceItem):
            out.append(item.to_source())
        elif isinstance(item, str):
            out.append(Source(kind="tool_output", content=item))
        elif isinstance(item, dict):
            try:
                out.append(evidence_source(item))
            except InputError as exc:
                raise InputError(f"evidence item {i}: {exc}") from None
        else:
            raise InputError(f"evidence item {i}: expected an object with 'content', got {type(item).__name__}")
    return out


def check_sizes(summary: str, sources: Sequence[Source]) -> None:
    if not isinstance(summary, str):
        raise InputError("summary must be text")
    if len(summary.encode("utf-8", "surrogatepass")) > MAX_SUMMARY_BYTES:
        raise InputError(f"summary is larger than {MAX_SUMMARY_BYTES:,} bytes")
    total = sum(len(s.content) + len(s.call or "") for s in sources)
    if total > MAX_EVIDENCE_BYTES:
        raise InputError(f"evidence is larger than {MAX_EVIDENCE_BYTES:,} bytes")


def check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"threshold must be between 0 and 1, got {threshold}")
