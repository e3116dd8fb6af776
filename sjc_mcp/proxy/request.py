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

from sjc_mcp.hosts.base import PLANNING_TOOLS
from sjc_mcp.hosts.claude_code import _INJECTED, _NOTIFICATION
from sjc_mcp.hosts.codex import _INJECTED_USER
from sjc_mcp.models import Source

CC_WRAPPER = "This session is being continued from a previous conversation"
CODEX_PREFIX = "Another language model started to solve this problem"


def _text(content: Any) -> str:
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
    parts = [_text(body.get("system")), _text(body.get("instructions"))]
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") in ("system", "developer"):
            parts.append(_text(m.get("content")))
    return "\n".join(p for p in parts if p)


def _last_user_text(body: dict[str, Any]) -> str:
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if isinstance(items, str):
        return items
    for m in reversed(items or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return _text(m.get("content"))
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


def evidence(api: str, body: dict[str, Any], patterns: dict[str, str]) -> tuple[list[Source], str | None, list[str]]:
    """``(sources, previous summary, assistant prose)`` from the history in the request."""
    sources: list[Source] = []
    previous: str | None = None
    prose: list[str] = []
    calls: dict[str, tuple[str, str]] = {}

    def user_text(t: str) -> None:
        nonlocal previous
        if not t.strip() or _is_prompt(t, patterns):
            return
        stripped = t.lstrip()
        if stripped.startswith((CC_WRAPPER, CODEX_PREFIX)):
            previous = t
        elif _NOTIFICATION.match(t):
            sources.append(Source(kind="tool_output", content=t, name="notification"))
        elif not _INJECTED.match(t) and not stripped.startswith(_INJECTED_USER):
            sources.append(Source(kind="user_message", content=t))

    def tool_output(call_id: str | None, content: str, is_error: bool = False) -> None:
        name, args = calls.get(call_id or "", (None, None))
        if name in PLANNING_TOOLS:
            return
        sources.append(
            Source(
                kind="tool_output",
                content=content,
                name=name,
                call_id=call_id,
                call=f"{name}: {args}" if name else None,
                is_error=is_error,
            )
        )

    if api == "anthropic":
        for m in body.get("messages") or []:
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for b in blocks:
                if not isinstance(b, dict):
                    continue
                t = b.get("type")
                if t == "tool_use":
                    calls[b.get("id", "")] = (b.get("name"), json.dumps(b.get("input", {}), ensure_ascii=False))
                    if b.get("name") in PLANNING_TOOLS:
                        prose.append(json.dumps(b.get("input", {}), ensure_ascii=False))
                elif t == "tool_result":
                    tool_output(b.get("tool_use_id"), _text(b.get("content")), bool(b.get("is_error")))
                elif t == "text" and m.get("role") == "user":
                    user_text(b.get("text", ""))
                elif t in ("text", "thinking") and m.get("role") == "assistant":
                    prose.append(b.get("text") or b.get("thinking") or "")
    elif api == "chat":
        for m in body.get("messages") or []:
            role = m.get("role")
            if role == "assistant":
                if _text(m.get("content")).strip():
                    prose.append(_text(m.get("content")))
                for tc in m.get("tool_calls") or []:
                    fn = tc.get("function") or {}
                    calls[tc.get("id", "")] = (fn.get("name"), fn.get("arguments", ""))
            elif role == "tool":
                tool_output(m.get("tool_call_id"), _text(m.get("content")))
            elif role == "user":
                user_text(_text(m.get("content")))
    elif api == "responses":
        items = body.get("input")
        for it in [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items or []:
            if not isinstance(it, dict):
                continue
            t = it.get("type", "message")
            if t == "message":
                if it.get("role") == "user":
                    user_text(_text(it.get("content")))
                elif it.get("role") == "assistant":
                    prose.append(_text(it.get("content")))
            elif t in ("function_call", "custom_tool_call"):
                calls[it.get("call_id", "")] = (it.get("name"), it.get("arguments", it.get("input", "")))
            elif t == "local_shell_call":
                calls[it.get("call_id", "")] = ("local_shell", json.dumps(it.get("action", {})))
            elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                out = it.get("output")
                text = out if isinstance(out, str) else _text(out) if isinstance(out, list) else json.dumps(out)
                if isinstance(out, str) and out.startswith("{"):
                    try:
                        obj = json.loads(out)
                        text = obj.get("output", text) if isinstance(obj, dict) else text
                    except ValueError:
                        pass
                tool_output(it.get("call_id"), text if isinstance(text, str) else json.dumps(text))
    return sources, previous, [p for p in prose if p.strip()]
