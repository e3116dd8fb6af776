"""A generic transcript: JSON lines (or one JSON list) of ``{role, content, name?, call_id?}``.

Roles ``user``, ``assistant``, ``tool`` (an output; ``tool_call`` for calls) and ``system``. A
compaction is an item with ``type: "compaction"`` and a ``summary`` (OpenClaw's session entries), or
with role ``summary``. The file has no session id: its path stands for one (two files of the same name
are two sessions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts.base import Boundary, Item, choose, str_or_none

_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool_output",
    "tool_output": "tool_output",
    "function": "tool_output",
    "tool_call": "tool_call",
}


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    if raw.lstrip().startswith("["):
        try:
            data = json.loads(raw)
            return [d for d in data if isinstance(d, dict)]
        except (ValueError, RecursionError):
            raise TranscriptError(f"{path}: not valid JSON") from None
    out = []
    for line in raw.splitlines():
        try:
            d = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(d, dict):
            message = d.get("message")
            out.append(message if isinstance(message, dict) and "role" in message else d)
    return out


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_content(v.get("text", v.get("content", "")) if isinstance(v, dict) else v) for v in value)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _split(path: Path) -> list[tuple[list[Item], str]]:
    bounds: list[tuple[list[Item], str]] = []
    span: list[Item] = []
    for r in _records(path):
        if r.get("type") == "compaction" or r.get("role") == "summary":
            bounds.append((span, _content(r.get("summary", r.get("content")))))
            span = []
            continue
        role = _ROLES.get(str(r.get("role", "")).lower())
        if role is None:
            continue
        span.append(
            Item(
                role=role,  # type: ignore[arg-type]
                content=_content(r.get("content")),
                name=str_or_none(r.get("name")),
                call_id=str_or_none(r.get("call_id")) or str_or_none(r.get("tool_call_id")),
                is_error=bool(r.get("is_error")),
            )
        )
    return bounds


def boundary_count(path: str | Path) -> int:
    return len(_split(Path(path)))


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    bounds = _split(p)
    i = choose(p, len(bounds), index)
    span, summary = bounds[i]
    return Boundary(
        host="generic",
        index=i,
        summary=summary,
        previous_summary=bounds[i - 1][1] if i else None,
        span=span,
        session_id=str(p.resolve()),  # no session id in the file: the file is the session
        boundary_id=f"{p.name}:{i}",
    )


def meaning(items: list[Item]) -> list[Item]:
    """Items given as plain roles, as they are: a generic transcript has no host's own additions."""
    return items
