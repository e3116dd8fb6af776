"""The OpenAI Responses API (``POST …/responses``): Codex's wire, and the item shape its rollouts store.

``input`` is a string or items: ``message {role, content: [input_text|output_text]}``, the model's calls
(``function_call {name, arguments, call_id}``, ``custom_tool_call {name, input}``, ``local_shell_call
{action: {command}}``) and their outputs (``…_output {call_id, output}``, the output a string, a JSON
string ``{"output", "metadata": {"exit_code"}}`` as Codex writes it, or content parts), ``reasoning``
(the model's summary of its thinking). The system prompt is ``instructions``. An answer is ``output[]``
message parts of type ``output_text``, or, streamed, ``response.output_text.delta`` events whose texts the
``.done`` events and ``response.completed`` repeat.
"""

from __future__ import annotations

import json
from typing import Any

from sjc_mcp.formats import FormatError, sse
from sjc_mcp.formats._parts import last_text, str_or_none, text_of
from sjc_mcp.models import Item

NAME = "responses"
Locator = tuple[Any, ...]
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def matches(path: str) -> bool:
    return path.endswith(("/responses", "/responses/compact"))


def output_text(output: Any) -> tuple[str, bool]:
    """A call's output and whether it failed: a string, Codex's JSON ``{"output", "metadata": {"exit_code"}}``
    (a non-zero exit code is a failure), or content parts."""
    if isinstance(output, list):
        return text_of(output), False
    if isinstance(output, dict):
        output = json.dumps(output, ensure_ascii=False)
    if not isinstance(output, str):
        return "", False
    if output.startswith("{"):
        try:
            obj = json.loads(output)
        except (ValueError, RecursionError):
            return output, False
        if isinstance(obj, dict) and "output" in obj:
            inner = obj["output"]
            code = (obj.get("metadata") or {}).get("exit_code") if isinstance(obj.get("metadata"), dict) else None
            text = inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
            return text, isinstance(code, int) and code != 0
    return output, False


def item(payload: dict[str, Any]) -> Item | None:
    """One input item as an ``Item`` (None for what is no message, call or output: a reasoning item with
    no summary, a compaction trigger, an unknown type). An empty message is None too."""
    t = payload.get("type", "message")
    if t == "message":
        role = payload.get("role")
        text = text_of(payload.get("content"))
        if role not in ("user", "assistant") or not text.strip():
            return None
        return Item(role=role, content=text)
    if t == "reasoning":
        summary = payload.get("summary")
        text = text_of(summary) if isinstance(summary, list) else ""
        return Item(role="assistant", content=text) if text.strip() else None
    if t in ("function_call", "custom_tool_call"):
        args = payload.get("arguments", payload.get("input", ""))
        return Item(
            role="tool_call",
            content=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
            name=str_or_none(payload.get("name")),
            call_id=str_or_none(payload.get("call_id")),
        )
    if t == "local_shell_call":
        action: dict[str, Any] = payload["action"] if isinstance(payload.get("action"), dict) else {}
        return Item(
            role="tool_call",
            content=json.dumps({"command": action.get("command")}, ensure_ascii=False),
            name="local_shell",
            call_id=str_or_none(payload.get("call_id")) or str_or_none(payload.get("id")),
        )
    if t in OUTPUTS:
        text, failed = output_text(payload.get("output"))
        return Item(role="tool_output", content=text, call_id=str_or_none(payload.get("call_id")), is_error=failed)
    return None


def history(body: dict[str, Any]) -> tuple[list[Item], list[Locator]]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [Item(role="user", content=raw)], [(None,)]
    items: list[Item] = []
    where: list[Locator] = []
    for ii, it in enumerate(raw if isinstance(raw, list) else []):
        found = item(it) if isinstance(it, dict) else None
        if found is not None:
            items.append(found)
            where.append((ii,))
    return items, where


