"""Any markdown-ish summary: markdown or bold headings if it has any (and the section names of every
known format in any markup), else one entry per bullet or paragraph. Formats that are markdown with
a host notice in front (Codex, Hermes) reuse ``parse``."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import BULLET_RE, Builder, lines_of, markdown_heading
from sjc_mcp.summary._headings import Headings


def notice_end(text: str, prefixes: tuple[str, ...], one_line: bool = False) -> int:
    """End offset of a leading notice that begins with one of ``prefixes`` (0 if none): its first line
    when ``one_line``, else its paragraph, which ends at a blank line, a heading or a list item."""
    body = text.lstrip()
    if not any(body.startswith(p) for p in prefixes):
        return 0
    pos = len(text) - len(body)
    while pos < len(text):
        nl = text.find("\n", pos)
        pos = len(text) if nl == -1 else nl + 1
        if one_line:
            break
        nxt = text[pos : text.find("\n", pos) if text.find("\n", pos) != -1 else len(text)].rstrip("\r")
        if not nxt.strip() or markdown_heading(nxt) is not None or BULLET_RE.match(nxt):
            break
    return pos


def count_names(text: str, names: tuple[str, ...]) -> int:
    """How many of ``names`` head a line of ``text``, in any markup."""
    return Headings(names).count([ln.text for ln in lines_of(text, 0, len(text))])


def parse(
    text: str,
    host: str = "generic",
    notices: tuple[str, ...] = (),
    one_line: bool = False,
    names: tuple[str, ...] | None = None,
) -> ParsedSummary:
    if names is None:
        from sjc_mcp.summary import ALL_NAMES

        names = ALL_NAMES
    b = Builder(text, host)
    start = notice_end(text, notices, one_line) if notices else 0
    heads = Headings(names)
    b.region(start, len(text), "", heading=heads, inline=heads.inline)
    return b.build()
