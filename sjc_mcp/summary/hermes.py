"""Hermes Agent: markdown sections behind a "[CONTEXT COMPACTION — REFERENCE ONLY]" notice."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic

PREFIXES = ("[CONTEXT COMPACTION",)


def looks_like(text: str) -> bool:
    return text.lstrip().startswith(PREFIXES)


def parse(text: str) -> ParsedSummary:
    return generic.parse(text, "hermes", PREFIXES)
