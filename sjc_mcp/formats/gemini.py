"""The Gemini API (``generativelanguage`` v1beta: ``POST …/models/M:generateContent`` and
``…:streamGenerateContent``): Gemini CLI's wire, and the content shape its chat files store.

A request is ``contents`` (``[{role: "user" | "model", parts}]``) and ``systemInstruction`` (``{parts}``, or a
string). A part is ``{text}`` (``thought: true`` for the model's thinking), ``{functionCall: {id?, name, args}}``
(the model's call) or ``{functionResponse: {id?, name, response}}`` (in a user content: the tool's output,
``response`` an object, usually ``{"output": …}`` or ``{"error": …}``). An answer is
``candidates[0].content.parts``, its text the non-thought text parts joined; ``:generateContent`` answers one
JSON object, ``:streamGenerateContent?alt=sse`` server-sent events of such objects (the text in pieces), and
without ``alt=sse`` a JSON array of them.

A pruned text goes back into the parts that held the text: each keeps its own share of it (the pruned text
is the original with whole entries deleted), a part left with nothing goes, and a streamed event left with
nothing at all goes; every event the text was not in keeps its bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sjc_mcp.formats import FormatError
from sjc_mcp.formats._parts import str_or_none
from sjc_mcp.models import Item

NAME = "gemini"
Locator = tuple[Any, ...]  # (content index, part index)


def matches(path: str) -> bool:
    return path.endswith((":generateContent", ":streamGenerateContent"))


def parts_of(content: Any) -> list[Any]:
    """A content's parts (a chat file may store a content as a string or a single part)."""
    if isinstance(content, dict) and "parts" in content:
        content = content["parts"]
    if isinstance(content, list):
        return content
    if isinstance(content, (str, dict)):
        return [content]
    return []


def is_text(part: Any) -> bool:
    """A text part that is not the model's thinking."""
    return isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")


def text_of(content: Any) -> str:
    """The text of a content: its non-thought text parts joined, as Gemini CLI reads an answer."""
    return "".join(
        p if isinstance(p, str) else p["text"] for p in parts_of(content) if isinstance(p, str) or is_text(p)
    )


def response_text(response: Any) -> str:
    """A function response's text: its ``output`` or ``error`` string, else the response as JSON."""
    if isinstance(response, dict):
        for key in ("output", "error"):
            if isinstance(response.get(key), str) and len(response) == 1:
                return str(response[key])
        if isinstance(response.get("output"), str):
            return str(response["output"])
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)


def part_item(role: str, part: Any) -> Item | None:
    """One part as an item: text as the role's words (user or assistant), a ``functionCall`` as a call (its
    args as JSON), a ``functionResponse`` as an output; anything else (thinking, inline data) None."""
    if isinstance(part, str):
        part = {"text": part}
    if not isinstance(part, dict):
        return None
    fr, fc = part.get("functionResponse"), part.get("functionCall")
    if isinstance(fr, dict):
        resp = fr.get("response")
        return Item(
            role="tool_output",
            content=response_text(resp),
            name=str_or_none(fr.get("name")),
            call_id=str_or_none(fr.get("id")),
            is_error=isinstance(resp, dict) and "error" in resp and "output" not in resp,
        )
    if isinstance(fc, dict):
        args = fc.get("args", {})
        return Item(
            role="tool_call",
            content=json.dumps(args, ensure_ascii=False),
            name=str_or_none(fc.get("name")),
            call_id=str_or_none(fc.get("id")),
        )
    if is_text(part):
        return Item(role="user" if role == "user" else "assistant", content=part["text"])
    return None


def content_items(content: Any, role: str | None = None) -> list[tuple[Item, int]]:
    """The items of one content with the index of the part each came from."""
    who = role or (content.get("role") if isinstance(content, dict) else None) or "user"
    out = []
    for i, p in enumerate(parts_of(content)):
        item = part_item(who, p)
        if item is not None:
            out.append((item, i))
    return out


