"""Any markdown-ish summary: markdown or bold headings if it has any, else one entry per bullet or
paragraph. Formats that are markdown with a host notice in front (Codex, Hermes) reuse ``parse``."""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary._engine import BULLET_RE, Builder, markdown_heading


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
        nxt = text[pos : text.find("\n", pos) if text.find("\n", pos) != -1 else len(text)]
        if not nxt.strip() or markdown_heading(nxt) is not None or BULLET_RE.match(nxt):
            break
    return pos


def parse(text: str, host: str = "generic", notices: tuple[str, ...] = (), one_line: bool = False) -> ParsedSummary:
    b = Builder(text, host)
    start = notice_end(text, notices, one_line) if notices else 0
    b.region(start, len(text), "", heading=markdown_heading)
    return b.build()
