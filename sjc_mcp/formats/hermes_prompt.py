"""Hermes Agent's compaction prompt: a conversation serialised into the text of one user message.

Hermes (``agent/context_compressor.py`` ``_generate_summary``, checked with hermes-agent 0.19.0) sends its
compaction as one user message and nothing else (no system message, no tools, not streamed) on the Chat
Completions wire. The text is its preamble (``PREAMBLE``), then either

- ``TURNS TO SUMMARIZE:`` and the turns (a first compaction), or
- ``PREVIOUS SUMMARY:``, the summary being updated, ``NEW TURNS TO INCORPORATE:`` and the turns,

then an optional ``MEMORY PROVIDER CONTEXT:`` block, its template ("Use this exact structure:" / "Update the
summary using this exact structure.") and an optional ``FOCUS TOPIC: "…"``.

The turns are blocks joined by a blank line: ``[USER]: text``, ``[ASSISTANT]: text`` followed by the calls
it made as ``[Tool calls:``, one ``  name(arguments)`` line each and ``]``, ``[TOOL RESULT <call id>]: output``
(other roles as ``[ROLE]: text``). Bodies over 6000 characters are cut to their first 4000 and last 1500
around ``...[truncated]...``, arguments over 1500 to 1200 and ``...``, secrets redacted. The calls carry no
ids: each result answers the oldest call not yet answered, whose id it then names.

This module reads that structure only; what a text means (a summary, an injected note, a tool's JSON) is
the host's (``hosts/hermes.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sjc_mcp.models import Item

PREAMBLE = "You are a summarization agent creating a context checkpoint"
_FIRST = "\n\nTURNS TO SUMMARIZE:\n"
_PREVIOUS = "\n\nPREVIOUS SUMMARY:\n"
_NEW_TURNS = "\n\nNEW TURNS TO INCORPORATE:\n"
_MEMORY = "\n\nMEMORY PROVIDER CONTEXT:\n"
_TEMPLATE_FIRST = "\n\nUse this exact structure:\n"
_TEMPLATE_UPDATE = "\n\nUpdate the summary using this exact structure."
_FOCUS_AT = '\n\nFOCUS TOPIC: "'
_FOCUS = re.compile(r'\n\nFOCUS TOPIC: "(?P<focus>.*)"\nThis compaction should PRIORITISE', re.S)
_BLOCK = re.compile(r"(?:\A|\n\n)\[(?P<label>USER|ASSISTANT|SYSTEM|TOOL RESULT[^\]\n]*|[A-Z][A-Z_]*)\]: ")
_CALLS = "\n[Tool calls:\n"
_CALL_START = re.compile(r"\n(?= {2}[^\s(]+\()")
_CALL = re.compile(r"\A {2}(?P<name>[^\s(]+)\((?P<args>.*)\)\Z", re.S)


@dataclass(slots=True)
class Prompt:
    """What one compaction prompt holds: the serialised turns as items, the summary it updates, the focus."""

    items: list[Item] = field(default_factory=list)
    previous_summary: str | None = None
    focus: str | None = None


def is_prompt(text: str) -> bool:
    return text.startswith(PREAMBLE)


def read(text: str) -> Prompt:
    """The prompt's parts; an unknown layout reads as no turns."""
    previous, turns, focus = _split(text)
    return Prompt(items=items(turns), previous_summary=previous, focus=focus)


def _split(text: str) -> tuple[str | None, str, str | None]:
    at = text.rfind(_FOCUS_AT)  # it comes last: a quoted one in the turns is not it
    found = _FOCUS.match(text, at) if at >= 0 else None
    focus = found.group("focus") if found else None
    if _PREVIOUS in text and _NEW_TURNS in text:
        a = text.index(_PREVIOUS) + len(_PREVIOUS)
        b = text.find(_NEW_TURNS, a)
        if b < 0:
            return None, "", focus
        previous: str | None = text[a:b]
        start, end_mark = b + len(_NEW_TURNS), _TEMPLATE_UPDATE
    elif _FIRST in text:
        previous, start, end_mark = None, text.index(_FIRST) + len(_FIRST), _TEMPLATE_FIRST
    else:
        return None, "", focus
    end = text.rfind(end_mark)
    end = end if end >= start else len(text)
    memory = text.rfind(_MEMORY, start, end)
    return previous, text[start : memory if memory >= 0 else end], focus


def _calls(block: str) -> list[tuple[str, str]]:
    out = []
    for part in _CALL_START.split(block):
        m = _CALL.match(part)
        if m:
            out.append((m.group("name"), m.group("args")))
    return out


def items(turns: str) -> list[Item]:
    """The serialised turns as items, oldest first: user texts, the assistant's words and calls, tool
    results (each with the call it answers, which gets the result's id)."""
    marks = list(_BLOCK.finditer(turns))
    out: list[Item] = []
    pending: list[tuple[str, str]] = []
    for i, m in enumerate(marks):
        body = turns[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(turns)]
        label = m.group("label")
        if label == "ASSISTANT":
            k = body.rfind(_CALLS)
            if k >= 0 and body.endswith("\n]"):
                pending += _calls(body[k + len(_CALLS) : -2])
                body = body[:k]
            if body.strip():
                out.append(Item(role="assistant", content=body))
        elif label.startswith("TOOL RESULT"):
            call_id = label[len("TOOL RESULT") :].strip() or None
            name, args = pending.pop(0) if pending else (None, "")
            if name is not None:
                out.append(Item(role="tool_call", content=args, name=name, call_id=call_id))
            out.append(Item(role="tool_output", content=body, name=name, call_id=call_id))
        elif label == "USER":
            out.append(Item(role="user", content=body))
    return out
