"""Split a compaction summary into sections and entries, with exact character spans.

``split_summary(text, host=None)`` detects the format (Claude Code, Codex, Gemini CLI, OpenClaw,
Hermes, or generic markdown) unless ``host`` forces one; ``ParsedSummary.render(remove)`` deletes
the named entries and leaves every other byte as it was. Sections are recognised by their names in
any markup (see ``_headings``); line ends may be LF or CRLF.

A summary the splitter cannot tell apart into entries (not text; no heading and at most one list
item or paragraph; nothing but headings) comes back with no entries and ``unstructured`` saying
why: nothing in it is judged, so nothing of it is lost.
"""

from __future__ import annotations

from sjc_mcp.errors import InputError
from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import claude_code, codex, gemini, generic, hermes, openclaw
from sjc_mcp.summary._engine import lines_of
from sjc_mcp.summary._headings import Headings, heading_titles
from sjc_mcp.text import not_text

PARSERS = {
    "claude-code": claude_code.parse,
    "codex": codex.parse,
    "gemini": gemini.parse,
    "openclaw": openclaw.parse,
    "hermes": hermes.parse,
    "generic": generic.parse,
}
HOSTS = tuple(PARSERS)
# every known section name, for summaries of no known format
ALL_NAMES = tuple(dict.fromkeys(claude_code.NAMES + openclaw.NAMES + hermes.NAMES + codex.NAMES + gemini.NAMES))
_BY_NAMES = (
    ("claude-code", claude_code.NAMES),
    ("openclaw", openclaw.NAMES),
    ("gemini", gemini.NAMES),
    ("hermes", hermes.NAMES),
)


def detect(text: str) -> str:
    """The format of a summary, from its own text: a host's notice or tags first, else which host's
    section names head its lines (three or more, in any markup)."""
    body = text.lstrip()
    if gemini.looks_like(text):
        return "gemini"
    if body.startswith(hermes.PREFIXES):
        return "hermes"
    if codex.looks_like(text):
        return "codex"
    if body.startswith(claude_code.WRAPPER) or "<summary>" in text:
        return "claude-code"
    if openclaw.looks_like(text):
        return "openclaw"
    titles = heading_titles([ln.text for ln in lines_of(text, 0, len(text))])
    best, hits = "generic", 2
    for host, names in _BY_NAMES:
        n = Headings(names).count_titles(titles)
        if n > hits:
            best, hits = host, n
    return best


def _unstructured(parsed: ParsedSummary) -> str | None:
    if not parsed.entries:
        return "no entries: nothing but headings or blank lines" if parsed.text.strip() else "empty"
    sections = [s for s in parsed.sections if s.title != "Analysis"]
    if not sections and len(parsed.entries) <= 1:
        return "no structure: no section heading and no list, one block of text"
    return None


def split_summary(text: str, host: str | None = None) -> ParsedSummary:
    if host is None or host == "auto":
        host = detect(text)
    try:
        parser = PARSERS[host]
    except KeyError:
        raise InputError(f"unknown host {host!r}; choose one of: {', '.join(HOSTS)}") from None
    bad = not_text(text)
    if bad is not None:
        return ParsedSummary(text=text, host=host, sections=[], entries=[], unstructured=bad)
    parsed = parser(text)
    why = _unstructured(parsed)
    if why is not None:
        parsed.entries = []
        parsed.unstructured = why
    return parsed


__all__ = ["ALL_NAMES", "HOSTS", "detect", "split_summary"]
