"""OpenClaw's summarising requests, read from their text: which summary is asked for, and the evidence.

Every summarising request of an OpenClaw compaction (OpenClaw 2026.9, agent-core's
``runSummarizationCompletion``) is an ordinary model request whose system prompt is
``SUMMARIZATION_SYSTEM_PROMPT`` ("You are a context summarization assistant. …", the same for every kind)
and whose one user text is::

    <conversation>
    [User]: …                       (``[User sender={…}]: `` for an attributed sender)

    [Assistant]: …

    [Assistant tool calls]: exec(command="echo build ok; ls"); read(path="config.yaml")

    [Tool result]: …               (each result cut to 2,000 characters, "[... N more characters truncated]")
    </conversation>

    [<previous-summary>\\n…\\n</previous-summary>\\n\\n]  the running summary (default mode's UPDATE, later chunks)
    the prompt                                          what the request is for (``kind``)
    [\\n\\nAdditional focus: …]

Parts are joined by a blank line; nothing is escaped, so a part starts only where a blank line is followed
by one of the four speaker tags. Tool calls are ``name(key=<JSON>, …)`` joined by ``; ``; the results that
follow answer them in order. The user parts are not all the user's: safeguard puts the previous summary
first as ``<previous-compaction-summary>…``, a merge hands the partial summaries over as ``[Chunk N …]``
user parts, a compaction summary or branch summary the model saw comes wrapped in OpenClaw's own text, and
``<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>`` carries runtime context. Those are previous summaries or nothing,
never the user's words.

Kinds, from the prompt after ``</conversation>`` (the request's own shape, no session id):

- ``safeguard``: "Produce a compact, factual summary with these exact section headings:" (the default mode);
- ``default`` / ``default-update``: "The messages above are a conversation to summarize." / "… are NEW
  conversation messages to incorporate into the existing summary provided in <previous-summary> tags.";
- ``turn-prefix``: "This is the PREFIX of a turn that was too large to keep.";
- ``merge``: "Merge these partial summaries into a single cohesive summary." (in the additional focus);
- ``branch``: a summary of an abandoned branch; ``unknown`` for anything else with the same system prompt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from sjc_mcp.models import Item

SYSTEM = "You are a context summarization assistant."
OPEN, CLOSE = "<conversation>\n", "\n</conversation>"
_SPEAKER = re.compile(r"\[(User(?: sender=\{[^\n]*?\})?|Assistant|Assistant tool calls|Tool result)\]: ")
_PREVIOUS = re.compile(r"<previous-summary>\n(.*?)\n</previous-summary>", re.S)
_REDISTILL = re.compile(r"\A<previous-compaction-summary>\n(?:[^\n]*\n\n)?(.*)\n</previous-compaction-summary>\Z", re.S)
_CHUNK = re.compile(r"\A\[Chunk \d+(?:/\d+)?(?: — [^\n]*)?\]\n")  # "[Chunk 1 — oldest messages [… UTC]]"
_WRAPPED = (  # summaries the model saw, as OpenClaw wraps them
    "The conversation history before this point was compacted into the following summary:",
    "The following is a summary of a branch",
    "The user explored a different conversation branch before returning here.",
)
_INJECTED = ("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>",)
_KINDS = (
    ("turn-prefix", "This is the PREFIX of a turn that was too large to keep."),
    ("merge", "Merge these partial summaries into a single cohesive summary."),
    ("safeguard", "Produce a compact, factual summary with these exact section headings:"),
    ("default-update", "The messages above are NEW conversation messages to incorporate"),
    ("default", "The messages above are a conversation to summarize."),
    ("branch", "Create a structured summary of this conversation branch"),
)


@dataclass
class Conversation:
    """What one summarising request shows the model."""

    kind: str
    items: list[Item] = field(default_factory=list)  # user, assistant, tool_call, tool_output, in order
    previous: list[str] = field(default_factory=list)  # earlier summaries it carries (re-distilled, running, partial)
    prompt: str = ""  # everything after </conversation>


def is_summarising(system: str, user_text: str) -> bool:
    """OpenClaw's summariser by its own shape: the system prompt and a user text that is a conversation."""
    return system.lstrip().startswith(SYSTEM) and user_text.startswith(OPEN) and CLOSE in user_text


def kind_of(tail: str) -> str:
    for kind, mark in _KINDS:
        if mark in tail:
            return kind
    return "unknown"


def parts(body: str) -> list[tuple[str, str]]:
    """(speaker, text) of each part of a serialised conversation."""
    starts = [m for m in _SPEAKER.finditer(body) if m.start() == 0 or body[m.start() - 2 : m.start()] == "\n\n"]
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() - 2 if i + 1 < len(starts) else len(body)
        out.append((m.group(1), body[m.end() : end]))
    return out


def tool_calls(text: str) -> list[tuple[str, str]]:
    """``name(key=<JSON>, …); …`` as (name, arguments as a JSON object); a call it cannot read whole is
    kept with its raw argument text."""
    out: list[tuple[str, str]] = []
    dec = json.JSONDecoder()
    pos, n = 0, len(text)
    while pos < n:
        m = re.compile(r"\s*([^\s(;]+)\(").match(text, pos)
        if not m:
            break
        name, pos = m.group(1), m.end()
        args: dict[str, object] = {}
        ok = True
        while pos < n and text[pos] != ")":
            k = re.compile(r"\s*([^=,()\s]+)=").match(text, pos)
            if not k:
                ok = False
                break
            try:
                value, pos = dec.raw_decode(text, k.end())
            except ValueError:
                ok = False
                break
            args[k.group(1)] = value
            if text.startswith(", ", pos):
                pos += 2
        if not ok:  # the rest as one call's raw arguments
            out.append((name, text[m.end() :].rstrip(")")))
            return out
        out.append((name, json.dumps(args, ensure_ascii=False)))
        pos += 1  # ")"
        if text.startswith("; ", pos):
            pos += 2
    return out


def read(user_text: str) -> Conversation:
    """The evidence a summarising request carries (call only when ``is_summarising``)."""
    start = user_text.index(OPEN) + len(OPEN)
    end = user_text.rindex(CLOSE)
    body, tail = user_text[start:end], user_text[end + len(CLOSE) :]
    conv = Conversation(kind=kind_of(tail), prompt=tail)
    running = _PREVIOUS.search(tail.split("\n\nAdditional focus:", 1)[0])
    if running:
        conv.previous.append(running.group(1))
    pending: list[tuple[str, str]] = []  # calls whose results are still to come
    for speaker, text in parts(body):
        if speaker.startswith("User"):
            redistilled = _REDISTILL.match(text)
            if redistilled:
                conv.previous.append(redistilled.group(1))
            elif _CHUNK.match(text):
                conv.previous.append(text[_CHUNK.match(text).end() :])  # type: ignore[union-attr]
            elif text.startswith(_WRAPPED):
                conv.previous.append(text)
            elif text.strip() and not text.startswith(_INJECTED):
                conv.items.append(Item(role="user", content=text))
        elif speaker == "Assistant":
            conv.items.append(Item(role="assistant", content=text))
        elif speaker == "Assistant tool calls":
            calls = tool_calls(text)
            for k, (name, args) in enumerate(calls):
                cid = f"c{len(conv.items)}-{k}"
                conv.items.append(Item(role="tool_call", content=args, name=name, call_id=cid))
                pending.append((cid, name))
        else:  # a tool result: it answers the oldest call still waiting
            call: tuple[str | None, str | None] = pending.pop(0) if pending else (None, None)
            conv.items.append(Item(role="tool_output", content=text, name=call[1], call_id=call[0]))
    return conv
