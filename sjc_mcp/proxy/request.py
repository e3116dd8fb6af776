"""Reading a model request: is it a compaction, and what evidence does it carry?

A compaction request is recognised by the host's compaction prompt (``[proxy] patterns``) in its
system prompt or instructions, or in its final user message. Its evidence is the history being
compacted: tool results (each read with the call it answers), the user's own messages, and any
previous summary the request carries; the assistant's prose is kept apart, never a source.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sjc_mcp.hosts.base import Boundary, Item
from sjc_mcp.hosts.claude_code import _INJECTED, _NOTIFICATION
from sjc_mcp.hosts.codex import _INJECTED_USER
from sjc_mcp.models import Source

CC_WRAPPER = "This session is being continued from a previous conversation"
CODEX_PREFIX = "Another language model started to solve this problem"


def content_text(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            c.get("text", "") if isinstance(c, dict) else str(c)
            for c in content
            if not isinstance(c, dict) or c.get("type") in (None, "text", "input_text", "output_text")
        )
    return ""


def _system_text(body: dict[str, Any]) -> str:
    parts = [content_text(body.get("system")), content_text(body.get("instructions"))]
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") in ("system", "developer"):
            parts.append(content_text(m.get("content")))
    return "\n".join(p for p in parts if p)


def _last_user_text(body: dict[str, Any]) -> str:
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if isinstance(items, str):
        return items
    for m in reversed(items or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return content_text(m.get("content"))
    return ""


def recognise(body: dict[str, Any], patterns: dict[str, str]) -> str | None:
    """The name of the host whose compaction prompt this request carries, or None."""
    where = (_system_text(body), _last_user_text(body))
    for name, pattern in patterns.items():
        try:
            rx = re.compile(pattern)
        except re.error:
            continue
        if any(rx.search(w) for w in where if w):
            return name
    return None


def _is_prompt(text: str, patterns: dict[str, str]) -> bool:
    return any(re.search(p, text) for p in patterns.values() if p)


Locator = tuple[Any, ...]


def _output_text(out: Any) -> str:
    """A Responses tool output: a string (Codex wraps it as JSON ``{"output", "metadata"}``), or parts."""
    if isinstance(out, list):
        return content_text(out)
    if not isinstance(out, str):
        return json.dumps(out)
    if out.startswith("{"):
        try:
            obj = json.loads(out)
        except ValueError:
            return out
        if isinstance(obj, dict) and "output" in obj:
            inner = obj["output"]
            return inner if isinstance(inner, str) else json.dumps(inner)
    return out


def history(api: str, body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    """The request's history as items, oldest first, and where each one sits in the body (for edits)."""
    items: list[Item] = []
    where: list[Locator] = []

    def add(loc: Locator, role: str, content: str, **kw: Any) -> None:
        items.append(Item(role=role, content=content, **kw))  # type: ignore[arg-type]
        where.append(loc)

    if api == "anthropic":
        for mi, m in enumerate(body.get("messages") or []):
            role = "user" if m.get("role") == "user" else "assistant"
            content = m.get("content")
            if isinstance(content, str):
                add((mi, None), role, content)
                continue
            for bi, b in enumerate(content or []):
                t = b.get("type") if isinstance(b, dict) else None
                if t == "tool_use":
                    add(
                        (mi, bi),
                        "tool_call",
                        json.dumps(b.get("input", {}), ensure_ascii=False),
                        name=b.get("name"),
                        call_id=b.get("id"),
                    )
                elif t == "tool_result":
                    add(
                        (mi, bi),
                        "tool_output",
                        content_text(b.get("content")),
                        call_id=b.get("tool_use_id"),
                        is_error=bool(b.get("is_error")),
                    )
                elif t == "text" or (t == "thinking" and role == "assistant"):
                    add((mi, bi), role, b.get("text") or b.get("thinking") or "")
    elif api == "chat":
        for mi, m in enumerate(body.get("messages") or []):
            role = m.get("role")
            if role == "tool":
                add((mi, None), "tool_output", content_text(m.get("content")), call_id=m.get("tool_call_id"))
            elif role in ("user", "assistant"):
                if content_text(m.get("content")):
                    add((mi, None), role, content_text(m.get("content")))
                for ti, tc in enumerate(m.get("tool_calls") or []):
                    fn = tc.get("function") or {}
                    add((mi, ti), "tool_call", fn.get("arguments", ""), name=fn.get("name"), call_id=tc.get("id"))
    elif api == "responses":
        raw = body.get("input")
        if isinstance(raw, str):
            add((None,), "user", raw)
        for ii, it in enumerate(raw if isinstance(raw, list) else []):
            if not isinstance(it, dict):
                continue
            t = it.get("type", "message")
            if t == "message" and it.get("role") in ("user", "assistant"):
                add((ii,), it["role"], content_text(it.get("content")))
            elif t in ("function_call", "custom_tool_call"):
                add(
                    (ii,),
                    "tool_call",
                    str(it.get("arguments", it.get("input", ""))),
                    name=it.get("name"),
                    call_id=it.get("call_id"),
                )
            elif t == "local_shell_call":
                add((ii,), "tool_call", json.dumps(it.get("action", {})), name="local_shell", call_id=it.get("call_id"))
            elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                add((ii,), "tool_output", _output_text(it.get("output")), call_id=it.get("call_id"))
    return items, where


def evidence(api: str, body: dict[str, Any], patterns: dict[str, str]) -> tuple[list[Source], str | None, list[str]]:
    """``(sources, previous summary, assistant prose)`` from the history in the request: the compaction
    prompt itself, injected text and the previous summary are set apart; tool outputs pair with their
    calls and planning tools are the agent's own words, as in a transcript (``Boundary.sources``)."""
    previous: str | None = None
    kept: list[Item] = []
    for it in history(api, body)[0]:
        if it.role == "user":
            t = it.content
            stripped = t.lstrip()
            if not t.strip() or _is_prompt(t, patterns):
                continue
            if stripped.startswith((CC_WRAPPER, CODEX_PREFIX)):
                previous = t
                continue
            if _NOTIFICATION.match(t):
                kept.append(Item(role="tool_output", content=t, name="notification"))
                continue
            if _INJECTED.match(t) or stripped.startswith(_INJECTED_USER):
                continue
        kept.append(it)
    span = Boundary(host=api, index=0, summary="", span=kept)
    return span.sources(), previous, span.assistant_prose()
