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


# What a Gemini snapshot writes in a section it has nothing for, beyond the placeholders every format knows
# (``_engine.is_placeholder``): "None specified.", "No constraints were stated by the user.", "No files were
# created or modified.", "No modifications have been made to any files." A closed set of words: a line that
# says anything more ("No changes to the schema without review") is an entry.
_ADJ = r"(?:specific|explicit|particular|additional|other|known|user|relevant|significant|further|new|code|file)"
_NOUN = (
    r"(?:constraints?|preferences?|rules?|files?|artifacts?|changes?|modifications?|edits?|actions?|tasks?"
    r"|errors?|decisions?|steps?)"
)
_DONE = (
    r"(?:stated|specified|mentioned|provided|given|established|defined|set|made|modified|created|changed|edited"
    r"|touched|recorded|identified|taken|performed|run|executed|read|written|deleted|encountered|discussed)"
)
_EMPTY = re.compile(
    r"^[ \t]*(?:[-*+\u2022][ \t]+)?(?:"
    rf"none(?: {_DONE})?(?: yet| so far)?"
    rf"|no(?: {_ADJ}){{0,2}} {_NOUN}"
    rf"(?:(?: (?:were|was|are|is|have been|has been)(?: yet)?)? {_DONE}(?: or {_DONE})?)?"
    r"(?: (?:to|in) (?:any|the) (?:files?|codebase|workspace|repository|project))?"
    r"(?: by the user)?(?: yet| so far)?"
    r")[.!]?[ \t]*$",
    re.IGNORECASE,
)


def is_empty_note(line: str) -> bool:
    """A line that says only that its section is empty, in the words Gemini snapshots use."""
    return len(line) < 100 and _EMPTY.match(line) is not None


def looks_like(text: str) -> bool:
    return "<state_snapshot>" in text


def _structure(line: str) -> bool:
    return bool(_CLOSE.match(line)) or line.strip() in (f"<{ROOT}>", f"</{ROOT}>") or is_empty_note(line)


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
