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

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.formats import Compaction, RawRequest, WireRequest
from sjc_mcp.formats import gemini as wire
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


def output_text(text: str) -> str:
    """A tool's output without the ``<untrusted_context>`` wrapper Gemini CLI puts around shell and MCP output."""
    m = _UNTRUSTED.match(text)
    return m.group(1) if m else text


def _meaning(item: Item) -> Item | None:
    """An item read from the wire format as Gemini CLI means it: its ``<session_context>`` text and a hook's
    ``<hook_context>`` are no one's words, a tool output loses the CLI's wrapper."""
    if item.role == "tool_output":
        item.content = output_text(item.content)
    elif item.role == "user":
        if item.content.lstrip().startswith(ENV):
            return None
        item.content = _HOOK_CONTEXT.sub("", item.content)
        if not item.content.strip():
            return None
    elif item.role == "assistant" and not item.content.strip():
        return None
    return item


def meaning(items: list[Item]) -> list[Item]:
    """Items given as plain roles (a labelled case's span) as Gemini CLI means them (``_meaning``)."""
    return [m for it in items if (m := _meaning(it)) is not None]


def _result_text(result: Any) -> str | None:
    """A ``toolCalls[].result``: functionResponse parts (0.61.0), or a plain string or object (earlier)."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    texts = []
    for p in wire.parts_of(result):
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
            texts.append(wire.response_text(p["functionResponse"].get("response")))
        elif isinstance(p, str) or wire.is_text(p):
            texts.append(p if isinstance(p, str) else p["text"])
        elif isinstance(p, dict):
            texts.append(wire.response_text(p))
    return output_text("\n".join(texts))


def _kind(m: dict[str, Any]) -> str | None:
    kind = m.get("type") or m.get("role")
    return "user" if kind == "user" else "model" if kind in ("gemini", "model", "assistant") else None


def _text(m: dict[str, Any]) -> str:
    return wire.text_of(m.get("content", m.get("parts")))


def is_snapshot(m: dict[str, Any]) -> bool:
    return _kind(m) == "user" and SNAPSHOT in _text(m)


def _items(m: dict[str, Any]) -> list[Item]:
    kind = _kind(m)
    if kind is None:
        return []  # info, error: the CLI's own lines
    out = [it for it, _ in wire.content_items(m.get("content", m.get("parts")), kind) if _meaning(it) is not None]
    calls = m.get("toolCalls") if kind == "model" else None
    for tc in calls if isinstance(calls, list) else []:  # a damaged record's calls read as none
        if not isinstance(tc, dict):
            continue
        cid = tc.get("id") if isinstance(tc.get("id"), str) else None
        name = tc.get("name") if isinstance(tc.get("name"), str) else None
        args = json.dumps(tc.get("args", {}), ensure_ascii=False)
        out.append(Item(role="tool_call", content=args, name=name, call_id=cid))
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


def _boundary(bounds: list[tuple[list[Item], str]], i: int, session: str | None) -> Boundary:
    span, summary = bounds[i]
    return Boundary(
        host="gemini",
        index=i,
        summary=summary,
        previous_summary=bounds[i - 1][1] if i else None,
        span=span,
        session_id=session,
        boundary_id=f"{session}:{i}",
        first_prompt=next((it.content.strip() for it in bounds[0][0] if it.role == "user" and it.content), None),
    )


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    bounds, _, session = _split(p)
    return _boundary(bounds, choose(p, len(bounds), index), session)


def boundary_for(path: str | Path, summary: str) -> Boundary:
    """The compression that wrote ``summary``: its boundary, or, when the file does not hold that snapshot
    (not yet written), what follows the newest one (``summary`` empty, ``previous_summary`` the newest)."""
    bounds, rest, session = _split(Path(path))
    for i in range(len(bounds) - 1, -1, -1):
        if bounds[i][1].strip() == summary.strip():
            return _boundary(bounds, i, session)
    return Boundary(
        host="gemini",
        index=len(bounds),
        summary="",
        previous_summary=bounds[-1][1] if bounds else None,
        span=rest,
        session_id=session,
        boundary_id=f"{session}:{len(bounds)}",
    )


# ---- the proxy side: Gemini CLI's compression request ------------------------------------------------------

COMPRESS_SYSTEM = (
    "You are a specialized system component responsible for distilling chat history into a structured XML "
    "<state_snapshot>."
)
FIRST_PASS = ("Generate a new <state_snapshot>", "A previous <state_snapshot> exists")
VERIFY_PASS = "Critically evaluate the <state_snapshot>"
# in the raw body of every request ``recognise`` accepts with the default pattern (its instruction's words
# before the first character a JSON encoder may escape)
MARKERS = (COMPRESS_SYSTEM.split("<", 1)[0].encode(),)


def screen(raw: RawRequest) -> bool:
    """Whether ``recognise`` might accept the request: its compression instruction's words, on the Gemini API."""
    return raw.wire == wire.NAME and raw.holds(*MARKERS)


