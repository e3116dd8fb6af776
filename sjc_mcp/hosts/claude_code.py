"""Claude Code transcripts (``~/.claude/projects/<slug>/<session>.jsonl``).

Conversation records carry ``uuid``/``parentUuid``; order is the parent chain, not file order
(rewinds branch it), so the reader makes one pass keeping only each record's offset and parent,
then walks the chain back from a compaction to the one before it and parses just those records:
memory grows with the span, not the file. A compaction is a ``system`` record with subtype
``compact_boundary`` (``logicalParentUuid`` = the last record before it) followed by a user record
with ``isCompactSummary``. Injected user records (``isMeta``, command wrappers, system reminders,
caveats) are not user messages; ``queue-operation`` enqueues are, unless they are slash commands or
notifications.

When the model calls several tools at once, each ``tool_use`` block is a record chained to the one
before, and each result hangs off its own call: only the last result continues the chain. The model
saw every one of them, so a call on the chain whose result is not on it takes its result from the
record that answers it (one per call, never a sidechain's). Subagent records (``isSidechain``) are
never part of the span; the subagent's answer is, as the main agent received it (the Task result).

A span whose walk ends at a record whose parent is not in the file starts mid-session: the boundary
says so in ``incomplete``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.formats import Compaction, RawRequest, WireRequest, anthropic
from sjc_mcp.formats._parts import text_of
from sjc_mcp.hosts._cc_index import Index, Walk
from sjc_mcp.hosts._cc_index import chain as _chain
from sjc_mcp.hosts._cc_index import incomplete as _incomplete
from sjc_mcp.hosts._cc_index import index as _index
from sjc_mcp.hosts._cc_index import walk as _walk
from sjc_mcp.hosts.base import Boundary, Item, by_pattern, choose

_INJECTED = re.compile(
    r"^\s*(<command-name>|<command-message>|<command-args>|<local-command-stdout>|<local-command-stderr>|"
    r"<system-reminder>|<user-prompt-submit-hook>|Caveat: The messages below were generated|"
    r"\[Request interrupted by user)"
)
_SHELL_OUTPUT = re.compile(r"^\s*<bash-(stdout|stderr)>")  # output of a command the user ran with "!"
_NOTIFICATION = re.compile(r"^\s*<(task-notification|agent-notification)>")
SPILL_LIMIT = 20_000_000
_SPILLED = re.compile(r"(/[^\s\"'<>]*/tool-results/[^\s\"'<>]+\.txt)")


def looks_like(first: dict[str, Any]) -> bool:
    return "parentUuid" in first or first.get("type") in ("file-history-snapshot", "queue-operation")


def _read_at(fh: Any, offset: int) -> dict[str, Any]:
    fh.seek(offset)
    return json.loads(fh.readline())


_text_of = text_of
# Claude Code appends these to tool results and user turns (a file read's malware note, todo-list and IDE
# reminders): the host's words, never a source
_REMINDER = re.compile(r"\s*<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)


def strip_injected(text: str) -> str:
    """``text`` without the ``<system-reminder>`` blocks Claude Code injects into it."""
    return _REMINDER.sub("", text) if "<system-reminder>" in text else text


def user_text_item(text: str) -> Item | None:
    """What a text in a user turn is: the user's words (reminders stripped), the output of a command the
    user ran or a task notification (a tool output), or text the host injected (None)."""
    if _NOTIFICATION.match(text) or _SHELL_OUTPUT.match(text):
        name = "notification" if _NOTIFICATION.match(text) else "user-shell"
        return Item(role="tool_output", content=text, name=name)
    text = strip_injected(text)  # a reminder ahead of the user's words (an IDE's "the user opened …") goes alone
    if _INJECTED.match(text):
        return None
    return Item(role="user", content=text) if text.strip() else None


def meaning(items: list[Item]) -> list[Item]:
    """Items given as plain roles (a labelled case's span) as Claude Code means them: each user text read by
    ``user_text_item`` (reminders stripped, injected text dropped, a user's own command output a tool output)."""
    out: list[Item] = []
    for it in items:
        if it.role == "user":
            read = user_text_item(it.content)
            if read is not None:
                out.append(read)
        else:
            out.append(it)
    return out


def message_items(role: str, content: Any, *, outputs_only: bool = False) -> list[tuple[Item, int | None]]:
    """A Claude Code message's items (``formats.anthropic``), read as Claude Code means them: empty texts
    dropped, reminders stripped from tool outputs, each text block of a user turn classified
    (``user_text_item``) and the user's own joined into one message. ``outputs_only``: a turn the host
    made (``isMeta``, the summary): its tool results only. Each item with the index of its block (the
    joined user text: its first block's)."""
    out: list[tuple[Item, int | None]] = []
    texts: list[str] = []
    first: int | None = None
    for item, bi in anthropic.message_items(role, content):
        if item.role == "tool_output":
            item.content = strip_injected(item.content)
            out.append((item, bi))
        elif role == "assistant":
            if item.content.strip():
                out.append((item, bi))
        elif not outputs_only and (found := user_text_item(item.content)) is not None:
            if found.role == "user":
                texts.append(found.content)
                first = bi if first is None else first
            else:
                out.append((found, bi))
    if texts:
        out.append((Item(role="user", content="\n".join(texts)), first))
    return out


def _tool_result_text(text: str, block: dict[str, Any], record: dict[str, Any], session_dir: Path) -> str:
    """A tool result's text, as the transcript stores it: from ``toolUseResult`` when the block is empty,
    with the file a result too large for the transcript was spilled to."""
    if not text.strip():
        tur = record.get("toolUseResult")
        if isinstance(tur, dict):
            bits = [str(tur[k]) for k in ("stdout", "stderr", "content", "file") if tur.get(k)]
            text = "\n".join(bits) if bits else json.dumps(tur, ensure_ascii=False)[:20000]
        elif isinstance(tur, str):
            text = tur
    m = _SPILLED.search(text)
    if m:  # a result too large for the transcript was written next to it
        local = session_dir / "tool-results" / Path(m.group(1)).name
        try:  # only a regular file inside the session's own folder, symlinks resolved: never one elsewhere
            real = local.resolve()
            if session_dir.resolve() in real.parents and real.is_file():
                with real.open("rb") as fh:
                    text = text + "\n" + fh.read(SPILL_LIMIT).decode("utf-8", errors="replace")
        except OSError:
            pass
    return text


def _items(rec: dict[str, Any], session_dir: Path) -> list[Item]:
    msg = rec.get("message")
    kind = rec.get("type")
    if not isinstance(msg, dict) or kind not in ("user", "assistant"):
        return []
    content = msg.get("content")
    host_made = bool(rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"))
    out = []
    for item, bi in message_items(kind, content, outputs_only=host_made):
        if item.role == "tool_output" and item.name is None and isinstance(content, list) and bi is not None:
            item.content = _tool_result_text(item.content, content[bi], rec, session_dir)
        out.append(item)
    return out


def _read_items(idx: Index, fh: Any, uuid: str, session_dir: Path) -> list[Item]:
    try:
        rec = idx.parsed.get(uuid)
        return _items(rec if rec is not None else _read_at(fh, idx.recs[uuid].offset), session_dir)
    except (ValueError, RecursionError):
        return []


def _span(idx: Index, fh: Any, walk: Walk, session_dir: Path) -> list[Item]:
    """The items of the walked records, and what branches off the chain that the model saw: the other
    blocks of a model turn on the chain (a second parallel call whose sibling carries the chain on),
    and the result of every call that is not on the chain, put before the next user record after its
    call (where the model read it)."""
    records = [(u, _read_items(idx, fh, u, session_dir)) for u in walk.uuids]
    on_chain = set(walk.uuids)
    after: dict[int, list[Item]] = {}
    last_of_turn = {idx.recs[u].msg: i for i, (u, _) in enumerate(records) if idx.recs[u].msg}
    have_calls = {it.call_id for _, items in records for it in items if it.role == "tool_call"}
    have_text = {it.content for _, items in records for it in items if it.role == "assistant"}
    calls: list[tuple[int, Item]] = [(i, it) for i, (_, items) in enumerate(records) for it in items]
    for msg, i in last_of_turn.items():
        for sib in idx.turns.get(msg or "", ()):
            if sib in on_chain:
                continue
            for it in _read_items(idx, fh, sib, session_dir):
                if (it.role == "tool_call" and it.call_id in have_calls) or (
                    it.role == "assistant" and it.content in have_text
                ):
                    continue
                after.setdefault(i, []).append(it)
                calls.append((i, it))
    answered = {it.call_id for _, items in records for it in items if it.role == "tool_output"}
    before: dict[int, list[Item]] = {}
    for i, it in calls:
        if it.role != "tool_call" or not it.call_id or it.call_id in answered:
            continue
        found = next((a for a in idx.answers.get(it.call_id, ()) if a not in on_chain), None)
        if found is None:
            continue
        answered.add(it.call_id)
        outs = [
            o for o in _read_items(idx, fh, found, session_dir) if o.role == "tool_output" and o.call_id == it.call_id
        ]
        at = next((j for j in range(i + 1, len(records)) if idx.recs[records[j][0]].user), len(records))
        before.setdefault(at, []).extend(outs)
    span: list[Item] = []
    for j, (_, items) in enumerate(records):
        span.extend(before.get(j, ()))
        span.extend(items)
        span.extend(after.get(j, ()))
    span.extend(before.get(len(records), ()))
    names = {it.call_id: it.name for it in span if it.role == "tool_call"}
    for it in span:
        if it.role == "tool_output" and it.name is None and it.call_id in names:
            it.name = names[it.call_id]
    return span


def count_boundaries(path: str | Path) -> int:
    """Compactions in a transcript, counted without parsing it."""
    n = 0
    try:
        with Path(path).open("rb") as fh:
            for raw in fh:
                if b"compact_boundary" in raw and b'"subtype":"compact_boundary"' in raw.replace(b" ", b""):
                    n += 1
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    return n


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    try:
        idx = _index(p)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {p}: {exc.strerror}") from None
    done = [b for b in idx.boundaries if b in idx.summaries]
    i = choose(p, len(done), index)
    b_uuid = done[i]
    session_dir = p.with_suffix("")
    with p.open("rb") as fh:
        summary_rec = _read_at(fh, idx.recs[idx.summaries[b_uuid]].offset)
        summary = _text_of(summary_rec.get("message", {}).get("content"))
        walk = _chain(idx, b_uuid)
        previous = None
        if walk.previous:
            previous = _text_of(_read_at(fh, idx.recs[walk.previous].offset).get("message", {}).get("content"))
        span = _span(idx, fh, walk, session_dir)
    # messages the user typed while the agent worked, between the previous boundary and this one
    lo = idx.recs[done[i - 1]].timestamp if i > 0 else ""
    hi = idx.recs[b_uuid].timestamp
    have = {it.content.strip() for it in span if it.role == "user"}
    for ts, text in idx.queued:
        if lo <= ts <= hi and text.strip() and text.strip() not in have and not text.lstrip().startswith("/"):
            found = user_text_item(text)
            if found is not None:
                span.append(found)
    return Boundary(
        host="claude-code",
        index=i,
        summary=summary,
        previous_summary=previous,
        span=span,
        session_id=idx.session_id,
        boundary_id=b_uuid,
        incomplete=_incomplete(walk),
        project=idx.cwd,
        first_prompt=_first_prompt(p, idx),
        started=idx.started or None,
    )


def _first_prompt(path: Path, idx: Index) -> str | None:
    """The first thing the user typed in the session (commands, caveats and reminders are not it)."""
    with path.open("rb") as fh:
        for offset in idx.prompts:
            try:
                msg = _read_at(fh, offset).get("message")
            except ValueError:
                continue
            content = msg.get("content") if isinstance(msg, dict) else None
            for item, _ in message_items("user", content):
                if item.role == "user" and item.content.strip():
                    return item.content.strip()
    return None


def read_open_span(path: str | Path) -> Boundary:
    """The span still open at the end of the transcript (since its last compaction): what a compaction
    that is not yet written to the file is summarising."""
    p = Path(path)
    try:
        idx = _index(p)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {p}: {exc.strerror}") from None
    # the newest record (a summary just written: the open span is empty, that summary is the previous one)
    last = next((u for u in reversed(idx.order) if idx.recs[u].kind != "boundary" and not idx.recs[u].side), None)
    walk = _walk(idx, last)
    with p.open("rb") as fh:
        previous = None
        if walk.previous:
            previous = _text_of(_read_at(fh, idx.recs[walk.previous].offset).get("message", {}).get("content"))
        span = _span(idx, fh, walk, p.with_suffix(""))
    # messages the user typed while the agent worked, since the last compaction (as read_boundary has them)
    lo = idx.recs[idx.boundaries[-1]].timestamp if idx.boundaries else ""
    have = {it.content.strip() for it in span if it.role == "user"}
    for ts, text in idx.queued:
        if lo <= ts and text.strip() and text.strip() not in have and not text.lstrip().startswith("/"):
            found = user_text_item(text)
            if found is not None:
                span.append(found)
    return Boundary(
        host="claude-code",
        index=len(idx.boundaries),
        summary="",
        previous_summary=previous,
        span=span,
        session_id=idx.session_id,
        boundary_id=None,
        incomplete=_incomplete(walk),
        project=idx.cwd,
        first_prompt=_first_prompt(p, idx),
        started=idx.started or None,
    )


def boundary_count(path: str | Path) -> int:
    idx = _index(Path(path))
    return sum(1 for b in idx.boundaries if b in idx.summaries)


# -- its compaction requests, as the proxy sees them (the Anthropic Messages API) ------------------------

WRAPPER = "This session is being continued from a previous conversation"
_SESSION = re.compile(r"_session_([0-9A-Za-z-]+)")


# in the raw body of every request ``recognise`` accepts with the default pattern (the words all three
# compaction prompts share): any other request goes by undecoded
MARKERS = (b"Your task is to create a detailed summary of ",)


def screen(raw: RawRequest) -> bool:
    """Whether ``recognise`` might accept the request: its prompt's words, on the Messages API."""
    return raw.wire == "anthropic" and raw.holds(*MARKERS)


def recognise(req: WireRequest, pattern: re.Pattern[str] | None) -> Compaction | None:
    """Claude Code's compaction: its prompt opens the last text of the last user message (2.1.332: after
    the optional "CRITICAL: Respond with TEXT ONLY" guard), on the Messages API."""
    return by_pattern(req, "claude-code", pattern) if req.wire == "anthropic" else None


def request_boundary(req: WireRequest, pattern: re.Pattern[str] | None) -> Boundary:
    """The history being compacted, read as the transcript reader reads it: the compaction prompt and the
    previous summary (the wrapper Claude Code opens it with) set apart, injected text left out."""
    span: list[Item] = []
    previous: str | None = None
    messages = req.body.get("messages")
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue  # Claude Code's system messages: the host's words
        content = m.get("content")
        if m["role"] == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            kept = []
            for b in blocks if isinstance(blocks, list) else []:
                text = b.get("text") if isinstance(b, dict) and b.get("type") == "text" else None
                if isinstance(text, str) and pattern is not None and pattern.search(text.lstrip()):
                    continue  # the compaction prompt
                if isinstance(text, str) and text.lstrip().startswith(WRAPPER):
                    previous = text
                    continue
                kept.append(b)
            content = kept
        span.extend(item for item, _ in message_items(m["role"], content))
    return Boundary(host="claude-code", index=0, summary="", previous_summary=previous, span=span)


def session_of(req: WireRequest) -> str | None:
    """The ``x-claude-code-session-id`` header, else the session named in ``metadata.user_id``."""
    value = req.headers.get("x-claude-code-session-id")
    if value:
        return str(value)
    meta = req.body.get("metadata")
    user_id = meta.get("user_id") if isinstance(meta, dict) else None
    if not isinstance(user_id, str) or not user_id:
        return None
    try:
        parsed = json.loads(user_id)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("session_id"):
        return str(parsed["session_id"])
    m = _SESSION.search(user_id)
    return m.group(1) if m else None
