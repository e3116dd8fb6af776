"""Server-sent events, as the model APIs stream their answers: parsed into events and written back."""

from __future__ import annotations

import json
from typing import Any


def parse(raw: bytes) -> list[dict[str, Any]]:
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
                data.append(line[5:].lstrip(" "))
            else:
                ev["lines"].append(line)
        ev["data"] = "\n".join(data) if data else None
        out.append(ev)
    return out


def render(events: list[dict[str, Any]]) -> bytes:
    blocks = []
    for ev in events:
        lines = list(ev.get("lines") or [])
        if ev.get("event"):
            lines.append(f"event: {ev['event']}")
        if ev.get("data") is not None:
            lines += [f"data: {part}" for part in ev["data"].split("\n")]
        blocks.append("\n".join(lines))
    return ("\n\n".join(blocks) + "\n\n").encode("utf-8")


def data_json(ev: dict[str, Any]) -> dict[str, Any] | None:
    """An event's data as a JSON object, or None (no data, ``[DONE]``, not an object)."""
    if ev.get("data") in (None, "[DONE]"):
        return None
    try:
        obj = json.loads(ev["data"])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def with_json(ev: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    return {**ev, "data": json.dumps(obj, ensure_ascii=False, separators=(",", ":"))}
