"""Telling a section heading from an entry, whatever the markup around its name.

A heading line may be written ``## Name``, ``**Name**``, ``**Name:**``, ``1. Name:``, ``1. **Name:**``,
``**1. Name**``, ``Name:`` or ``Name``, with trailing spaces or a CR. ``candidate(line)`` reads such a
line into its title and the markup it had; ``Headings`` decides, for one summary format, which
candidates are headings:

- a ``#`` heading always is, and so is a line that is bold and nothing else (at the left margin);
- a numbered line ending in a colon at the left margin is (``1. **Name:**``; ``1. Name:`` only where
  the format numbers its sections, as Claude Code does);
- a line whose title is one of the format's section names is, in any markup, even plain; plain ones
  only in the order the format writes its sections, so a quoted name later on stays text;
- a bold section name followed by text (``**Pending Tasks:** none``) is a heading with the rest of
  the line as its one entry.

Names are compared without case, markup, a trailing parenthesis ("Pending Tasks (from TODO list)"),
``&``/``and``, ``_`` and plural ``s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sjc_mcp.text import BULLET_RE

_MD = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
_NUMBER = re.compile(r"^(?:\d{1,2}|[IVX]{1,4})[.)][ \t]+")
_EMPH = re.compile(r"^(\*\*|__|\*(?=[^*\s])|_(?=[^_\s]))(.+?)\1(?![*_])(.*)$")
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_NONWORD = re.compile(r"[^a-z0-9]+")
MAX_TITLE = 100


def clean_title(raw: str) -> str:
    """Heading text without numbering, markup or a trailing colon."""
    t = _NUMBER.sub("", raw.strip())
    for mark in ("**", "__"):
        if t.startswith(mark) and t.endswith(mark) and len(t) > 2 * len(mark):
            t = t[len(mark) : -len(mark)]
    t = t.strip().rstrip(":").strip()
    t = _NUMBER.sub("", t)
    return t.strip("*_").strip().rstrip(":").strip()


def norm(title: str) -> str:
    """A section name reduced for comparison: "Pending Tasks (from TODO list)" -> "pending task"."""
    t = _PAREN.sub("", title.strip()).lower().replace("&", " and ").replace("_", " ")
    words = _NONWORD.sub(" ", t).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


@dataclass(slots=True)
class Candidate:
    title: str
    kind: str  # "md" | "bold" | "italic" | "plain"
    numbered: bool
    colon: bool
    indent: int
    inline_at: int | None = None  # where the text after a bold name starts (a heading with its entry inline)


def candidate(line: str) -> Candidate | None:
    """What ``line`` would be as a heading, or None when it cannot be one (indented, a list bullet)."""
    body = line.rstrip()
    indent = len(body) - len(body.lstrip(" \t"))
    if indent > 3 or not body.strip():
        return None
    s = body.strip()
    m = _MD.match(s)
    if m:
        raw = m.group(1)
        return Candidate(clean_title(raw), "md", bool(_NUMBER.match(raw)), raw.endswith(":"), indent)
    num = _NUMBER.match(s)
    if num is None and BULLET_RE.match(s):  # a bullet, a lettered or parenthesised item: an entry
        return None
    rest = s[num.end() :] if num else s
    e = _EMPH.match(rest)
    if e:
        label, after = e.group(2).strip(), e.group(3)
        colon = label.endswith(":")
        tail = after.lstrip()
        if tail.startswith(":"):
            colon, tail = True, tail[1:].lstrip()
        inner_num = _NUMBER.match(label)
        title = clean_title(label)
        if not title or len(title) > MAX_TITLE:
            return None
        numbered = bool(num or inner_num)
        kind = "bold" if len(e.group(1)) == 2 else "italic"
        if not tail:
            return Candidate(title, kind, numbered, colon, indent)
        if not colon:
            return None
        at = indent + (num.end() if num else 0) + e.start(3)  # just after the closing marker
        if after.lstrip().startswith(":"):
            at += after.index(":") + 1
        return Candidate(title, kind, numbered, colon, indent, inline_at=at)
    if s.startswith(("-", "+", "•", ">", "|", "`", "<", "[", "(")) or (s.startswith("*") and not s.startswith("**")):
        return None
    colon = rest.endswith(":")
    title = clean_title(rest)
    if not title or len(title) > MAX_TITLE or "`" in title:
        return None
    return Candidate(title, "plain", bool(num), colon, indent)


class Headings:
    """The heading rule of one summary format: ``headings(line)`` is the title of a heading line or None;
    ``headings.inline(line)`` is ``(title, start, end)`` for a heading with its entry on the same line."""

    def __init__(self, names: tuple[str, ...] = (), numbered_sections: bool = False) -> None:
        self.names = {norm(n): i for i, n in enumerate(names)}
        self.numbered_sections = numbered_sections
        self.last = -1
        self._seen: tuple[str, Candidate | None] = ("\n", None)  # the last line read: heading, then inline

    def _candidate(self, line: str) -> Candidate | None:
        if self._seen[0] != line:
            self._seen = (line, candidate(line))
        return self._seen[1]

    def known(self, title: str) -> int | None:
        return self.names.get(norm(title))

    def known_heading(self, line: str) -> int | None:
        """Which of the format's sections a whole-line heading names (any markup), or None."""
        c = candidate(line)
        return self.known(c.title) if c is not None and c.inline_at is None else None

    def __call__(self, line: str) -> str | None:
        c = self._candidate(line)
        if c is None or c.inline_at is not None:
            return None
        k = self.known(c.title)
        if c.kind == "md":
            ok = True
        elif c.kind == "bold":
            ok = k is not None or (c.indent == 0 and (not c.numbered or c.colon))
        elif c.kind == "italic":
            ok = k is not None
        elif c.numbered:
            ok = k is not None or (self.numbered_sections and c.colon and c.indent == 0)
        else:  # plain: a section name in the format's order, at the left margin
            ok = k is not None and k > self.last and c.indent == 0
        if not ok:
            return None
        if k is not None:
            self.last = max(self.last, k)
        return c.title

    def inline(self, line: str) -> tuple[str, int, int] | None:
        c = self._candidate(line)
        if c is None or c.inline_at is None or c.indent != 0:
            return None
        k = self.known(c.title)
        if k is None:
            return None
        self.last = max(self.last, k)
        return c.title, c.inline_at, len(line.rstrip())

    def count(self, lines: list[str]) -> int:
        """How many of the format's section names head a line of ``lines`` (for detecting the format)."""
        return self.count_titles(heading_titles(lines))

    def count_titles(self, titles: list[str]) -> int:
        return len({k for t in titles if (k := self.known(t)) is not None})


def heading_titles(lines: list[str]) -> list[str]:
    """The titles of the lines that look like headings (marked up, numbered or ending in a colon)."""
    out = []
    for ln in lines:
        c = candidate(ln)
        if c is not None and (c.kind != "plain" or c.colon or c.numbered):
            out.append(c.title)
    return out
