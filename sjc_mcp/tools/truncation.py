"""Cutting a tool result that is no longer needed: its head and its declaration lines, with a note."""

from __future__ import annotations

import re

# A declaration line of code in most languages (Go, Python, Rust, TypeScript, Java, C#, Ruby…), with or
# without a read's line number: what a truncated code read keeps past its head, as a repo map does.
_DECLARATION = re.compile(
    r"^\s*(?:\d+(?:→|\t))?\s*(?:(?:export|pub(?:\([\w:]+\))?|public|private|protected|internal|static|async|"
    r"default|abstract|final|override)\s+)*(?:func|type|class|def|interface|struct|enum|const|var|fn|impl|trait|"
    r"function|module|record)\b"
)
OUTLINE_CHARS = 2000  # at most this much of a truncated result's declaration lines is kept


def outline(text: str, limit: int = OUTLINE_CHARS) -> list[str]:
    """The declaration lines of ``text`` (``func Limit(…)``, ``class Store:``, ``type ID string``), in order, up
    to ``limit`` characters."""
    out: list[str] = []
    n = 0
    for line in text.split("\n"):
        if _DECLARATION.match(line):
            if n + len(line) + 1 > limit:
                break
            out.append(line)
            n += len(line) + 1
    return out


def truncated(text: str, keep: int) -> str:
    """``text`` cut to its first ``keep`` characters and the declaration lines after them, with a note."""
    if len(text) <= keep:
        return text
    head = text[:keep]
    rest = text[keep:]
    decl = outline(rest[rest.find("\n") + 1 :] if "\n" in rest else "")
    cut = len(rest) - sum(len(line) + 1 for line in decl)
    if cut <= 0:
        return text
    shown = "" if not decl else "\n[sjc: the declarations in the rest of this result:]\n" + "\n".join(decl)
    return (
        f"{head}{shown}\n[sjc: {cut:,} more characters of this result were cut as no longer needed for "
        f"the task; run the call again if you need them]"
    )
