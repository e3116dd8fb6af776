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
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.formats import Compaction, RawRequest, WireRequest, openai_responses
from sjc_mcp.hosts.base import Boundary, Item, by_pattern, choose, plain_boundary, str_or_none

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


def is_injected(text: str) -> bool:
    """A user-role text Codex writes itself (environment, AGENTS.md, permissions), not the user's words."""
    return text.lstrip().startswith(_INJECTED_USER)


def meaning(items: list[Item]) -> list[Item]:
    """Items given as plain roles (a labelled case's span) as Codex means them: the user-role texts it writes
    itself (environment, AGENTS.md, permissions) are no one's words; a call's output written as Codex's JSON
    ``{"output", "metadata": {"exit_code"}}`` is its output, failed when the exit code is not 0, as the
    rollout reader reads it."""
    out: list[Item] = []
    for it in items:
        if it.role == "user" and is_injected(it.content):
            continue
        if it.role == "tool_output":
            text, failed = openai_responses.output_text(it.content)
            it = replace(it, content=text, is_error=it.is_error or failed)
        out.append(it)
    return out


def _item(payload: dict[str, Any]) -> Item | None:
    """A rollout ``response_item`` as an item (``formats.openai_responses``), Codex's own user-role texts
    left out."""
    it = openai_responses.item(payload)
    if it is not None and it.role == "user" and is_injected(it.content):
        return None
    return it


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


def _about(b: Boundary, about: Boundary) -> Boundary:
    b.project, b.first_prompt, b.started = about.project, about.first_prompt, about.started
    return b


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
    about = Boundary(host="codex", index=0, summary="")  # the session as a person knows it
    for rec in _lines(p):
        t = rec.get("type")
        if cut is None:
            cut = t != "session_meta"
        payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
        about.started = about.started or str_or_none(rec.get("timestamp"))
        if t == "session_meta":
            session_id = session_id or str_or_none(payload.get("id"))
            about.project = about.project or str_or_none(payload.get("cwd"))
        elif t == "response_item":
            it = _item(payload)
            if it is not None:
                span.append(it)
                if it.role == "user" and about.first_prompt is None and it.content.strip():
                    about.first_prompt = it.content.strip()
        elif t == "compacted":
            message = str_or_none(payload.get("message")) or ""
            if seen == index:
                return _about(_boundary(span, message, previous, session_id, index, bool(cut)), about)
            if index is None:  # keep only the newest so far: memory stays one span
                newest = _about(_boundary(span, message, previous, session_id, seen, bool(cut)), about)
            seen += 1
            previous = message or None
            span = []
    if index is None:
        if newest is None:
            choose(p, 0, None)  # raises: no compaction in this transcript
        assert newest is not None
        return newest
    raise TranscriptError(f"{p}: boundary {index} does not exist; it has {seen}")


# -- its compaction requests, as the proxy sees them (the Responses API) -----------------------------------

PREFIX = "Another language model started to solve this problem"
METADATA = "x-codex-turn-metadata"
# the default pattern's words, in the raw body of a request recognised by its prompt
MARKERS = (b"You are performing a CONTEXT CHECKPOINT COMPACTION",)


def turn_metadata(req: WireRequest | RawRequest) -> dict[str, Any] | None:
    """Codex's ``x-codex-turn-metadata`` header, parsed (None when absent or not a JSON object)."""
    raw = req.headers.get(METADATA)
    if not raw:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def recognise(req: WireRequest, pattern: re.Pattern[str] | None) -> Compaction | bool | None:
    """Codex's compaction: a server-side one (``compaction_trigger``, ``/responses/compact``: nothing to
    prune), else what its turn metadata says (``request_kind``; any other kind is certainly not one),
    else its prompt (the last user message, or the instructions)."""
    if req.wire == "responses" and openai_responses.server_side(req.body, req.path):
        how = "the /responses/compact endpoint" if req.path.endswith("/compact") else "compaction_trigger"
        return Compaction("codex", how, server_side=True)
    meta = turn_metadata(req)
    if meta is not None and "request_kind" in meta:
        if meta["request_kind"] != "compaction":
            return False
        return Compaction("codex", "x-codex-turn-metadata request_kind compaction")
    return by_pattern(req, "codex", pattern)


def screen(raw: RawRequest) -> bool:
    """Whether ``recognise`` might accept the request, told without decoding its body: the path or the
    trigger item of a server-side compaction, else the request kind its turn metadata names, else the
    prompt's words."""
    if raw.wire == "responses" and (raw.path.endswith("/responses/compact") or raw.holds(b"compaction_trigger")):
        return True
    meta = turn_metadata(raw)
    if meta is not None and "request_kind" in meta:
        return meta["request_kind"] == "compaction"
    return raw.holds(*MARKERS)


def _user_text(text: str) -> Item | str | None:
    if text.lstrip().startswith(PREFIX):
        return text  # the previous summary, as Codex hands it back after a compaction
    return None if is_injected(text) else Item(role="user", content=text)


def request_boundary(req: WireRequest, pattern: re.Pattern[str] | None) -> Boundary:
    """The history being compacted: the prompt and the previous summary set apart, Codex's own
    user-role texts (environment, AGENTS.md) left out."""
    return plain_boundary(req, "codex", pattern, _user_text)


def session_of(req: WireRequest) -> str | None:
    for key in ("session-id", "session_id", "conversation_id", "conversation-id"):
        value = req.headers.get(key)
        if value:
            return str(value)
    meta = turn_metadata(req) or {}
    for key in ("session_id", "thread_id", "conversation_id"):
        if meta.get(key):
            return str(meta[key])
    return None


def boundary_id(req: WireRequest) -> str | None:
    """The context window being compacted, when Codex names it."""
    meta = turn_metadata(req) or {}
    window = meta.get("window_id") or req.headers.get("x-codex-window-id")
    return f"codex-window:{window}" if window else None
