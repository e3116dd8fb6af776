"""Text out of message contents: a string, or a list of parts (text blocks, images, tool results)."""

from __future__ import annotations

from typing import Any

TEXT_PARTS = (None, "text", "input_text", "output_text")


def str_or_none(value: object) -> str | None:
    """A record's value when it is a string, else None: a hand-damaged record (a name that is a dict, an
    id that is a list) reads as the value missing, never as an error."""
    return value if isinstance(value, str) else None


def text_of(content: Any) -> str:
    """The text of a content: a string, or its text parts joined by newlines (an image is ``[image]``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    for c in content:
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, dict):
            if c.get("type") in TEXT_PARTS and isinstance(c.get("text"), str):
                out.append(c["text"])
            elif c.get("type") in ("image", "input_image"):
                out.append("[image]")
    return "\n".join(out)


def last_text(content: Any) -> str:
    """The last text part of a content (the whole content when it is a string)."""
    if isinstance(content, str):
        return content
    for c in reversed(content if isinstance(content, list) else []):
        if isinstance(c, dict) and c.get("type") in ("text", "input_text") and isinstance(c.get("text"), str):
            return str(c["text"])
    return ""
