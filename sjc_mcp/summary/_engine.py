"""The line engine every summary format shares.

A format decides where its regions are and which lines are headings or structure (wrapper lines,
notices, closing lines, XML tags); the engine turns the remaining lines of a region into entries:

- each bullet or numbered item, at any depth, starts an entry (its parent is the enclosing item);
- a line of prose after a blank line, a heading or a code fence starts a paragraph entry;
- a line directly below an entry's last line (no blank between) continues that entry;
- a fenced code block belongs to the entry above it (or is an entry of its own right after a
  heading); an unclosed fence is read as plain text, so it can never swallow a heading;
- blank lines between two entries of one section belong to the first, or to the second when that
  is a paragraph, so deleting an entry neither leaves a double gap in the middle of a list nor
  joins a paragraph to the item above it;
- a placeholder a host writes for an empty section ("None.", "(none)", "N/A", "No files were
  modified.", "No prior history.") is structure: never an entry, never judged, never counted by the
  prune-share guard.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sjc_mcp.models import Entry, ParsedSummary, Section
from sjc_mcp.summary._headings import Headings, clean_title
from sjc_mcp.text import BULLET_RE, strip_marker

FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
# a whole line that only says a section is empty (with or without a list marker, brackets, a full stop)
PLACEHOLDER = re.compile(
    r"^[ \t]*(?:[-*+•][ \t]+)?[(\[_*]*"
    r"(?:none|n/?a|nil|nothing|not applicable|no prior history|none (?:yet|so far|captured|recorded|identified|noted)"
    r"|nothing (?:yet|so far|pending|to report)|no (?:\w+ ){0,2}(?:were|was|have been|has been) (?:\w+ ?){1,2})"
    r"[)\]_*]*[.!]?[ \t]*$",
    re.IGNORECASE,
)


def is_placeholder(line: str) -> bool:
    """A line that only says its section is empty."""
    return len(line) < 80 and PLACEHOLDER.match(line) is not None


_LEADING_BLANKS = re.compile(r"^(?:[ \t\r]*\n)+")

Heading = Callable[[str], "str | None"]
Predicate = Callable[[str], bool]
Inline = Callable[[str], "tuple[str, int, int] | None"]

_ANY = Headings()


def markdown_heading(line: str) -> str | None:
    """A ``#`` heading or a bold line, in a format with no section names of its own."""
    return _ANY(line)


__all__ = ["BULLET_RE", "Builder", "clean_title", "lines_of", "markdown_heading", "strip_marker"]


@dataclass(slots=True)
class Line:
    start: int
    end: int
    text: str


def lines_of(text: str, start: int, end: int) -> list[Line]:
    """The lines of ``text[start:end]``; a line's ``text`` has no line end (LF or CRLF), its span has."""
    out: list[Line] = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl + 1
        line = text[pos : nl if nl != -1 else end]
        out.append(Line(pos, stop, line[:-1] if line.endswith("\r") else line))
        pos = stop
    return out


def _fences(lines: list[Line]) -> dict[int, int]:
    """Map the index of each fence opener to the index of its closer; unclosed openers are dropped."""
    pairs: dict[int, int] = {}
    i, n = 0, len(lines)
    while i < n:
        m = FENCE_RE.match(lines[i].text)
        if not m:
            i += 1
            continue
        mark = m.group(1)
        closer = re.compile(r"^[ \t]*" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}[ \t]*$")
        for j in range(i + 1, n):
            if closer.match(lines[j].text):
                pairs[i] = j
                i = j + 1
                break
        else:
            i += 1
    return pairs


class Builder:
    """Collects sections and entries of one summary, in text order."""

    def __init__(self, text: str, host: str) -> None:
        self.text = text
        self.host = host
        self.sections: list[Section] = []
        self.entries: list[dict] = []
        self._last: int | None = None  # last entry of the current section run (owns the gap after it)

    def section(self, title: str, start: int, end: int) -> None:
        self.sections.append(Section(title=title, start=start, end=end))
        self._last = None

    def structure(self) -> None:
        self._last = None

    def new(self, section: str, start: int, end: int, parent: int | None, kind: str) -> int:
        if self._last is not None:
            if kind == "paragraph":  # a paragraph owns the gap above it, so it stays a paragraph
                start = self.entries[self._last]["end"]
            else:
                self.entries[self._last]["end"] = start
        self.entries.append(
            {"id": len(self.entries), "section": section, "start": start, "end": end, "parent": parent, "kind": kind}
        )
        self._last = len(self.entries) - 1
        return self._last

    def extend(self, idx: int, end: int) -> None:
        self.entries[idx]["end"] = end

    def region(
        self,
        start: int,
        end: int,
        section: str,
        heading: Heading | None = None,
        structure: Predicate | None = None,
        inline: Inline | None = None,
    ) -> None:
        """Split the characters ``[start, end)`` into entries."""
        lines = lines_of(self.text, start, end)
        fences = _fences(lines)
        cur: int | None = None
        stack: list[tuple[int, int]] = []  # (indent, entry index) of open list items
        prev = "start"
        i, n = 0, len(lines)
        self._last = None
        while i < n:
            ln = lines[i]
            s = ln.text
            if not s.strip():
                if prev != "start":
                    prev = "blank" if prev != "boundary" else prev
                i += 1
                continue
            if i not in fences:
                if (structure is not None and structure(s)) or is_placeholder(s):
                    cur, stack, prev = None, [], "boundary"
                    self.structure()
                    i += 1
                    continue
                title = heading(s) if heading is not None else None
                if title is not None:
                    section = title
                    self.section(title, ln.start, ln.end)
                    cur, stack, prev = None, [], "boundary"
                    i += 1
                    continue
                if inline is not None:
                    hit = inline(s)
                    if hit is not None:
                        title, a, b = hit
                        self.section(title, ln.start, ln.start + a)
                        self.new(title, ln.start + a, ln.start + b, None, "paragraph")
                        self.structure()
                        cur, stack, prev = None, [], "boundary"
                        i += 1
                        continue
            indent = len(s) - len(s.lstrip())
            if i in fences:
                j = fences[i]
                if cur is not None and prev not in ("start", "boundary"):
                    self.extend(cur, lines[j].end)
                else:
                    while stack and stack[-1][0] >= indent:
                        stack.pop()
                    cur = self.new(section, ln.start, lines[j].end, stack[-1][1] if stack else None, "code")
                prev = "fence"
                i = j + 1
                continue
            if BULLET_RE.match(s):
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                cur = self.new(section, ln.start, ln.end, stack[-1][1] if stack else None, "bullet")
                stack.append((indent, cur))
                prev = "text"
                i += 1
                continue
            quote = s.lstrip().startswith(">")
            if cur is not None and (prev == "text" or (quote and prev == "blank")):
                self.extend(cur, ln.end)
                prev = "text"
                i += 1
                continue
            while stack and stack[-1][0] >= indent:
                stack.pop()
            cur = self.new(section, ln.start, ln.end, stack[-1][1] if stack else None, "paragraph")
            prev = "text"
            i += 1
        self._last = None

    def build(self) -> ParsedSummary:
        entries = [
            Entry(text=_LEADING_BLANKS.sub("", self.text[e["start"] : e["end"]]).rstrip().replace("\r\n", "\n"), **e)
            for e in self.entries
        ]
        return ParsedSummary(text=self.text, host=self.host, sections=self.sections, entries=entries)
