"""Codex CLI: free-form markdown (``##`` or bold pseudo-headings) after the host's handoff prefix."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic

PREFIXES = ("Another language model started to solve this problem",)


def looks_like(text: str) -> bool:
    return text.lstrip().startswith(PREFIXES)


def parse(text: str) -> ParsedSummary:
    return generic.parse(text, "codex", PREFIXES, one_line=True)
