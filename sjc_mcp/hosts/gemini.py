"""Gemini CLI chat files: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (0.61.0), or one JSON object with
``messages`` (earlier versions).

What Gemini CLI 0.61.0 writes (``tests/e2e/test_gemini_transcript.py`` checks it): a metadata line
``{sessionId, projectHash, startTime, …}`` (again at each resume); message records ``{id, type: "user" |
"gemini" | "info", content, toolCalls?, …}``, appended and appended again under the same ``id`` as they change;
function responses as ``type: "user"`` records of their own (``content: [{functionResponse}]``); and
``{"$set": {…}}`` updates, whose ``messages`` is the whole history as the client holds it, in API form
(``content`` a list of parts). The compression's ``<state_snapshot>`` is written only there: a ``user`` message
between the ``<session_context>`` message and the model's "Got it. Thanks for the additional context!"; the
turns kept after it get new ids.

So a message is its last write (by ``id``), in the order ids first appear; a user message holding the
snapshot is a boundary; function responses are tool outputs (never the user's words), each call and output
taken once per span (the same result comes from ``toolCalls[].result``, its own record and ``$set``); the
``<session_context>`` message and ``<hook_context>`` parts are the CLI's and hooks' text, not the user's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts.base import Boundary, Item, choose

SNAPSHOT = "<state_snapshot>"
ENV = "<session_context>"
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.S)
_UNTRUSTED = re.compile(r"\A\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*\Z", re.S)


def looks_like(first: dict[str, Any]) -> bool:
    return (
        first.get("type") in ("gemini", "info")
        or ("messages" in first and "sessionId" in first)
        or "projectHash" in first
        or isinstance(first.get("$set"), dict)
    )


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    if raw.lstrip().startswith("{") and '"messages"' in raw[:4096]:
        try:
            obj = json.loads(raw)  # one JSON object (earlier versions)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            return [obj]
    out = []
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def messages(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """Every message at its last write, in the order their ids first appear, and the session id."""
    by_id: dict[str, dict[str, Any]] = {}
    session: str | None = None
    anon = 0

    def put(m: Any) -> None:
        nonlocal anon
        if not isinstance(m, dict) or not (m.get("type") or m.get("role")):
            return
        key = m.get("id")
        if not isinstance(key, str) or not key:
            anon += 1
            key = f"\0{anon}"
        by_id[key] = m

    for rec in _read(path):
        if isinstance(rec.get("sessionId"), str) and rec["sessionId"]:
            session = rec["sessionId"]
        sets = rec.get("$set")
        if isinstance(sets, dict):
            if isinstance(sets.get("sessionId"), str) and sets["sessionId"]:
                session = sets["sessionId"]
            listed = sets.get("messages")
            for m in listed if isinstance(listed, list) else []:
                put(m)
        elif isinstance(rec.get("messages"), list):
            for m in rec["messages"]:
                put(m)
        elif "type" in rec or "role" in rec:
            put(rec)
    return list(by_id.values()), session


def _parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    if isinstance(content, (str, dict)):
        return [content]
    return []


def output_text(response: Any) -> str:
    """A function response's text: ``output`` without the CLI's ``<untrusted_context>`` wrapper, else the JSON."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        text = response["output"]
        m = _UNTRUSTED.match(text)
        return m.group(1) if m else text
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)