def _pass(req: WireRequest) -> str | None:
    last = wire.last_user_text(req.body).lstrip()
    if last.startswith(VERIFY_PASS):
        return "verification"
    if last.startswith(FIRST_PASS):
        return "first"
    return None


def recognise(req: WireRequest, pattern: re.Pattern[str] | None) -> Compaction | bool | None:
    """Gemini CLI's compression: its system instruction (the ``[proxy] patterns`` entry, anchored there; by
    default the sentence 0.61.0 opens it with), on both passes: the first (the history, then "Generate a new
    <state_snapshot>…" or "A previous <state_snapshot> exists…") and the verification pass (answer 1 as a model
    turn, then "Critically evaluate the <state_snapshot>…"). Any other request on the Gemini API is certainly
    not one: the session-title request quotes the conversation, snapshot and all, but has no system
    instruction."""
    if req.wire != wire.NAME:
        return None
    system = "\n".join(wire.system_texts(req.body)).lstrip()
    hit = pattern.search(system) is not None if pattern is not None else system.startswith(COMPRESS_SYSTEM)
    if not hit or req.body.get("tools"):
        return False
    which = _pass(req)
    return Compaction(
        "gemini", f"its compression instruction ({which} pass)" if which else "its compression instruction"
    )


def _compressed(req: WireRequest) -> list[Any]:
    """The contents being compressed: without the pass's prompt and, in the verification pass, answer 1."""
    contents = req.body.get("contents")
    contents = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    which = _pass(req)
    if which is not None and contents and contents[-1].get("role", "user") == "user":
        contents = contents[:-1]
        if which == "verification" and contents and contents[-1].get("role") == "model":
            contents = contents[:-1]
            if contents and wire.text_of(contents[-1]).lstrip().startswith(FIRST_PASS):
                contents = contents[:-1]  # 0.61.0 leaves the first pass's prompt out; were it there, it is no history
    return contents


def request_boundary(req: WireRequest, pattern: re.Pattern[str] | None) -> Boundary:
    """The history being compressed, read as the chat file is: function responses as the tools' outputs, the
    user's own texts, the previous snapshot (a user text, after the ``<session_context>`` one) set apart,
    the CLI's and hooks' texts left out; the pass's prompt and answer 1 are not part of it."""
    span: list[Item] = []
    previous: str | None = None
    for c in _compressed(req):
        for it, _ in wire.content_items(c):
            if it.role == "user" and SNAPSHOT in it.content and it.content.lstrip().startswith(("<", SNAPSHOT)):
                previous = it.content
                continue
            if _meaning(it) is not None:
                span.append(it)
    return Boundary(host="gemini", index=0, summary="", previous_summary=previous, span=span)


def boundary_id(req: WireRequest) -> str:
    """The same for both passes of one compression: a hash of the history they compress."""
    digest = hashlib.sha256(json.dumps(_compressed(req), sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"request:{digest[:16]}"


RECENT_S = 3600.0  # a chat file written to within the last hour can be the session compressing
MAX_FILES = 50


def session_of(req: WireRequest) -> str | None:
    """No Gemini CLI request names its session. Where the chat files are on this machine (``~/.gemini/tmp``),
    the session is the one whose chat file, among those written to in the last hour, holds the newest
    function call id of the history (ids carry a millisecond time), else its last user text; None when none
    does."""
    import time

    from sjc_mcp import paths

    needle = None
    for c in reversed(_compressed(req)):
        for p in reversed(wire.parts_of(c)):
            fc = p.get("functionCall") if isinstance(p, dict) else None
            if isinstance(fc, dict) and isinstance(fc.get("id"), str) and fc["id"]:
                needle = json.dumps(fc["id"]).encode()
                break
        if needle is not None:
            break
    if needle is None:
        users = [it.content for c in _compressed(req) for it, _ in wire.content_items(c) if it.role == "user"]
        texts = [t for t in users if not t.lstrip().startswith((ENV, SNAPSHOT))]
        if not texts:
            return None
        needle = json.dumps(texts[-1], ensure_ascii=False)[1:-1].encode()
    try:
        now = time.time()
        files = [(f.stat().st_mtime, f) for f in (paths.gemini_dir() / "tmp").glob("*/chats/session-*.json*")]
        recent = sorted((x for x in files if now - x[0] < RECENT_S), reverse=True)[:MAX_FILES]
        for _, f in recent:
            data = f.read_bytes()
            if needle in data:
                return messages(f)[1]
    except OSError:
        return None
    return None
