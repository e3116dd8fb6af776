"""OpenClaw safeguard summaries: five fixed ``##`` sections (plus appended ones). Its quality check
rejects a summary with a missing heading; headings are structure, so pruning never removes one."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic

NAMES = ("Decisions", "Open TODOs", "Constraints/Rules", "Pending user asks", "Exact identifiers")


def looks_like(text: str) -> bool:
    return generic.count_names(text, NAMES) >= 3


def parse(text: str) -> ParsedSummary:
    return generic.parse(text, "openclaw", names=NAMES)
