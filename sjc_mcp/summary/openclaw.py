"""OpenClaw summaries, as its model writes them and as OpenClaw stores them.

The model answers one of OpenClaw's prompts: safeguard (exactly ``## Decisions``, ``## Open TODOs``,
``## Constraints/Rules``, ``## Pending user asks``, ``## Exact identifiers``; its quality check rejects an
answer with one missing or out of order, so pruning never removes a heading), the default checkpoint or its
UPDATE variant (Goal … Critical Context), or a split turn's prefix (Original Request, Early Progress,
Context for Suffix).

What OpenClaw stores adds its own text around the answer: copies of messages and its bookkeeping, never
the model's claims. These are structure, not entries (nothing in them is judged or removed):

- ``## Latest user request context`` and the JSON string under it; a ``Latest user request context: "…"``
  line at the head of ``## Pending user asks``;
- ``**Turn Context (split turn):**`` (after a ``---`` line in default mode): below it either the turn
  prefix's summary, judged like the rest (its ``##`` headings demoted to ``###``), or the turn's messages
  copied verbatim (``- User:`` / ``- Assistant:`` / ``- Tool result (exec):`` lines, for a summary a
  compaction provider wrote), which are structure up to OpenClaw's next block;
- ``## Recent turns preserved verbatim`` and ``## Tool Failures``, up to OpenClaw's next block;
- ``<read-files>``, ``<modified-files>``, ``<workspace-critical-rules>`` blocks and its truncation markers.

Its placeholders for an empty section (``None.``, ``None captured.``, ``(none)``, ``No prior history.``) are
structure in every format (the line engine's).
"""

from __future__ import annotations

import re

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import Builder, lines_of
from sjc_mcp.summary._headings import Headings

NAMES = ("Decisions", "Open TODOs", "Constraints/Rules", "Pending user asks", "Exact identifiers")
DEFAULT_NAMES = ("Goal", "Constraints & Preferences", "Progress", "Key Decisions", "Next Steps", "Critical Context")
PREFIX_NAMES = ("Original Request", "Early Progress", "Context for Suffix")

LATEST_ASK = "## Latest user request context"
SPLIT_TURN = "**Turn Context (split turn):**"
_VERBATIM = ("## Recent turns preserved verbatim", "## Tool Failures")
_TAGS = ("read-files", "modified-files", "workspace-critical-rules")
_TRUNCATED = frozenset(
    {
        "[Compaction summary truncated to fit budget]",
        "[Earlier compaction context truncated to fit budget]",
        "[Earlier split-turn messages truncated]",
        "[Earlier preserved messages truncated]",
        "[... split-turn ask context truncated ...]",
        "[... latest user request truncated ...]",
        "...[truncated]...",
    }
)
_ASK_LINE = re.compile(r'^Latest user request context: ".*"\s*$')
_COPIED = ("- User:", "- Assistant:", "- Tool result")
MARKERS = (LATEST_ASK, SPLIT_TURN, *_VERBATIM, *(f"<{t}>" for t in _TAGS))


def looks_like(text: str) -> bool:
    """OpenClaw's by its own text: one of the blocks only OpenClaw writes, the default checkpoint's sections
    (``## Goal``, ``## Progress``, ``## Next Steps``) or a split turn's prefix (the three of its sections).
    Safeguard summaries are told by their section names (``NAMES``), as every format's are."""
    lines = {ln.strip() for ln in text.splitlines()}
    if any(m in lines for m in MARKERS) or {"## Goal", "## Progress", "## Next Steps"} <= lines:
        return True
    return {f"## {n}" for n in PREFIX_NAMES} <= lines


def _block_start(s: str) -> bool:
    """A line that opens one of OpenClaw's own blocks after a verbatim copy."""
    return s in _VERBATIM or s in _TRUNCATED or any(s == f"<{t}>" for t in _TAGS)


def host_blocks(text: str) -> list[tuple[int, int]]:
    """The character spans of OpenClaw's own text in a stored summary, in order."""
    lines = lines_of(text, 0, len(text))
    out: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        s = lines[i].text.strip()
        start = lines[i].start
        j = i + 1
        if s == LATEST_ASK:  # the heading and the JSON string below it, up to a blank line
            while j < n and lines[j].text.strip():
                j += 1
        elif s == SPLIT_TURN or (s == "---" and _next_text(lines, i) == SPLIT_TURN):
            if s == "---":
                j = next(k for k in range(i + 1, n) if lines[k].text.strip() == SPLIT_TURN) + 1
            if _next_text(lines, j - 1).startswith(_COPIED):  # the turn copied verbatim
                while j < n and not _block_start(lines[j].text.strip()):
                    j += 1
        elif s in _VERBATIM:
            while j < n and not _block_start(lines[j].text.strip()):
                j += 1
        elif any(s == f"<{t}>" for t in _TAGS):
            close = f"</{s[1:]}"
            while j < n and lines[j - 1].text.strip() != close:
                j += 1
        elif not (s in _TRUNCATED or _ASK_LINE.match(s)):
            i += 1
            continue
        out.append((start, lines[j - 1].end if j > i else lines[i].end))
        i = j
    return out


def _next_text(lines: list, i: int) -> str:
    for ln in lines[i + 1 :]:
        if ln.text.strip():
            return str(ln.text.strip())
    return ""


def parse(text: str) -> ParsedSummary:
    b = Builder(text, "openclaw")
    heads = Headings(NAMES + DEFAULT_NAMES + PREFIX_NAMES)
    pos, section = 0, ""
    for start, end in [*host_blocks(text), (len(text), len(text))]:
        if start > pos:
            b.region(pos, start, section, heading=heads, inline=heads.inline)
            section = b.sections[-1].title if b.sections else section
        pos = max(pos, end)
    return b.build()
