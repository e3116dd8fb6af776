"""Gemini CLI: an XML ``<state_snapshot>`` whose child tags are the sections, items as ``-`` lines.

The same section names written as markdown (``## key_knowledge``, ``**Key Knowledge:**``) are
headings too."""

from __future__ import annotations

import re

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import Builder
from sjc_mcp.summary._headings import Headings

_OPEN = re.compile(r"^[ \t]*<([A-Za-z_][\w-]*)>[ \t]*$")
_CLOSE = re.compile(r"^[ \t]*</([A-Za-z_][\w-]*)>[ \t]*$")
_INLINE = re.compile(r"^([ \t]*<([A-Za-z_][\w-]*)>)(.*\S.*?)</\2>[ \t]*$")
ROOT = "state_snapshot"
NAMES = (
    "overall_goal",
    "active_constraints",
    "key_knowledge",
    "artifact_trail",
    "file_system_state",
    "recent_actions",
    "current_plan",
    "task_state",
)


def looks_like(text: str) -> bool:
    return "<state_snapshot>" in text


def _structure(line: str) -> bool:
    return bool(_CLOSE.match(line)) or line.strip() in (f"<{ROOT}>", f"</{ROOT}>")


def parse(text: str) -> ParsedSummary:
    heads = Headings(NAMES)

    def heading(line: str) -> str | None:
        m = _OPEN.match(line)
        if m:
            return m.group(1) if m.group(1) != ROOT else None
        return heads(line)

    def inline(line: str) -> tuple[str, int, int] | None:
        m = _INLINE.match(line)
        if m:
            return None if m.group(2) == ROOT else (m.group(2), m.end(1), m.end(3))
        return heads.inline(line)

    b = Builder(text, "gemini")
    b.region(0, len(text), "", heading=heading, structure=_structure, inline=inline)
    return b.build()
