"""The Anthropic Messages API (``POST …/v1/messages``): Claude Code's wire, and the message shape its
transcripts store.

A message is ``{role, content}``, ``content`` a string or blocks: ``text``, ``thinking`` (the model's),
``tool_use {id, name, input}`` (the model's call) and ``tool_result {tool_use_id, content, is_error}`` (in a
user message: the tool's output). The system prompt is ``system`` (a string or text blocks). An answer
is ``content`` text blocks, or, streamed, ``content_block_delta`` events with ``text_delta``s.
"""

from __future__ import annotations

import json
from typing import Any

from sjc_mcp.formats import FormatError, sse
from sjc_mcp.formats._parts import last_text, str_or_none, text_of
from sjc_mcp.models import Item

NAME = "anthropic"
Locator = tuple[Any, ...]


def matches(path: str) -> bool:
    return path.endswith("/messages")


def message_items(role: str, content: Any) -> list[tuple[Item, int | None]]:
    """The items of one message, each with the index of its block (None for a string content): text and
    thinking as the role's words, ``tool_use`` as a call (its input as JSON), ``tool_result`` as an output."""
    if isinstance(content, str):
        return [(Item(role="user" if role == "user" else "assistant", content=content), None)]
    out: list[tuple[Item, int | None]] = []
    for i, b in enumerate(content if isinstance(content, list) else []):
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            out.append((Item(role="user" if role == "user" else "assistant", content=b["text"]), i))
        elif t == "thinking" and role == "assistant" and isinstance(b.get("thinking"), str):
            out.append((Item(role="assistant", content=b["thinking"]), i))
        elif t == "tool_use":
            args = json.dumps(b.get("input", {}), ensure_ascii=False)
            out.append(
                (
                    Item(
                        role="tool_call",
                        content=args,
                        name=str_or_none(b.get("name")),
                        call_id=str_or_none(b.get("id")),
                    ),
                    i,
                )
            )
        elif t == "tool_result":
            out.append(
                (
                    Item(
                        role="tool_output",
                        content=text_of(b.get("content")),
                        call_id=str_or_none(b.get("tool_use_id")),
                        is_error=b.get("is_error") is True,
                    ),
                    i,
                )
            )
    return out


def history(body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    """Every user and assistant message's items, oldest first, with ``(message index, block index)``."""
    items: list[Item] = []
    where: list[Locator] = []
    messages = body.get("messages")
    for mi, m in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue
        for item, bi in message_items(m["role"], m.get("content")):
            items.append(item)
            where.append((mi, bi))
    return items, where


def system_texts(body: dict[str, Any]) -> list[str]:
    system = body.get("system")
    if isinstance(system, str):
        return [system] if system else []
    return [t for b in system if (t := last_text([b]))] if isinstance(system, list) else []


def last_user_text(body: dict[str, Any]) -> str:
    """The last text block of the last user message (where Claude Code puts its compaction prompt)."""
    messages = body.get("messages")
    for m in reversed(messages if isinstance(messages, list) else []):
        if isinstance(m, dict) and m.get("role") == "user":
            return last_text(m.get("content"))
    return ""


def set_output(body: dict[str, Any], loc: Locator, text: str) -> None:
    body["messages"][loc[0]]["content"][loc[1]]["content"] = text


def drop(body: dict[str, Any], locs: list[Locator]) -> None:
    """Remove the blocks at ``locs``, and any message left with no content."""
    for mi, bi in sorted(locs, reverse=True):
        del body["messages"][mi]["content"][bi]
    body["messages"] = [m for m in body["messages"] if m.get("content")]


def _is_text_delta(obj: dict[str, Any] | None) -> bool:
    if not obj or obj.get("type") != "content_block_delta":
        return False
    delta = obj.get("delta")
    return isinstance(delta, dict) and delta.get("type") == "text_delta"


def answer_text(raw: bytes, stream: bool) -> str:
    if not stream:
        body = json.loads(raw)
        return "".join(b.get("text", "") for b in body.get("content", []) if b.get("type") == "text")
    return "".join(obj["delta"].get("text", "") for ev in sse.parse(raw) if _is_text_delta(obj := sse.data_json(ev)))  # type: ignore[index]


def replace_answer(raw: bytes, stream: bool, text: str) -> bytes:
    """The answer with ``text`` as its whole text: the first text block (or delta) gets it, other text
    blocks become empty (their deltas are dropped); everything else as it was."""
    if not stream:
        body = json.loads(raw)
        first = True
        for b in body.get("content", []):
            if b.get("type") == "text":
                b["text"], first = (text if first else ""), False
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out: list[dict[str, Any]] = []
    placed = False
    for ev in sse.parse(raw):
        obj = sse.data_json(ev)
        if obj is not None and _is_text_delta(obj):
            if not placed:
                obj["delta"]["text"] = text
                out.append(sse.with_json(ev, obj))
                placed = True
            continue
        out.append(ev)
    if not placed:
        raise FormatError("no text delta in the Anthropic stream")
    return sse.render(out)
