"""Claude Code summaries, in every shape the host has written them.

- As stored in the transcript (the ``isCompactSummary`` record): a wrapper line, in versions up to
  about 2.1.40 an ``Analysis:`` block, ``Summary:``, nine numbered sections ("1. Primary Request and
  Intent:"), nested bullets with fenced code, and closing lines ("If you need specific details …",
  "Please continue the conversation …"). Later versions (2.1.217 was seen) write no analysis and
  bold numbered headings ("1. **Primary Request and Intent:**") with lettered items ("a. …").
- Raw, as PostCompact's ``compact_summary``: ``<analysis>…</analysis><summary>…</summary>`` and maybe
  trailing text.

The sections are found by their names in any markup (``## Current Work``, ``**Current Work:**``,
``7. Pending Tasks (from TODO list):``). The wrapper, the ``Analysis``/``Summary`` lines (any markup),
the tags, the headings, the closing lines and any text after ``</summary>`` are structure. The
analysis is the compressor's own narrative: its items are entries of a section named "Analysis",
judged like the rest; without a ``Summary`` line it ends at the first section heading.
"""

from __future__ import annotations

import re

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import Builder, Line, lines_of
from sjc_mcp.summary._headings import Headings, candidate

WRAPPER = "This session is being continued from a previous conversation"
NAMES = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and fixes",
    "Problem Solving",
    "All user messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)
_CLOSING = re.compile(
    r"^(If you need specific details from before compaction|Please continue the conversation from where"
    r"|Continue the conversation from where it left off|Recent messages are preserved verbatim"
    r"|Summary of the conversation ends here)"
)


def _marker(line: str, name: str) -> bool:
    """``line`` is the ``Analysis`` or ``Summary`` line, in any markup."""
    if len(line) > len(name) + 12 or name not in line.lower():
        return False
    c = candidate(line)
    return c is not None and c.inline_at is None and c.indent == 0 and c.title.lower() == name


def looks_like(text: str) -> bool:
    if text.lstrip().startswith(WRAPPER) or "<summary>" in text:
        return True
    lines = [ln.text for ln in lines_of(text, 0, len(text))]
    return Headings(NAMES).count(lines) >= 3


def _closing(line: str) -> bool:
    return _CLOSING.match(line.lstrip("*_ ")) is not None


def _sections_start(lines: list[Line], start: int, heads: Headings) -> int:
    """Where the sections begin after an analysis with no ``Summary`` line: the first section heading
    from which the rest follow in the host's order (the analysis may name a section on its own)."""
    found = [(i, k) for i in range(start, len(lines)) if (k := heads.known_heading(lines[i].text)) is not None]
    at = len(lines)
    for j in range(len(found) - 1, -1, -1):
        if j + 1 < len(found) and found[j][1] >= found[j + 1][1]:
            break
        at = found[j][0]
    return at


def parse(text: str) -> ParsedSummary:
    b = Builder(text, "claude-code")
    heads = Headings(NAMES, numbered_sections=True)
    s_open = text.find("<summary>")
    if s_open != -1:
        a_open = text.find("<analysis>")
        if a_open != -1 and a_open < s_open:
            a_start = a_open + len("<analysis>")
            a_close = text.find("</analysis>", a_start, s_open)
            b.section("Analysis", a_open, a_start)
            b.region(a_start, a_close if a_close != -1 else s_open, "Analysis")
        start = s_open + len("<summary>")
        close = text.find("</summary>", start)
        end = close if close != -1 else len(text)
        b.region(start, end, "", heading=heads, structure=_closing, inline=heads.inline)
        return b.build()
    lines = lines_of(text, 0, len(text))
    first = 0
    if text.lstrip().startswith(WRAPPER):
        first = next(i for i, ln in enumerate(lines) if ln.text.strip()) + 1
    a = next((i for i in range(first, len(lines)) if _marker(lines[i].text, "analysis")), None)
    after = a + 1 if a is not None else first
    s = next((i for i in range(after, len(lines)) if _marker(lines[i].text, "summary")), None)
    if a is not None and (s is None or a < s):
        stop = s if s is not None else _sections_start(lines, a + 1, heads)
        b.section("Analysis", lines[a].start, lines[a].end)
        end = lines[stop].start if stop < len(lines) else len(text)
        b.region(lines[a].end, end, "Analysis", structure=_closing)
        first = stop
    if s is not None:
        first = s + 1
    start = lines[first].start if first < len(lines) else len(text)
    b.region(start, len(text), "", heading=heads, structure=_closing, inline=heads.inline)
    return b.build()
