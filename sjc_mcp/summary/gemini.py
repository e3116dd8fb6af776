"""Gemini CLI: an XML ``<state_snapshot>`` whose child tags are the sections, items as ``-`` lines."""

from __future__ import annotations

import re

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import Builder

_OPEN = re.compile(r"^[ \t]*<([A-Za-z_][\w-]*)>[ \t]*$")
_CLOSE = re.compile(r"^[ \t]*</([A-Za-z_][\w-]*)>[ \t]*$")
_INLINE = re.compile(r"^([ \t]*<([A-Za-z_][\w-]*)>)(.*\S.*?)</\2>[ \t]*$")
ROOT = "state_snapshot"


def looks_like(text: str) -> bool:
    return "<state_snapshot>" in text


def _heading(line: str) -> str | None:
    m = _OPEN.match(line)
    return m.group(1) if m and m.group(1) != ROOT else None


def _structure(line: str) -> bool:
    return bool(_CLOSE.match(line)) or line.strip() == f"<{ROOT}>"


def _inline(line: str) -> tuple[str, int, int] | None:
    m = _INLINE.match(line)
    if not m or m.group(2) == ROOT:
        return None
    return m.group(2), m.end(1), m.end(3)


def parse(text: str) -> ParsedSummary:
    b = Builder(text, "gemini")
    b.region(0, len(text), "", heading=_heading, structure=_structure, inline=_inline)
    return b.build()
