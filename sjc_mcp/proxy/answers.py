"""The three wire formats a compaction answer can come back in, streamed or not: pull the summary text
out, and put a pruned text back in its place while every other byte of the answer (ids, usage figures,
stop reasons, other content blocks) stays as the upstream sent it.

- Anthropic Messages: JSON ``content`` text blocks; SSE ``content_block_delta`` ``text_delta`` events.
- OpenAI Chat Completions: ``choices[0].message.content``; SSE chunks with ``choices[0].delta.content``.
- OpenAI Responses: ``output[].content[]`` parts of type ``output_text``; SSE ``response.output_text.delta``
  events, with the final texts repeated in the ``.done`` events and ``response.completed``.
"""

from __future__ import annotations

import json
from typing import Any


class FormatError(ValueError):
    """The answer is not in the shape this format expects."""


# -- server-sent events -------------------------------------------------------------------------------


def parse_sse(raw: bytes) -> list[dict[str, Any]]:
    """Events as ``{"event": name|None, "data": str|None, "lines": [other lines]}``, in order."""
    text = raw.decode("utf-8").replace("\r\n", "\n")
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        ev: dict[str, Any] = {"event": None, "data": None, "lines": []}
        data = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                ev["event"] = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line.startswith("data: ") or line.startswith("data:") else line)
            else:
                ev["lines"].append(line)
        ev["data"] = "\n".join(data) if data else None
        out.append(ev)
    return out


def render_sse(events: list[dict[str, Any]]) -> bytes:
    blocks = []
    for ev in events:
        lines = list(ev.get("lines") or [])
        if ev.get("event"):
            lines.append(f"event: {ev['event']}")
        if ev.get("data") is not None:
            lines += [f"data: {part}" for part in ev["data"].split("\n")]
        blocks.append("\n".join(lines))
    return ("\n\n".join(blocks) + "\n\n").encode("utf-8")


def _json(ev: dict[str, Any]) -> dict[str, Any] | None:
    if ev.get("data") in (None, "[DONE]"):
        return None
    try:
        obj = json.loads(ev["data"])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _set(ev: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    return {**ev, "data": json.dumps(obj, ensure_ascii=False, separators=(",", ":"))}


# -- Anthropic Messages ----------------------------------------------------------------------------------


def anthropic_text(raw: bytes, stream: bool) -> str:
    if not stream:
        body = json.loads(raw)
        return "".join(b.get("text", "") for b in body.get("content", []) if b.get("type") == "text")
    parts: list[str] = []
    for ev in parse_sse(raw):
        obj = _json(ev)
        if obj and obj.get("type") == "content_block_delta" and (obj.get("delta") or {}).get("type") == "text_delta":
            parts.append(obj["delta"].get("text", ""))
    return "".join(parts)


def anthropic_replace(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        first = True
        for b in body.get("content", []):
            if b.get("type") == "text":
                b["text"], first = (text if first else ""), False
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    events = parse_sse(raw)
    out: list[dict[str, Any]] = []
    placed = False
    for ev in events:
        obj = _json(ev)
        if obj and obj.get("type") == "content_block_delta" and (obj.get("delta") or {}).get("type") == "text_delta":
            if not placed:  # the whole pruned text, as the first text delta of the first text block
                obj["delta"]["text"] = text
                out.append(_set(ev, obj))
                placed = True
            continue
        out.append(ev)
    if not placed:
        raise FormatError("no text delta in the Anthropic stream")
    return render_sse(out)


# -- OpenAI Chat Completions --------------------------------------------------------------------------------


def chat_text(raw: bytes, stream: bool) -> str:
    if not stream:
        body = json.loads(raw)
        return ((body.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    parts = []
    for ev in parse_sse(raw):
        obj = _json(ev)
        for ch in (obj or {}).get("choices") or []:
            if ch.get("index", 0) == 0 and isinstance((ch.get("delta") or {}).get("content"), str):
                parts.append(ch["delta"]["content"])
    return "".join(parts)


def chat_replace(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        body["choices"][0]["message"]["content"] = text
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out = []
    placed = False
    for ev in parse_sse(raw):
        obj = _json(ev)
        changed = False
        for ch in (obj or {}).get("choices") or []:
            delta = ch.get("delta") or {}
            if ch.get("index", 0) == 0 and isinstance(delta.get("content"), str):
                delta["content"], placed = (text if not placed else ""), True
                changed = True
        out.append(_set(ev, obj) if changed and obj is not None else ev)
    if not placed:
        raise FormatError("no content delta in the chat completion stream")
    return render_sse(out)


# -- OpenAI Responses ------------------------------------------------------------------------------------------


def _output_texts(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        c
        for item in output or []
        if item.get("type") == "message"
        for c in item.get("content") or []
        if c.get("type") == "output_text"
    ]


def responses_text(raw: bytes, stream: bool) -> str:
    if not stream:
        return "".join(c.get("text", "") for c in _output_texts(json.loads(raw).get("output")))
    return "".join(
        obj["delta"]
        for ev in parse_sse(raw)
        if (obj := _json(ev)) and obj.get("type") == "response.output_text.delta" and isinstance(obj.get("delta"), str)
    )


def _fill(parts: list[dict[str, Any]], text: str) -> None:
    for i, c in enumerate(parts):
        c["text"] = text if i == 0 else ""


def responses_replace(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        _fill(_output_texts(body.get("output")), text)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out = []
    first_part: tuple[Any, Any] | None = None  # (item_id, content_index) that receives the text
    for ev in parse_sse(raw):
        obj = _json(ev)
        kind = (obj or {}).get("type")
        if obj is None:
            out.append(ev)
            continue
        if kind == "response.output_text.delta":
            if first_part is None:
                first_part = (obj.get("item_id"), obj.get("content_index"))
                obj["delta"] = text
                out.append(_set(ev, obj))
            continue  # the rest of the deltas are in the one above
        if kind == "response.output_text.done":
            obj["text"] = text if (obj.get("item_id"), obj.get("content_index")) == first_part else ""
        elif kind == "response.content_part.done" and (obj.get("part") or {}).get("type") == "output_text":
            obj["part"]["text"] = text if (obj.get("item_id"), obj.get("content_index")) == first_part else ""
        elif kind == "response.output_item.done" and (obj.get("item") or {}).get("type") == "message":
            _fill(
                _output_texts([obj["item"]]),
                text if (obj["item"].get("id"), 0) == (first_part[0] if first_part else None, 0) else "",
            )
        elif kind in ("response.completed", "response.incomplete") and isinstance(obj.get("response"), dict):
            _fill(_output_texts(obj["response"].get("output")), text)
        out.append(_set(ev, obj))
    if first_part is None:
        raise FormatError("no output text delta in the Responses stream")
    seq = 0
    for i, ev in enumerate(out):  # events were dropped: number them again
        obj = _json(ev)
        if obj is not None and "sequence_number" in obj:
            obj["sequence_number"] = seq
            seq += 1
            out[i] = _set(ev, obj)
    return render_sse(out)


FORMATS = {
    "anthropic": (anthropic_text, anthropic_replace),
    "chat": (chat_text, chat_replace),
    "responses": (responses_text, responses_replace),
}
