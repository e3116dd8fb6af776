"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Lines are ``{timestamp, type, payload}``. The span of compaction t is every ``response_item`` since
compaction t-1; a ``compacted`` record's ``message`` is the handoff prefix plus the summary. With
OpenAI's own provider the summary is encrypted server-side and ``message`` is empty: nothing to
judge, and the boundary says so. The file is streamed; only the current span is held. Parallel
calls are items like any other (each output follows by ``call_id``), so all are in the span. A
rollout always opens with ``session_meta``: one that does not starts mid-session, and its first
span says so in ``incomplete``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hosts.base import Boundary, Item, choose

MID_SESSION = "the rollout starts mid-session (its first record is not the session's session_meta)"
ENCRYPTED = "the summary was made on the server and stored encrypted (message is empty): nothing to judge"
_INJECTED_USER = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions",
    "<user_shell_command>",
)


def looks_like(first: dict[str, Any]) -> bool:
    return "payload" in first and "type" in first


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _output_text(output: Any) -> tuple[str, bool]:
    """A function call's output: a string, a JSON string ``{"output", "metadata": {"exit_code"}}``, or a list."""
    if isinstance(output, list):
        return _content_text(output), False
    if isinstance(output, dict):
        output = json.dumps(output)
    if not isinstance(output, str):
        return "", False
    text, err = output, False
    if output.startswith("{"):
        try:
            obj = json.loads(output)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "output" in obj:
            text = obj["output"] if isinstance(obj["output"], str) else json.dumps(obj["output"])
            code = (obj.get("metadata") or {}).get("exit_code")
            err = isinstance(code, int) and code != 0
    return text, err


def _item(payload: dict[str, Any]) -> Item | None:
    t = payload.get("type")
    if t == "message":
        text = _content_text(payload.get("content"))
        role = payload.get("role")
        if not text.strip():
            return None
        if role == "user":
            if text.lstrip().startswith(_INJECTED_USER):
                return None
            return Item(role="user", content=text)
        if role == "assistant":
            return Item(role="assistant", content=text)
        return None
    if t == "reasoning":
        summary = payload.get("summary")
        text = _content_text(summary) if isinstance(summary, list) else ""
        return Item(role="assistant", content=text) if text.strip() else None
    if t in ("function_call", "custom_tool_call"):
        args = payload.get("arguments", payload.get("input", ""))
        return Item(
            role="tool_call",
            content=args if isinstance(args, str) else json.dumps(args),
            name=payload.get("name"),
            call_id=payload.get("call_id"),
        )
    if t == "local_shell_call":
        action = payload.get("action") or {}
        cmd = action.get("command") if isinstance(action, dict) else None
        return Item(
            role="tool_call",
            content=json.dumps({"command": cmd}),
            name="local_shell",
            call_id=payload.get("call_id") or payload.get("id"),
        )
    if t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        text, err = _output_text(payload.get("output"))
        return Item(role="tool_output", content=text, call_id=payload.get("call_id"), is_error=err)
    return None


def _lines(path: Path):
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    with fh:
        for raw in fh:
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict):
                yield rec


def boundary_count(path: str | Path) -> int:
    return sum(1 for rec in _lines(Path(path)) if rec.get("type") == "compacted")


def _boundary(
    span: list[Item], message: str, previous: str | None, session_id: str | None, index: int, cut: bool = False
) -> Boundary:
    names = {i.call_id: i.name for i in span if i.role == "tool_call"}
    for i in span:
        if i.role == "tool_output" and i.name is None:
            i.name = names.get(i.call_id)
    return Boundary(
        host="codex",
        index=index,
        summary=message,
        previous_summary=previous,
        span=span,
        session_id=session_id,
        boundary_id=f"{session_id}:{index}",
        note=None if message.strip() else ENCRYPTED,
        incomplete=MID_SESSION if cut and index == 0 else None,
    )


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    """Compaction ``index`` (newest when None) in one pass; a negative index needs the count first."""
    p = Path(path)
    if index is not None and index < 0:
        index = choose(p, boundary_count(p), index)
    span: list[Item] = []
    previous: str | None = None
    session_id: str | None = None
    newest: Boundary | None = None
    seen = 0
    cut: bool | None = None
    for rec in _lines(p):
        t = rec.get("type")
        if cut is None:
            cut = t != "session_meta"
        payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
        if t == "session_meta":
            session_id = session_id or payload.get("id")
        elif t == "response_item":
            it = _item(payload)
            if it is not None:
                span.append(it)
        elif t == "compacted":
            message = payload.get("message") or ""
            if seen == index:
                return _boundary(span, message, previous, session_id, index, bool(cut))
            if index is None:  # keep only the newest so far: memory stays one span
                newest = _boundary(span, message, previous, session_id, seen, bool(cut))
            seen += 1
            previous = message or None
            span = []
    if index is None:
        if newest is None:
            choose(p, 0, None)  # raises: no compaction in this transcript
        assert newest is not None
        return newest
    raise TranscriptError(f"{p}: boundary {index} does not exist; it has {seen}")
