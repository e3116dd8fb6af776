"""Split a compaction summary into sections and entries, with exact character spans.

``split_summary(text, host=None)`` detects the format (Claude Code, Codex, Gemini CLI, OpenClaw,
Hermes, or generic markdown) unless ``host`` forces one; ``ParsedSummary.render(remove)`` deletes
the named entries and leaves every other byte as it was.
"""

from __future__ import annotations

from sjc_mcp.errors import InputError
from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import claude_code, codex, gemini, generic, hermes, openclaw

PARSERS = {
    "claude-code": claude_code.parse,
    "codex": codex.parse,
    "gemini": gemini.parse,
    "openclaw": openclaw.parse,
    "hermes": hermes.parse,
    "generic": generic.parse,
}
HOSTS = tuple(PARSERS)


def detect(text: str) -> str:
    """The format of a summary, from its own text."""
    if gemini.looks_like(text):
        return "gemini"
    if hermes.looks_like(text):
        return "hermes"
    if codex.looks_like(text):
        return "codex"
    if claude_code.looks_like(text):
        return "claude-code"
    if openclaw.looks_like(text):
        return "openclaw"
    return "generic"


def split_summary(text: str, host: str | None = None) -> ParsedSummary:
    if host is None or host == "auto":
        host = detect(text)
    try:
        parser = PARSERS[host]
    except KeyError:
        raise InputError(f"unknown host {host!r}; choose one of: {', '.join(HOSTS)}") from None
    return parser(text)


__all__ = ["HOSTS", "detect", "split_summary"]
