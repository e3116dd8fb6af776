"""Claude Code summaries, in both shapes the host produces.

- As stored in the transcript (the ``isCompactSummary`` record): a wrapper line, in versions up to
  about 2.1.40 an ``Analysis:`` block, ``Summary:``, nine numbered sections ("1. Primary Request and
  Intent:"), nested bullets with fenced code, and closing lines ("If you need specific details …",
  "Please continue the conversation …").
- Raw, as PostCompact's ``compact_summary``: ``<analysis>…</analysis><summary>…</summary>`` and maybe
  trailing text.

The wrapper, ``Analysis:``/``Summary:`` lines, the tags, the section headings, the closing lines and
any text after ``</summary>`` are structure. The analysis is the compressor's own narrative: its
items are entries of a section named "Analysis", judged like the rest.
"""

from __future__ import annotations

import re

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import Builder, clean_title, markdown_heading

WRAPPER = "This session is being continued from a previous conversation"
_SECTION = re.compile(r"^\d{1,2}\.[ \t]+(\S[^\n]{0,100}?):[ \t]*$")
_SECTION_ANYWHERE = re.compile(_SECTION.pattern, re.MULTILINE)
_CLOSING = re.compile(
    r"^(If you need specific details from before compaction|Please continue the conversation from where"
    r"|Continue the conversation from where it left off|Recent messages are preserved verbatim"
    r"|Summary of the conversation ends here)"
)
_ANALYSIS_LINE = re.compile(r"(?m)^Analysis:[ \t]*\n")
_SUMMARY_LINE = re.compile(r"(?m)^Summary:[ \t]*(\n|$)")


def looks_like(text: str) -> bool:
    return (
        text.lstrip().startswith(WRAPPER)
        or "<summary>" in text
        or (_SUMMARY_LINE.search(text) is not None and _SECTION_ANYWHERE.search(text) is not None)
    )


def _heading(line: str) -> str | None:
    m = _SECTION.match(line)
    if m and not m.group(1).startswith(("**", "`")):
        return clean_title(m.group(1))
    return markdown_heading(line)


def _closing(line: str) -> bool:
    return _CLOSING.match(line) is not None


def parse(text: str) -> ParsedSummary:
    b = Builder(text, "claude-code")
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
        b.region(start, close if close != -1 else len(text), "", heading=_heading, structure=_closing)
        return b.build()
    sm = _SUMMARY_LINE.search(text)
    am = _ANALYSIS_LINE.search(text, 0, sm.start() if sm else len(text))
    if am is not None:
        b.section("Analysis", am.start(), am.end())
        b.region(am.end(), sm.start() if sm else len(text), "Analysis", structure=_closing)
    if sm is not None:
        b.region(sm.end(), len(text), "", heading=_heading, structure=_closing)
    elif am is None:
        start = 0
        if text.lstrip().startswith(WRAPPER):
            nl = text.find("\n", text.find(WRAPPER))
            start = len(text) if nl == -1 else nl + 1
        b.region(start, len(text), "", heading=_heading, structure=_closing)
    return b.build()
