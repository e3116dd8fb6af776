"""Codex CLI: free-form markdown (``##`` or bold pseudo-headings) after the host's handoff prefix.

The compaction prompt asks for progress and decisions, context and constraints, remaining next steps
and critical data; those names are headings in any markup, other headings as markdown makes them."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic

PREFIXES = ("Another language model started to solve this problem",)
NAMES = (
    "Progress",
    "Progress and decisions",
    "Decisions",
    "Key decisions",
    "Context",
    "Context and constraints",
    "Constraints",
    "Current state",
    "Errors and fixes",
    "Remaining work",
    "Remaining next steps",
    "Next steps",
    "Critical data",
    "Critical context",
)


def looks_like(text: str) -> bool:
    return text.lstrip().startswith(PREFIXES)


def parse(text: str) -> ParsedSummary:
    return generic.parse(text, "codex", PREFIXES, one_line=True, names=NAMES)
