"""``[proxy] prefilter``: relevance-prune the tool results of a compaction request before the
compressor sees them (drop the clearly irrelevant, then summarise, then source-judge). Only
recognised compaction requests are touched, so ordinary requests and their prompt caches never are.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.hosts.base import Item
from sjc_mcp.relevance import run, truncated

Locator = tuple[Any, ...]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return "" if content is None else json.dumps(content)


def to_items(api: str, body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    items: list[Item] = []
    where: list[Locator] = []

    def add(item: Item, loc: Locator) -> None:
        items.append(item)
        where.append(loc)

    if api == "anthropic":
        for mi, m in enumerate(body.get("messages") or []):
            content = m.get("content")
            if isinstance(content, str):
                add(Item(role="user" if m.get("role") == "user" else "assistant", content=content), (mi, None))
                continue
            for bi, b in enumerate(content or []):
                t = b.get("type") if isinstance(b, dict) else None
                if t == "tool_use":
                    add(
                        Item(
                            role="tool_call",
                            content=json.dumps(b.get("input", {})),
                            name=b.get("name"),
                            call_id=b.get("id"),
                        ),
                        (mi, bi),
                    )
                elif t == "tool_result":
                    add(
                        Item(
                            role="tool_output",
                            content=_text(b.get("content")),
                            call_id=b.get("tool_use_id"),
                            is_error=bool(b.get("is_error")),
                        ),
                        (mi, bi),
                    )
                elif t == "text":
                    add(
                        Item(role="user" if m.get("role") == "user" else "assistant", content=b.get("text", "")),
                        (mi, bi),
                    )
    elif api == "chat":
        for mi, m in enumerate(body.get("messages") or []):
            role = m.get("role")
            if role == "tool":
                add(
                    Item(role="tool_output", content=_text(m.get("content")), call_id=m.get("tool_call_id")), (mi, None)
                )
            elif role in ("user", "assistant"):
                if _text(m.get("content")):
                    add(Item(role=role, content=_text(m.get("content"))), (mi, None))
                for ti, tc in enumerate(m.get("tool_calls") or []):
                    fn = tc.get("function") or {}
                    add(
                        Item(
                            role="tool_call", content=fn.get("arguments", ""), name=fn.get("name"), call_id=tc.get("id")
                        ),
                        (mi, ti),
                    )
    elif api == "responses" and isinstance(body.get("input"), list):
        for ii, it in enumerate(body["input"]):
            t = it.get("type", "message")
            if t in ("function_call", "custom_tool_call"):
                add(
                    Item(
                        role="tool_call",
                        content=str(it.get("arguments", it.get("input", ""))),
                        name=it.get("name"),
                        call_id=it.get("call_id"),
                    ),
                    (ii,),
                )
            elif t in ("function_call_output", "custom_tool_call_output"):
                out = it.get("output")
                add(
                    Item(
                        role="tool_output",
                        content=out if isinstance(out, str) else _text(out),
                        call_id=it.get("call_id"),
                    ),
                    (ii,),
                )
            elif t == "message" and it.get("role") in ("user", "assistant"):
                add(Item(role=it["role"], content=_text(it.get("content"))), (ii,))
    return items, where


def prefilter(api: str, body: dict[str, Any], config: Config) -> dict[str, Any] | None:
    """The request body with tool results dropped or truncated, or None when nothing changes."""
    items, where = to_items(api, body)
    result = run(items, config=config, meta={"surface": "proxy", "api": api, "step": "prefilter"})
    if result.status != "judged" or config.mode != "enforce":
        return None
    new = copy.deepcopy(body)
    keep_chars = config.tools.truncate_keep_chars
    drop: list[Locator] = []
    for v in result.results:
        if v.decision == "truncate":
            text = truncated(items[v.index].content, keep_chars)
            loc = where[v.index]
            if api == "anthropic":
                new["messages"][loc[0]]["content"][loc[1]]["content"] = text
            elif api == "chat":
                new["messages"][loc[0]]["content"] = text
            else:
                new["input"][loc[0]]["output"] = text
        elif v.decision == "drop":
            drop.append(where[v.index])
            if v.call_index is not None:
                drop.append(where[v.call_index])
    if not drop:
        return new if new != body else None
    if api == "anthropic":
        for mi, bi in sorted(drop, reverse=True):
            del new["messages"][mi]["content"][bi]
        new["messages"] = [m for m in new["messages"] if m.get("content")]
    elif api == "chat":
        gone_msgs = set()
        for mi, ti in sorted(drop, reverse=True):
            if ti is None:
                gone_msgs.add(mi)
            else:
                del new["messages"][mi]["tool_calls"][ti]
                m = new["messages"][mi]
                if not m["tool_calls"]:
                    del m["tool_calls"]
                    if not _text(m.get("content")):
                        gone_msgs.add(mi)
        new["messages"] = [m for i, m in enumerate(new["messages"]) if i not in gone_msgs]
    else:
        gone = {loc[0] for loc in drop}
        new["input"] = [it for i, it in enumerate(new["input"]) if i not in gone]
    return new
