"""OpenAI Chat Completions (``POST …/chat/completions``): the wire of many OpenAI-compatible hosts.

Messages ``{role: system|developer|user|assistant|tool, content}``; an assistant's calls are
``tool_calls [{id, function: {name, arguments}}]``, a tool's output a ``tool`` message with
``tool_call_id``. An answer is ``choices[0].message.content``, or, streamed, ``choices[0].delta.content``.
"""

from __future__ import annotations

import json
from typing import Any

from sjc_mcp.formats import FormatError, sse
from sjc_mcp.formats._parts import last_text, str_or_none, text_of
from sjc_mcp.models import Item

NAME = "chat"
Locator = tuple[Any, ...]


def matches(path: str) -> bool:
    return path.endswith("/chat/completions")


def message_items(m: dict[str, Any]) -> list[tuple[Item, int | None]]:
    """The items of one message, each with the index of its tool call (None for the message itself)."""
    role = m.get("role")
    if role == "tool":
        return [
            (
                Item(role="tool_output", content=text_of(m.get("content")), call_id=str_or_none(m.get("tool_call_id"))),
                None,
            )
        ]
    if role not in ("user", "assistant"):
        return []
    out: list[tuple[Item, int | None]] = []
    text = text_of(m.get("content"))
    if text:
        out.append((Item(role=role, content=text), None))
    calls = m.get("tool_calls")
    for ti, tc in enumerate(calls if isinstance(calls, list) else []):
        fn = tc.get("function") if isinstance(tc, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments", "")
        out.append(
            (
                Item(
                    role="tool_call",
                    content=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                    name=str_or_none(fn.get("name")),
                    call_id=str_or_none(tc.get("id")) if isinstance(tc, dict) else None,
                ),
                ti,
            )
        )
    return out


def history(body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    items: list[Item] = []
    where: list[Locator] = []
    messages = body.get("messages")
    for mi, m in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(m, dict):
            for item, ti in message_items(m):
                items.append(item)
                where.append((mi, ti))
    return items, where


def system_texts(body: dict[str, Any]) -> list[str]:
    messages = body.get("messages")
    return [
        t
        for m in (messages if isinstance(messages, list) else [])
        if isinstance(m, dict) and m.get("role") in ("system", "developer") and (t := text_of(m.get("content")))
    ]


def last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    for m in reversed(messages if isinstance(messages, list) else []):
        if isinstance(m, dict) and m.get("role") == "user":
            return last_text(m.get("content"))
    return ""


def set_output(body: dict[str, Any], loc: Locator, text: str) -> None:
    body["messages"][loc[0]]["content"] = text


def drop(body: dict[str, Any], locs: list[Locator]) -> None:
    """Remove the tool messages and tool calls at ``locs``; a message left with neither text nor calls goes."""
    gone = set()
    for mi, ti in sorted(locs, key=lambda loc: (loc[0], -1 if loc[1] is None else loc[1]), reverse=True):
        if ti is None:
            gone.add(mi)
            continue
        m = body["messages"][mi]
        del m["tool_calls"][ti]
        if not m["tool_calls"]:
            del m["tool_calls"]
            if not text_of(m.get("content")):
                gone.add(mi)
    body["messages"] = [m for i, m in enumerate(body["messages"]) if i not in gone]


def _deltas(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [
        ch["delta"]
        for ch in (obj or {}).get("choices") or []
        if isinstance(ch, dict)
        and ch.get("index", 0) == 0
        and isinstance(ch.get("delta"), dict)
        and isinstance(ch["delta"].get("content"), str)
    ]


def answer_text(raw: bytes, stream: bool) -> str:
    if not stream:
        body = json.loads(raw)
        return ((body.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    return "".join(d["content"] for ev in sse.parse(raw) for d in _deltas(sse.data_json(ev)))


def replace_answer(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        body["choices"][0]["message"]["content"] = text
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out = []
    placed = False
    for ev in sse.parse(raw):
        obj = sse.data_json(ev)
        deltas = _deltas(obj)
        for d in deltas:
            d["content"], placed = (text if not placed else ""), True
        out.append(sse.with_json(ev, obj) if deltas and obj is not None else ev)
    if not placed:
        raise FormatError("no content delta in the chat completion stream")
    return sse.render(out)
