"""Hermes Agent: markdown sections behind a "[CONTEXT COMPACTION — REFERENCE ONLY]" notice."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic

PREFIXES = ("[CONTEXT COMPACTION",)
NAMES = (
    "Goal",
    "Constraints and Preferences",
    "Completed Actions",
    "Active State",
    "Key Decisions",
    "Historical Pending User Asks",
    "Pending User Asks",
    "Relevant Files",
    "Historical Remaining Work",
    "Remaining Work",
    "Critical Context",
)


def looks_like(text: str) -> bool:
    return text.lstrip().startswith(PREFIXES) or generic.count_names(text, NAMES) >= 3


def parse(text: str) -> ParsedSummary:
    return generic.parse(text, "hermes", PREFIXES, names=NAMES)
