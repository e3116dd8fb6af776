"""OpenClaw transcripts: rows of its per-agent SQLite database, or the same entries as JSON lines.

OpenClaw 2026.9 keeps every session of an agent in ``$OPENCLAW_STATE_DIR/agents/<agentId>/agent/
openclaw-agent.sqlite`` (default state folder ``~/.openclaw``), table ``transcript_events(session_id, seq,
event_json, event_zstd, …)``: one transcript entry a row, as JSON text or, for rows of 1 KiB and more
that compress, as a zstd frame in ``event_zstd``. The entries are those its earlier ``sessions/<id>.jsonl``
files held line by line (a file of them, or an export of the rows, is read the same way):

- ``{"type": "session", "version", "id", "cwd"}``, then entries with ``id`` and ``parentId``;
- ``message``: ``user``; ``assistant`` with ``text`` and ``toolCall {id, name, arguments}`` blocks;
  ``toolResult {toolCallId, toolName, content, isError}``; ``bashExecution {command, output}`` (a command
  the user ran);
- ``compaction {summary, firstKeptEntryId, tokensBefore, tokensAfter, details}``, appended after the
  entries it keeps: the model's context after it is the summary and the entries from ``firstKeptEntryId``
  on (the kept tail). A compaction summarises the entries from the previous compaction's
  ``firstKeptEntryId`` (or the session's start, or a ``reset``) up to its own ``firstKeptEntryId``, on the
  branch that leads to it (the ``parentId`` chain); the kept tail is its ``retained`` part.
- ``custom`` (OpenClaw's state), ``custom_message``, ``model_change``, ``thinking_level_change``,
  ``branch_summary``, ``label``, ``session_info``: no source.

A path names a database (every session in it: its compactions ordered by time, newest last) or a file of
entries. The database is opened read-only; OpenClaw may be writing to it meanwhile.

For the proxy: OpenClaw's summarising requests are told apart by their own shape, whatever the summary
kind (``formats/openclaw_prompt.py``: the summariser's system prompt and one user text that opens with
``<conversation>``), in Anthropic Messages and Chat Completions alike; the history they compact is read
from that serialised conversation. A ``[proxy] patterns`` entry for ``openclaw`` is not needed and not used.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.formats import Compaction, WireRequest, module
from sjc_mcp.formats import openclaw_prompt as prompt
from sjc_mcp.hosts.base import Boundary, Item, choose, str_or_none

SQLITE_MAGIC = b"SQLite format 3\x00"
# user-role text OpenClaw adds itself: the per-turn runtime context and the summary it hands the model
_INJECTED = ("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>", "The conversation history before this point was compacted")
_NO_SOURCE = ("compactionSummary", "branchSummary", "custom")


def is_database(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC)


def looks_like(first: dict[str, Any]) -> bool:
    """An OpenClaw entry: its session header, or an entry with ``id``/``parentId`` whose ``message`` is
    OpenClaw's (not Claude Code's ``uuid``/``parentUuid`` records)."""
    if first.get("type") == "session" and "version" in first and "id" in first:
        return True
    msg = first.get("message")
    return first.get("type") == "message" and "parentId" in first and isinstance(msg, dict) and "role" in msg


MAX_ROW = 4 << 20  # OpenClaw's bound on a row, compressed or not


def _decoder() -> Any:
    """A zstd frame decoder (``zstandard``: 3x faster on rows of a few KB than the standard library's
    ``compression.zstd`` of Python 3.14, see ``benchmarks/openclaw_store.py``)."""
    try:
        import zstandard
    except ImportError:
        raise TranscriptError("this OpenClaw database has compressed rows and zstandard is not installed") from None
    d = zstandard.ZstdDecompressor()
    return lambda blob: d.decompress(blob, max_output_size=MAX_ROW)


def _decode(decode: Any, blob: bytes, path: Path) -> str:
    try:
        return bytes(decode(blob)).decode("utf-8")
    except Exception as exc:  # a damaged frame: name the file, not the codec's internals
        raise TranscriptError(f"{path}: a compressed transcript row cannot be read ({exc})") from None


def _database(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every session's entries (session id -> entries in ``seq`` order)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise TranscriptError(f"cannot open OpenClaw database {path}: {exc}") from None
    sessions: dict[str, list[dict[str, Any]]] = {}
    try:
        with contextlib.closing(con):
            rows = con.execute(
                "select session_id, event_json, event_zstd from transcript_events order by session_id, seq"
            )
            decode = None
            for sid, text, blob in rows:
                if text is None and blob is not None:
                    decode = decode or _decoder()
                    text = _decode(decode, bytes(blob), path)
                raw = text
                if raw is None:
                    continue
                try:
                    entry = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(entry, dict):
                    sessions.setdefault(str(sid), []).append(entry)
    except sqlite3.Error as exc:
        raise TranscriptError(f"{path}: not an OpenClaw transcript database ({exc})") from None
    return sessions


def _jsonl(path: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    entries = []
    for line in raw.splitlines():
        try:
            e = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(e, dict):
            entries.append(e)
    header = next((e for e in entries if e.get("type") == "session"), None)
    return {str(header.get("id") if header else path.stem): entries}


def _sessions(path: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise TranscriptError(f"transcript not found: {path}") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror}") from None
    return _database(path) if is_database(head) else _jsonl(path)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def meaning(items: list[Item]) -> list[Item]:
    """Items given as plain roles (a labelled case's span) as OpenClaw means them: its runtime context and the
    summary it hands the model are no one's words."""
    return [it for it in items if not (it.role == "user" and it.content.lstrip().startswith(_INJECTED))]


def message_items(msg: dict[str, Any]) -> list[Item]:
    """The items of one OpenClaw message (as stored, or as a compaction provider is handed it)."""
    role = msg.get("role")
    content = msg.get("content")
    if role == "user":
        text = _text(content)
        if text.strip() and not text.lstrip().startswith(_INJECTED):
            return [Item(role="user", content=text)]
        return []
    if role == "assistant":
        out = []
        text = (
            _text([c for c in content if isinstance(c, dict) and c.get("type") == "text"])
            if isinstance(content, list)
            else _text(content)
        )
        if text.strip():
            out.append(Item(role="assistant", content=text))
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                args = block.get("arguments")
                out.append(
                    Item(
                        role="tool_call",
                        content=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                        name=str_or_none(block.get("name")),
                        call_id=str_or_none(block.get("id")),
                    )
                )
        return out
    if role == "toolResult":
        return [
            Item(
                role="tool_output",
                content=_text(content),
                name=str_or_none(msg.get("toolName")),
                call_id=str_or_none(msg.get("toolCallId")),
                is_error=bool(msg.get("isError")),
            )
        ]
    if role == "bashExecution":  # a command the user ran: its output is the environment's
        command = str(msg.get("command") or "")
        return [
            Item(role="tool_call", content=json.dumps({"command": command}), name="bash"),
            Item(
                role="tool_output",
                content=str(msg.get("output") or ""),
                name="bash",
                is_error=bool(msg.get("exitCode")),
            ),
        ]
    return []  # custom, compactionSummary, branchSummary: OpenClaw's own, not a source


def _items(entries: list[dict[str, Any]]) -> list[Item]:
    out: list[Item] = []
    for e in entries:
        if e.get("type") == "message" and isinstance(e.get("message"), dict):
            out += message_items(e["message"])
    return out


def _path_to(entry: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The branch leading to ``entry`` (oldest first, ``entry`` excluded), and whether it is whole (every
    parent found, up to the session's first entry)."""
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    parent = entry.get("parentId")
    while parent:
        if not isinstance(parent, str) or parent in seen or parent not in by_id:
            return path[::-1], False
        seen.add(parent)
        e = by_id[parent]
        path.append(e)
        parent = e.get("parentId")
    return path[::-1], True


def _boundaries(sessions: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(session id, compaction entry, that session's entries) for every compaction, oldest first."""
    found = []
    for sid, entries in sessions.items():
        for n, e in enumerate(entries):
            if e.get("type") == "compaction":
                found.append((str(e.get("timestamp") or ""), sid, n, e, entries))
    found.sort(key=lambda f: (f[0], f[1], f[2]))
    return [(sid, e, entries) for _, sid, _, e, entries in found]


def boundary_count(path: str | Path) -> int:
    return len(_boundaries(_sessions(Path(path))))


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p = Path(path)
    bounds = _boundaries(_sessions(p))
    i = choose(p, len(bounds), index)
    sid, comp, entries = bounds[i]
    by_id = {str(e["id"]): e for e in entries if isinstance(e.get("id"), str)}
    branch, whole = _path_to(comp, by_id)
    ids = [e.get("id") for e in branch]
    start, previous = 0, None
    for k in range(len(branch) - 1, -1, -1):
        b = branch[k]
        if b.get("type") == "reset":
            start = k + 1
            break
        if b.get("type") == "compaction":
            previous = b.get("summary") if isinstance(b.get("summary"), str) else None
            kept = b.get("firstKeptEntryId")
            start = ids.index(kept) if kept in ids else k + 1
            break
    kept = comp.get("firstKeptEntryId")
    end = ids.index(kept) if kept in ids and ids.index(kept) >= start else len(branch)
    found = comp.get("summary")
    summary = found if isinstance(found, str) else ""
    return Boundary(
        host="openclaw",
        index=i,
        summary=summary,
        previous_summary=previous,
        span=_items([e for e in branch[start:end] if e.get("type") != "compaction"]),
        retained=_items([e for e in branch[end:] if e.get("type") != "compaction"]),
        session_id=sid,
        boundary_id=f"{sid}:{comp.get('id')}",
        note=None if summary.strip() else "the compaction entry holds no summary",
        incomplete=None
        if whole or start > 0
        else "the session's entries start mid-branch (a parent entry is not in the transcript)",
    )


# in the raw body of every request ``recognise`` accepts (its summariser's system prompt)
MARKERS = (prompt.SYSTEM.encode(),)


def _summarising(req: WireRequest) -> str | None:
    """The request's conversation text when it is one of OpenClaw's summarising requests."""
    wire = module(req.wire)
    text = wire.last_user_text(req.body)
    return text if prompt.is_summarising("\n".join(wire.system_texts(req.body)), text) else None


def recognise(req: WireRequest, pattern: Any = None) -> Compaction | None:
    """One of the requests of an OpenClaw compaction (history, split-turn prefix, chunk, merge; any mode)."""
    text = _summarising(req)
    if text is None:
        return None
    return Compaction("openclaw", f"summariser request ({prompt.kind_of(text.rsplit(prompt.CLOSE, 1)[-1])})")


def request_boundary(req: WireRequest, pattern: Any = None) -> Boundary:
    """The history a summarising request compacts, read from its serialised conversation: tool calls with
    their results, the user's turns, and the summaries it carries as the previous summary."""
    text = _summarising(req) or ""
    conv = prompt.read(text) if text else prompt.Conversation(kind="unknown")
    return Boundary(
        host="openclaw",
        index=0,
        summary="",
        previous_summary="\n\n".join(conv.previous) or None,
        span=conv.items,
    )