def _result_text(result: Any) -> str | None:
    """A ``toolCalls[].result``: functionResponse parts (0.61.0), or a plain string or object (earlier)."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    texts = []
    for p in _parts(result):
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
            texts.append(output_text(p["functionResponse"].get("response")))
        elif isinstance(p, dict) and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif isinstance(p, str):
            texts.append(p)
        elif isinstance(p, dict):
            texts.append(output_text(p))
    return "\n".join(texts)


def _text(m: dict[str, Any]) -> str:
    return "".join(
        p if isinstance(p, str) else p["text"]
        for p in _parts(m.get("content", m.get("parts")))
        if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"))
    )


def is_snapshot(m: dict[str, Any]) -> bool:
    return (m.get("type") or m.get("role")) == "user" and SNAPSHOT in _text(m)


def _items(m: dict[str, Any]) -> list[Item]:
    kind = m.get("type") or m.get("role")
    out: list[Item] = []
    for p in _parts(m.get("content", m.get("parts"))):
        if isinstance(p, str):
            p = {"text": p}
        if not isinstance(p, dict):
            continue
        fr, fc = p.get("functionResponse"), p.get("functionCall")
        if isinstance(fr, dict):
            resp = fr.get("response")
            out.append(
                Item(
                    role="tool_output",
                    content=output_text(resp),
                    name=fr.get("name") if isinstance(fr.get("name"), str) else None,
                    call_id=fr.get("id") if isinstance(fr.get("id"), str) else None,
                    is_error=isinstance(resp, dict) and "error" in resp,
                )
            )
        elif isinstance(fc, dict):
            out.append(
                Item(
                    role="tool_call",
                    content=json.dumps(fc.get("args", {}), ensure_ascii=False),
                    name=fc.get("name") if isinstance(fc.get("name"), str) else None,
                    call_id=fc.get("id") if isinstance(fc.get("id"), str) else None,
                )
            )
        elif isinstance(p.get("text"), str) and not p.get("thought"):
            text = p["text"]
            if kind == "user":
                if text.lstrip().startswith(ENV):
                    continue
                text = _HOOK_CONTEXT.sub("", text)
                if text.strip():
                    out.append(Item(role="user", content=text))
            elif kind in ("gemini", "model", "assistant") and text.strip():
                out.append(Item(role="assistant", content=text))
    if kind in ("gemini", "model", "assistant"):
        for tc in m.get("toolCalls") or []:
            if not isinstance(tc, dict):
                continue
            cid = tc.get("id") if isinstance(tc.get("id"), str) else None
            name = tc.get("name") if isinstance(tc.get("name"), str) else None
            out.append(
                Item(
                    role="tool_call", content=json.dumps(tc.get("args", {}), ensure_ascii=False), name=name, call_id=cid
                )
            )
            text = _result_text(tc.get("result"))
            if text is None and isinstance(tc.get("resultDisplay"), str):
                text = tc["resultDisplay"]
            if text is not None:
                out.append(
                    Item(role="tool_output", content=text, name=name, call_id=cid, is_error=tc.get("status") == "error")
                )
    return out


def _split(path: Path) -> tuple[list[tuple[list[Item], str]], list[Item], str | None]:
    """(span, snapshot) per boundary, the items after the last one, and the session id."""
    msgs, session = messages(path)
    bounds: list[tuple[list[Item], str]] = []
    span: list[Item] = []
    seen: set[tuple[str, str]] = set()
    for m in msgs:
        if is_snapshot(m):
            bounds.append((span, _text(m)))
            span, seen = [], set()
            continue
        for it in _items(m):
            if it.role in ("tool_call", "tool_output"):
                key = (it.role, it.call_id or f"{it.name}\0{it.content}")
                if key in seen:
                    continue
                seen.add(key)
            span.append(it)
    return bounds, span, session


def boundary_count(path: str | Path) -> int:
    return len(_split(Path(path))[0])


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    bounds, _, session = _split(p)
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


def read_open_span(path: str | Path) -> Boundary:
    """What follows the newest snapshot (the whole session when it has none): the span a compression about
    to be written, or just written elsewhere, summarised. ``summary`` is empty; ``previous_summary`` is the
    newest snapshot."""
    p = Path(path)
    bounds, rest, session = _split(p)
    return Boundary(
        host="gemini",
        index=len(bounds),
        summary="",
        previous_summary=bounds[-1][1] if bounds else None,
        span=rest,
        session_id=session,
        boundary_id=f"{session}:{len(bounds)}",
    )
