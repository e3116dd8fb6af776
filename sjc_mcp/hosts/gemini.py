"""Gemini CLI session logs (``~/.gemini/tmp/<hash>/chats/session-*.json[l]``).

Messages are ``{type: "user" | "gemini" | "info", content, toolCalls: [{id, name, args, result…}]}``,
one per line (JSONL) or under ``messages`` of one JSON object. After compression the history
restarts with a user turn holding the ``<state_snapshot>``: that turn is the boundary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts.base import Boundary, Item, choose


def looks_like(first: dict[str, Any]) -> bool:
    return (
        first.get("type") in ("gemini", "info")
        or ("messages" in first and "sessionId" in first)
        or ("projectHash" in first)
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        fr = content.get("functionResponse")
        if isinstance(fr, dict):
            resp = fr.get("response")
            if isinstance(resp, dict) and "output" in resp:
                return _text(resp["output"])
            return json.dumps(resp, ensure_ascii=False)
    return "" if content is None else str(content)


def _messages(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    stripped = raw.lstrip()
    if stripped.startswith("{") and '"messages"' in raw[:4096]:
        try:
            obj = json.loads(raw)
            if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
                return [m for m in obj["messages"] if isinstance(m, dict)]
        except (ValueError, RecursionError):
            pass
    out = []
    for line in raw.splitlines():
        try:
            m = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(m, dict) and "messages" not in m:
            out.append(m)
    return out


def _items(m: dict[str, Any]) -> list[Item]:
    kind = m.get("type") or m.get("role")
    text = _text(m.get("content", m.get("parts")))
    out: list[Item] = []
    if kind == "user" and text.strip():
        out.append(Item(role="user", content=text))
    elif kind in ("gemini", "model", "assistant"):
        if text.strip():
            out.append(Item(role="assistant", content=text))
        for tc in m.get("toolCalls") or []:
            if not isinstance(tc, dict):
                continue
            cid = tc.get("id")
            out.append(
                Item(
                    role="tool_call",
                    content=json.dumps(tc.get("args", {}), ensure_ascii=False),
                    name=tc.get("name"),
                    call_id=cid,
                )
            )
            result = _text(tc.get("result")) or _text(tc.get("resultDisplay"))
            out.append(
                Item(
                    role="tool_output",
                    content=result,
                    name=tc.get("name"),
                    call_id=cid,
                    is_error=tc.get("status") == "error",
                )
            )
    return out


def _split(path: Path) -> tuple[list[tuple[list[Item], str]], str | None]:
    msgs = _messages(path)
    session = next((m.get("sessionId") for m in msgs if m.get("sessionId")), None)
    bounds: list[tuple[list[Item], str]] = []
    span: list[Item] = []
    for m in msgs:
        text = _text(m.get("content", m.get("parts")))
        if (m.get("type") or m.get("role")) == "user" and "<state_snapshot>" in text:
            bounds.append((span, text))
            span = []
            continue
        span.extend(_items(m))
    return bounds, session


def boundary_count(path: str | Path) -> int:
    return len(_split(Path(path))[0])


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    bounds, session = _split(p)
    i = choose(p, len(bounds), index)
    span, summary = bounds[i]
    return Boundary(
        host="gemini",
        index=i,
        summary=summary,
        previous_summary=bounds[i - 1][1] if i else None,
        span=span,
        session_id=session,
        boundary_id=f"{session}:{i}",
    )
