"""The one pass over a Claude Code transcript and the walk along its parent chain.

``index`` keeps, per conversation record, only its offset, parent and a few flags (sidechain, user,
its model turn's message id), the compactions, the queued user messages and which records answer
which tool call: memory grows with the records, not their text. ``chain``/``walk`` follow the
parents back from a record to the summary that opened its span (or the file's start, which is
mid-session when the first record's parent is not in the file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class Rec:
    offset: int
    parent: str | None
    kind: str  # "conv" | "boundary" | "summary"
    logical_parent: str | None = None
    timestamp: str = ""
    side: bool = False  # a subagent's own record (isSidechain)
    user: bool = False  # a user record (a message or tool results)
    msg: str | None = None  # an assistant record's API message id: one model turn's blocks share it


@dataclass(slots=True)
class Index:
    recs: dict[str, Rec] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # uuids in file order
    pos: dict[str, int] = field(default_factory=dict)
    boundaries: list[str] = field(default_factory=list)  # uuids of compact_boundary records, file order
    malformed: int = 0  # records skipped because they cannot be what they claim to be
    summaries: dict[str, str] = field(default_factory=dict)  # boundary uuid -> summary record uuid
    queued: list[tuple[str, str]] = field(default_factory=list)  # (timestamp, content) of enqueued messages
    answers: dict[str, list[str]] = field(default_factory=dict)  # tool_use id -> uuids of records with its result
    turns: dict[str, list[str]] = field(default_factory=dict)  # API message id -> uuids of its assistant records
    session_id: str | None = None
    cwd: str | None = None  # the session's working folder (its first record's ``cwd``)
    started: str = ""  # the first record's timestamp
    prompts: list[int] = field(default_factory=list)  # offsets of the first user records that may be a prompt
    bad_lines: int = 0
    # the records since the last compaction, as parsed here (up to PARSED_BYTES of their lines): what a
    # judgment of the open span reads again, so it is not parsed twice
    parsed: dict[str, dict[str, Any]] = field(default_factory=dict)
    parsed_bytes: int = 0


PARSED_BYTES = 8_000_000
MAX_PROMPTS = 8  # user records looked at for the session's first prompt (commands and caveats come first)


def _str(value: Any) -> str:
    """A record's string field; "" when a damaged record has anything else there."""
    return value if isinstance(value, str) else ""


def index(path: Path) -> Index:
    idx = Index()
    last_boundary: str | None = None
    with path.open("rb") as fh:
        offset = 0
        for raw in fh:
            here = offset
            offset += len(raw)
            if b'"uuid"' not in raw and b"queue-operation" not in raw:
                continue
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                idx.bad_lines += 1  # a half-written last line, or damage: skip it
                continue
            if not isinstance(rec, dict):
                continue
            if rec.get("type") == "queue-operation":
                if rec.get("operation") == "enqueue" and isinstance(rec.get("content"), str):
                    idx.queued.append((_str(rec.get("timestamp")), rec["content"]))
                continue
            uuid = rec.get("uuid")
            if not isinstance(uuid, str):
                continue
            idx.session_id = idx.session_id or _str(rec.get("sessionId")) or None
            idx.cwd = idx.cwd or _str(rec.get("cwd")) or None
            idx.started = idx.started or _str(rec.get("timestamp"))
            idx.pos[uuid] = len(idx.order)
            idx.order.append(uuid)
            if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
                idx.recs[uuid] = Rec(
                    here, None, "boundary", _str(rec.get("logicalParentUuid")) or None, _str(rec.get("timestamp"))
                )
                idx.boundaries.append(uuid)
                last_boundary = uuid
                idx.parsed, idx.parsed_bytes = {}, 0
                continue
            if idx.parsed_bytes + len(raw) <= PARSED_BYTES:
                idx.parsed[uuid] = rec
                idx.parsed_bytes += len(raw)
            else:
                idx.parsed.pop(uuid, None)  # a record under the same id read before is not this one
            if rec.get("isCompactSummary"):
                msg = rec.get("message")
                body = msg.get("content") if isinstance(msg, dict) else None
                if not (isinstance(body, str) and body.strip()) and not (isinstance(body, list) and body):
                    idx.malformed += 1  # a summary record with no summary in it: skipped, counted
                    idx.parsed.pop(uuid, None)
                    continue
                parent = _str(rec.get("parentUuid")) or None
                idx.recs[uuid] = Rec(here, parent, "summary", None, _str(rec.get("timestamp")))
                owner = parent if parent in idx.recs and idx.recs[parent].kind == "boundary" else last_boundary
                if owner and owner not in idx.summaries:
                    idx.summaries[owner] = uuid
            else:
                side = bool(rec.get("isSidechain"))
                user = rec.get("type") == "user"
                msg = rec.get("message")
                mid = msg.get("id") if rec.get("type") == "assistant" and isinstance(msg, dict) else None
                mid = mid if isinstance(mid, str) and not side else None
                idx.recs[uuid] = Rec(
                    here, _str(rec.get("parentUuid")) or None, "conv", None, _str(rec.get("timestamp")), side, user, mid
                )
                if mid is not None:
                    idx.turns.setdefault(mid, []).append(uuid)
                if user and not side and b'"tool_result"' in raw:
                    note_answers(idx, uuid, rec)
                elif user and not side and not rec.get("isMeta") and len(idx.prompts) < MAX_PROMPTS:
                    idx.prompts.append(here)
    return idx


def note_answers(idx: Index, uuid: str, rec: dict[str, Any]) -> None:
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
            idx.answers.setdefault(b["tool_use_id"], []).append(uuid)


def before(idx: Index, uuid: str) -> str | None:
    """The main-conversation record written just before ``uuid`` (sidechain records skipped)."""
    i = idx.pos.get(uuid, 0) - 1
    while i >= 0 and (idx.order[i] not in idx.recs or idx.recs[idx.order[i]].side):  # a skipped record is no step
        i -= 1
    return idx.order[i] if i >= 0 else None


@dataclass(slots=True)
class Walk:
    uuids: list[str]  # the span's records on the chain, oldest first
    previous: str | None  # the summary record that opened the span (the previous compaction's), if any
    dangling: str | None  # the parent, not in the file, of the span's first record: it starts mid-session


def chain(idx: Index, boundary: str) -> Walk:
    """The chain from the start of the span to the boundary.

    Real transcripts have holes: a parent that was never written. Where the chain breaks, it goes on
    from the record written just before the orphan, so a hole never cuts the span short; an orphan
    with nothing before it is where the file starts, mid-session."""
    start = idx.recs[boundary].logical_parent
    return walk(idx, start if start in idx.recs else before(idx, boundary))


def walk(idx: Index, cur: str | None) -> Walk:
    out: list[str] = []
    seen: set[str] = set()
    previous: str | None = None
    dangling: str | None = None
    while cur and cur not in seen:
        seen.add(cur)
        r = idx.recs[cur]
        if r.kind == "summary":
            previous = cur
            break
        if r.kind == "boundary":
            break
        out.append(cur)
        parent = r.parent
        if parent is not None and parent not in idx.recs:
            hole = before(idx, cur)
            if hole is None:
                dangling = parent
            parent = hole
        cur = parent
    out.reverse()
    return Walk(out, previous, dangling)


def incomplete(walk: Walk) -> str | None:
    if walk.previous is None and walk.dangling is not None:
        return "the transcript starts mid-session (the parent of its first record is not in the file)"
    return None