def system_texts(body: dict[str, Any]) -> list[str]:
    out = [body["instructions"]] if isinstance(body.get("instructions"), str) and body["instructions"] else []
    raw = body.get("input")
    for m in raw if isinstance(raw, list) else []:
        if isinstance(m, dict) and m.get("role") in ("system", "developer") and (t := text_of(m.get("content"))):
            out.append(t)
    return out


def last_user_text(body: dict[str, Any]) -> str:
    raw = body.get("input")
    if isinstance(raw, str):
        return raw
    for m in reversed(raw if isinstance(raw, list) else []):
        if isinstance(m, dict) and m.get("role") == "user":
            return last_text(m.get("content"))
    return ""


def server_side(body: dict[str, Any], path: str = "") -> bool:
    """A compaction the provider makes on its server (it answers with an encrypted item): nothing to prune."""
    raw = body.get("input")
    last = raw[-1] if isinstance(raw, list) and raw else None
    return path.endswith("/responses/compact") or (isinstance(last, dict) and last.get("type") == "compaction_trigger")


def set_output(body: dict[str, Any], loc: Locator, text: str) -> None:
    body["input"][loc[0]]["output"] = text


def drop(body: dict[str, Any], locs: list[Locator]) -> None:
    gone = {loc[0] for loc in locs}
    body["input"] = [it for i, it in enumerate(body["input"]) if i not in gone]


def _output_texts(output: Any) -> list[dict[str, Any]]:
    return [
        c
        for it in (output if isinstance(output, list) else [])
        if isinstance(it, dict) and it.get("type") == "message"
        for c in it.get("content") or []
        if isinstance(c, dict) and c.get("type") == "output_text"
    ]


def answer_text(raw: bytes, stream: bool) -> str:
    if not stream:
        return "".join(c.get("text", "") for c in _output_texts(json.loads(raw).get("output")))
    return "".join(
        obj["delta"]
        for ev in sse.parse(raw)
        if (obj := sse.data_json(ev))
        and obj.get("type") == "response.output_text.delta"
        and isinstance(obj.get("delta"), str)
    )


def _fill(parts: list[dict[str, Any]], text: str) -> None:
    for i, c in enumerate(parts):
        c["text"] = text if i == 0 else ""


def replace_answer(raw: bytes, stream: bool, text: str) -> bytes:
    if not stream:
        body = json.loads(raw)
        _fill(_output_texts(body.get("output")), text)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out = []
    first: tuple[Any, Any] | None = None  # (item_id, content_index) that receives the text
    for ev in sse.parse(raw):
        obj = sse.data_json(ev)
        if obj is None:
            out.append(ev)
            continue
        kind = obj.get("type")
        if kind == "response.output_text.delta":
            if first is None:
                first = (obj.get("item_id"), obj.get("content_index"))
                obj["delta"] = text
                out.append(sse.with_json(ev, obj))
            continue  # the rest of the deltas are in the one above
        if kind == "response.output_text.done":
            obj["text"] = text if (obj.get("item_id"), obj.get("content_index")) == first else ""
        elif kind == "response.content_part.done" and (obj.get("part") or {}).get("type") == "output_text":
            obj["part"]["text"] = text if (obj.get("item_id"), obj.get("content_index")) == first else ""
        elif kind == "response.output_item.done" and (obj.get("item") or {}).get("type") == "message":
            _fill(
                _output_texts([obj["item"]]),
                text if (obj["item"].get("id"), 0) == (first[0] if first else None, 0) else "",
            )
        elif kind in ("response.completed", "response.incomplete") and isinstance(obj.get("response"), dict):
            _fill(_output_texts(obj["response"].get("output")), text)
        out.append(sse.with_json(ev, obj))
    if first is None:
        raise FormatError("no output text delta in the Responses stream")
    seq = 0
    for i, ev in enumerate(out):  # events were dropped: number them again
        obj = sse.data_json(ev)
        if obj is not None and "sequence_number" in obj:
            obj["sequence_number"] = seq
            seq += 1
            out[i] = sse.with_json(ev, obj)
    return sse.render(out)
