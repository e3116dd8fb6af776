r"""Reading a model request: is it a compaction, whose, and what evidence does it carry?

A request is a host's compaction only by the host's own request shape, never by text a user merely
quotes: a ``[proxy] patterns`` prompt at the start of the last text block of the last user message (where
Claude Code and Codex put theirs; an anchored pattern, ``\A…``, must begin there) or of the system prompt /
instructions; for Codex, its ``x-codex-turn-metadata`` header (``request_kind: "compaction"``) decides
whenever it is sent. A Responses request ending in ``{"type": "compaction_trigger"}`` is a server-side
compaction (the provider answers with an encrypted item): recognised, never prunable. Its evidence is the
history being compacted: tool results (each read with the call it answers), the user's own messages, and any
previous summary the request carries; the assistant's prose is kept apart, never a source.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from sjc_mcp.hosts.base import Boundary, Item
from sjc_mcp.hosts.claude_code import _INJECTED, _NOTIFICATION
from sjc_mcp.hosts.codex import _INJECTED_USER
from sjc_mcp.models import Source

CC_WRAPPER = "This session is being continued from a previous conversation"
CODEX_PREFIX = "Another language model started to solve this problem"
CODEX_METADATA = "x-codex-turn-metadata"
_CC_SESSION = re.compile(r"_session_([0-9A-Za-z-]+)")


@dataclass(frozen=True)
class Compaction:
    """A recognised compaction request: whose (a ``[proxy] patterns`` name), how it was told apart, and
    whether it is compacted on the provider's server (nothing there to prune)."""

    host: str
    how: str
    server_side: bool = False


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


def _last_block(content: Any) -> str:
    """The last text block of a message content (the whole content when it is a string)."""
    if isinstance(content, str):
        return content
    for c in reversed(content if isinstance(content, list) else []):
        if isinstance(c, dict) and c.get("type") in ("text", "input_text") and isinstance(c.get("text"), str):
            return str(c["text"])
    return ""


def _system_blocks(body: dict[str, Any]) -> list[str]:
    """Each block of the system prompt, the instructions, and the system or developer messages."""
    out: list[str] = []
    system = body.get("system")
    if isinstance(system, list):
        out += [_last_block([b]) for b in system]
    elif isinstance(system, str):
        out.append(system)
    if isinstance(body.get("instructions"), str):
        out.append(body["instructions"])
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    for m in items if isinstance(items, list) else []:
        if isinstance(m, dict) and m.get("role") in ("system", "developer"):
            out.append(content_text(m.get("content")))
    return [t for t in out if t]


def _last_user_block(body: dict[str, Any]) -> str:
    """The last text block of the last user message (Claude Code may put system messages after it)."""
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if isinstance(items, str):
        return items
    for m in reversed(items if isinstance(items, list) else []):
        if isinstance(m, dict) and m.get("role") == "user":
            return _last_block(m.get("content"))
    return ""


def codex_metadata(headers: Any) -> dict[str, Any] | None:
    """Codex's ``x-codex-turn-metadata`` header, parsed (None when absent or not a JSON object)."""
    raw = headers.get(CODEX_METADATA) if headers is not None else None
    if not raw:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _compiled(patterns: dict[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for name, pattern in patterns.items():
        try:
            out.append((name, re.compile(pattern)))
        except re.error:
            continue
    return out


def recognise(body: dict[str, Any], patterns: dict[str, str], headers: Any = None) -> Compaction | None:
    """The compaction this request is, by the host's own request shape, or None."""
    items = body.get("input")
    if (
        isinstance(items, list)
        and items
        and isinstance(items[-1], dict)
        and items[-1].get("type") == ("compaction_trigger")
    ):
        return Compaction("codex", "compaction_trigger", server_side=True)
    meta = codex_metadata(headers)
    if meta is not None and "request_kind" in meta:  # Codex says what the request is
        if meta["request_kind"] != "compaction":
            return None
        return Compaction("codex", "x-codex-turn-metadata request_kind compaction")
    places = [("last user message", _last_user_block(body))] + [("system prompt", t) for t in _system_blocks(body)]
    for name, rx in _compiled(patterns):
        for where, text in places:
            if text and rx.search(text.lstrip()):
                return Compaction(name, where)
    return None


def _is_prompt(text: str, patterns: dict[str, str]) -> bool:
    return any(rx.search(text.lstrip()) for _, rx in _compiled(patterns))


def session_of(body: dict[str, Any], headers: Any) -> str | None:
    """The host's session id: Claude Code's ``x-claude-code-session-id`` (or ``metadata.user_id``), Codex's
    ``session-id`` / ``session_id`` / ``conversation_id`` headers or its turn metadata."""
    get = headers.get if headers is not None else (lambda _k, _d=None: None)
    for key in ("x-claude-code-session-id", "session-id", "session_id", "conversation_id", "conversation-id"):
        value = get(key)
        if value:
            return str(value)
    meta = codex_metadata(headers) or {}
    for key in ("session_id", "thread_id", "conversation_id"):
        if meta.get(key):
            return str(meta[key])
    user_id = (body.get("metadata") or {}).get("user_id") if isinstance(body.get("metadata"), dict) else None
    if isinstance(user_id, str) and user_id:
        try:
            parsed = json.loads(user_id)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("session_id"):
            return str(parsed["session_id"])
        m = _CC_SESSION.search(user_id)
        if m:
            return m.group(1)
    return None


def boundary_of(body: dict[str, Any], headers: Any, session: str | None = None) -> str:
    """An id for the compaction: Codex's window being compacted, else a hash of the session and the history
    it compacts (a retry of the same compaction gets the same id)."""
    meta = codex_metadata(headers) or {}
    window = meta.get("window_id") or (headers.get("x-codex-window-id") if headers is not None else None)
    if window:
        return f"codex-window:{window}"
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    digest = hashlib.sha256(json.dumps([session, items], sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"request:{digest[:16]}"


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
            if m.get("role") not in ("user", "assistant"):  # Claude Code's system messages: the host's, not a source
                continue
            role = m["role"]
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