def history(body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    items: list[Item] = []
    where: list[Locator] = []
    contents = body.get("contents")
    for ci, c in enumerate(contents if isinstance(contents, list) else []):
        for item, pi in content_items(c):
            items.append(item)
            where.append((ci, pi))
    return items, where


def system_texts(body: dict[str, Any]) -> list[str]:
    si = body.get("systemInstruction", body.get("system_instruction"))
    text = si if isinstance(si, str) else text_of(si) if isinstance(si, (dict, list)) else ""
    return [text] if text else []


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user content that has text (a content of function responses is the tool's)."""
    contents = body.get("contents")
    for c in reversed(contents if isinstance(contents, list) else []):
        if isinstance(c, dict) and c.get("role", "user") == "user" and (text := text_of(c)):
            return text
    return ""


def set_output(body: dict[str, Any], loc: Locator, text: str) -> None:
    fr = body["contents"][loc[0]]["parts"][loc[1]]["functionResponse"]
    resp = fr.get("response")
    fr["response"] = {**resp, "output": text} if isinstance(resp, dict) and "output" in resp else {"output": text}


def drop(body: dict[str, Any], locs: list[Locator]) -> None:
    """Remove the parts at ``locs``; a content left with no part goes."""
    for ci, pi in sorted(locs, reverse=True):
        del body["contents"][ci]["parts"][pi]
    body["contents"] = [c for c in body["contents"] if not isinstance(c, dict) or c.get("parts")]


# ---- answers ---------------------------------------------------------------------------------------------


def _answer_parts(obj: Any) -> list[dict[str, Any]]:
    """The text parts of ``candidates[0]`` of one answer object (in place, to be edited)."""
    if not isinstance(obj, dict):
        return []
    cands = obj.get("candidates")
    first = cands[0] if isinstance(cands, list) and cands and isinstance(cands[0], dict) else None
    content = first.get("content") if first is not None else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if is_text(p)] if isinstance(parts, list) else []


_EVENT = re.compile(rb"(.*?)(\r\n\r\n|\n\n|\r\r|\Z)", re.S)
_DATA = re.compile(rb"^data:[ ]?(.*?)(\r?)$", re.M)


def _events(raw: bytes) -> list[tuple[bytes, bytes]]:
    """Server-sent events as (block, the separator after it), so that joined they are ``raw`` again."""
    out = []
    pos = 0
    while pos < len(raw):
        m = _EVENT.match(raw, pos)
        if m is None or m.end() == pos:
            break
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    return out


def _event_json(block: bytes) -> Any:
    lines = [m.group(1) for m in _DATA.finditer(block)]
    if not lines:
        return None
    try:
        return json.loads(b"\n".join(lines))
    except ValueError:
        return None


def _objects(raw: bytes, stream: bool) -> list[Any]:
    if stream:
        return [_event_json(block) for block, _ in _events(raw)]
    body = json.loads(raw)
    return body if isinstance(body, list) else [body]


def answer_text(raw: bytes, stream: bool) -> str:
    return "".join(p["text"] for obj in _objects(raw, stream) for p in _answer_parts(obj))


def _shares(pieces: list[str], text: str) -> list[str] | None:
    """``text`` cut into one share per piece, each share a subsequence of its piece (``text`` is the pieces
    joined with some characters deleted); None when it is not."""
    out = []
    j = 0
    for piece in pieces:
        kept = []
        for ch in piece:
            if j < len(text) and text[j] == ch:
                kept.append(ch)
                j += 1
        out.append("".join(kept))
    return out if j == len(text) else None


def _place(objs: list[Any], text: str) -> list[bool]:
    """Put ``text`` into the answers' text parts (each keeping its share); which objects changed."""
    located = [(oi, p) for oi, obj in enumerate(objs) for p in _answer_parts(obj)]
    if not located:
        raise FormatError("no text part in the Gemini answer")
    shares = _shares([p["text"] for _, p in located], text)
    if shares is None:  # not the original with deletions: all of it in the first part
        shares = [text] + [""] * (len(located) - 1)
    changed = [False] * len(objs)
    for (oi, p), share in zip(located, shares, strict=True):
        if p["text"] != share:
            p["text"] = share
            changed[oi] = True
    for oi, obj in enumerate(objs):
        if changed[oi]:
            _drop_empty(obj)
    return changed


def _drop_empty(obj: dict[str, Any]) -> None:
    """Text parts left empty go, unless the content would be left with no part at all."""
    content = obj["candidates"][0]["content"]
    kept = [p for p in content["parts"] if not (is_text(p) and p["text"] == "")]
    content["parts"] = kept or content["parts"][:1]


def _empty_event(obj: Any) -> bool:
    """A streamed answer object that says nothing once its text is gone: one candidate whose content holds only
    an empty text part, no finish reason, no usage or anything else."""
    if not isinstance(obj, dict) or set(obj) - {"candidates", "modelVersion", "responseId", "createTime"}:
        return False
    cands = obj.get("candidates")
    if not isinstance(cands, list) or len(cands) != 1 or not isinstance(cands[0], dict):
        return False
    cand = cands[0]
    if set(cand) - {"content", "index"}:
        return False
    parts = (cand.get("content") or {}).get("parts")
    return isinstance(parts, list) and all(is_text(p) and p["text"] == "" for p in parts)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def replace_answer(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        objs = body if isinstance(body, list) else [body]
        _place(objs, text)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    events = _events(raw)
    objs = [_event_json(block) for block, _ in events]
    changed = _place(objs, text)
    out = []
    for (block, sep), obj, edited in zip(events, objs, changed, strict=True):
        if not edited:
            out.append(block + sep)
        elif not _empty_event(obj):
            data = [m for m in _DATA.finditer(block)]
            first, last = data[0], data[-1]
            out.append(block[: first.start()] + b"data: " + _dumps(obj) + first.group(2) + block[last.end() :] + sep)
    return b"".join(out)
