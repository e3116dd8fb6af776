"""Hermes Agent's sessions: the SQLite file ``$HERMES_HOME/state.db`` (checked with hermes-agent 0.19.0).

Hermes keeps every session's messages in table ``messages`` (``session_id``, ``role``, ``content``,
``tool_call_id``, ``tool_calls`` as JSON text, ``tool_name``, ``active``, ``compacted``, …) and the
sessions in ``sessions`` (``id``, ``parent_session_id``, ``started_at``, …). A compaction leaves a message
carrying Hermes' summary: one of its own that begins with the "[CONTEXT COMPACTION — REFERENCE ONLY]"
notice, or the first kept message with the summary merged in after "[END OF PRIOR CONTEXT — COMPACTION
SUMMARY BELOW]". In place (``compression.in_place``, the default) the rows before the compaction stay under
the same session id with ``active = 0, compacted = 1`` and the compacted list follows them as new rows; with
rotation a child session (``parent_session_id``) holds the compacted list. Either way a session's rows,
through its chain of parents and in id order, read as one transcript in which each new summary message is a
compaction: its span is everything between the previous summary message (or the start) and it, its previous
summary that message's, and the rows after it that repeat rows of the span are the messages Hermes kept.

Tool results are JSON ``{"output", "exit_code", "error"}`` (the terminal tool): read as their output, an
error when the exit status is not 0 or ``error`` is set. Hermes' own placeholders for old outputs and the
user-role messages it injects (a preserved task list, truncation notices) are no one's words.

``PATH`` reads the session holding the newest compaction; ``PATH#SESSION_ID`` reads that session.
The plugin's compaction (``hook.hermes``) hands over the same messages and is read by ``messages_items``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from sjc_mcp.errors import TranscriptError
from sjc_mcp.formats import Compaction, WireRequest, hermes_prompt, module, openai_chat
from sjc_mcp.hosts.base import Boundary, Item, by_pattern, choose

NOTICES = ("[CONTEXT COMPACTION — REFERENCE ONLY]", "[CONTEXT SUMMARY]:")
MERGED_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]"
MERGED_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
# user-role messages Hermes writes itself (agent/conversation_compression.py _SYNTHETIC_USER_PREFIXES)
INJECTED_USER = (
    "[System: ",
    "[Your active task list was preserved across context compression]",
    "[IMPORTANT: Background process ",
    "[Note: Some earlier conversation turns have been compacted",
)
# what Hermes puts in place of an old tool output: no output at all
PLACEHOLDERS = (
    "[Old tool output cleared to save context space]",
    "[Duplicate tool output — same content as a more recent call]",
)
SQLITE_MAGIC = b"SQLite format 3\x00"


# ---- one message ---------------------------------------------------------------------------------------


def tool_result(raw: str) -> tuple[str, bool]:
    """A tool message's content as (output, is_error): the terminal tool's JSON unwrapped."""
    s = raw.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return raw, False
    try:
        obj = json.loads(s)
    except (ValueError, RecursionError):
        return raw, False
    if not isinstance(obj, dict) or "output" not in obj:
        return raw, False
    out = obj["output"] if isinstance(obj["output"], str) else json.dumps(obj["output"], ensure_ascii=False)
    code, error = obj.get("exit_code"), obj.get("error")
    if isinstance(error, str) and error.strip():
        out = f"{out}\n{error}" if out.strip() else error
    failed = (isinstance(code, int) and not isinstance(code, bool) and code != 0) or bool(error)
    return out, failed


def is_summary(text: str) -> bool:
    """Whether ``text`` carries a Hermes compaction summary (standalone or merged), as Hermes tells."""
    t = text.lstrip()
    if MERGED_DELIMITER in t:
        t = t.split(MERGED_DELIMITER, 1)[1].lstrip()
    return t.startswith(NOTICES)


def summary_body(text: str) -> str:
    """The summary itself: without the notice line, a merged message's prior part and the END line."""
    t = text.strip()
    if MERGED_DELIMITER in t:
        t = t.split(MERGED_DELIMITER, 1)[1].strip()
    if t.startswith(NOTICES):
        nl = t.find("\n")
        t = t[nl + 1 :] if nl >= 0 else ""
    t = t.strip()
    if t.endswith(END_MARKER):
        t = t[: -len(END_MARKER)].rstrip()
    return t


def merged_prior(text: str) -> str | None:
    """A merged summary message's own earlier content (the kept message the summary was merged into)."""
    t = text.lstrip()
    if not (t.startswith(MERGED_HEADER) and MERGED_DELIMITER in t):
        return None
    return t[len(MERGED_HEADER) : t.index(MERGED_DELIMITER)].strip()


def _calls(raw: Any) -> list[dict[str, Any]]:
    """A row's ``tool_calls`` (JSON text in state.db, a list in the plugin's copy)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else []
        except (ValueError, RecursionError):
            return []
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def meaning(items: list[Item]) -> list[Item]:
    """Items read from Hermes' messages (any wire, or its serialised prompt) as Hermes means them: a summary
    message is no turn (a merged one keeps the kept message's own text), Hermes' own user-role notes and
    its placeholders for old outputs are no one's words, a tool output is the terminal tool's JSON
    unwrapped, a call's output carries the call's tool name."""
    names = {it.call_id: it.name for it in items if it.role == "tool_call" and it.call_id}
    out: list[Item] = []
    for it in items:
        text = it.content
        if it.role in ("user", "assistant"):
            prior = merged_prior(text)
            if prior is not None:
                text = prior
            elif is_summary(text):
                continue
            if not text.strip() or (it.role == "user" and text.lstrip().startswith(INJECTED_USER)):
                continue
            out.append(Item(role=it.role, content=text))
        elif it.role == "tool_output":
            if text.strip() in PLACEHOLDERS:  # the call ran; its output is elsewhere (or gone): nothing here
                text = ""
            output, failed = tool_result(text)
            name = it.name or (names.get(it.call_id) if it.call_id else None)
            out.append(Item(role="tool_output", content=output, name=name, call_id=it.call_id, is_error=failed))
        else:
            out.append(it)
    return out


def messages_items(messages: list[dict[str, Any]]) -> list[Item]:
    """Hermes' messages (state.db rows, or the plugin's copies of its in-memory messages), read as the Chat
    Completions messages they are, then as Hermes means them."""
    items: list[Item] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        calls = _calls(m.get("tool_calls"))
        read = [it for it, _ in openai_chat.message_items({**m, "tool_calls": calls})]
        tool = m.get("tool_name") or m.get("name")
        for it in read:
            if it.role == "tool_output" and isinstance(tool, str) and tool:
                it.name = tool
            if it.role == "tool_call" and not it.call_id:  # Hermes' copies name the call by call_id too
                it.call_id = next((str(c.get("call_id")) for c in calls if c.get("call_id")), None)
        items += read
    return meaning(items)


def message_items(m: dict[str, Any]) -> list[Item]:
    return messages_items([m])


# ---- the proxy: Hermes' compaction request ---------------------------------------------------------------

# in the raw body of every request ``recognise`` accepts by its shape (its prompt's opening words)
MARKERS = (hermes_prompt.PREAMBLE.encode(),)


def recognise(req: WireRequest, pattern: re.Pattern[str] | None) -> Compaction | None:
    """Hermes' compaction by its shape: a request of one user message and no tools whose text is Hermes'
    summarization prompt (checked before any history is read: every request through the proxy is asked);
    else a ``[proxy] patterns`` entry for ``hermes``, if one is set."""
    msgs = req.body.get("input" if req.wire == "responses" else "messages")
    first = msgs[0] if isinstance(msgs, list) and len(msgs) == 1 else None
    if (
        not req.body.get("tools")
        and isinstance(first, dict)
        and first.get("role", "user") == "user"
        and hermes_prompt.is_prompt(module(req.wire).last_user_text(req.body))
    ):
        return Compaction("hermes", "its one-message summarization prompt")
    return by_pattern(req, "hermes", pattern)


def request_boundary(req: WireRequest, pattern: re.Pattern[str] | None) -> Boundary:
    """The history Hermes wrote into its prompt: the turns (tool results with the calls they answer), the
    summary it updates, and the focus it was asked to keep in view (the user's ``/compress`` words, or its
    list of the user's latest prompts)."""
    prompt = hermes_prompt.read(module(req.wire).last_user_text(req.body))
    span = meaning(prompt.items)
    focus = [Item(role="user", content=prompt.focus)] if prompt.focus and prompt.focus.strip() else []
    return Boundary(
        host="hermes",
        index=0,
        summary="",
        previous_summary=prompt.previous_summary,
        span=span,
        retained=focus,
        task=next((it.content for it in span if it.role == "user"), None),
    )


# ---- state.db ------------------------------------------------------------------------------------------


def _split(path: str | Path) -> tuple[Path, str | None]:
    p = Path(path)
    if not p.exists() and "#" in str(path):
        base, _, session = str(path).rpartition("#")
        if Path(base).exists() and session:
            return Path(base), session
    return p, None


def looks_like(path: str | Path) -> bool:
    """A SQLite file with Hermes' ``sessions`` and ``messages`` tables."""
    p, _ = _split(path)
    try:
        with p.open("rb") as fh:
            if fh.read(16) != SQLITE_MAGIC:
                return False
        con = _connect(p)
    except (OSError, TranscriptError):
        return False
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(messages)")}
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return "sessions" in tables and {"session_id", "role", "content", "tool_calls", "active", "compacted"} <= cols


def _connect(p: Path) -> sqlite3.Connection:
    """Read only; Hermes may be writing the file this moment (it keeps it in WAL mode)."""
    try:
        con = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1")
        return con
    except sqlite3.Error as exc:
        raise TranscriptError(f"cannot read {p} as a SQLite database: {exc}") from None


def _rows(con: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute(sql, args)]
    for r in rows:  # a blob where text belongs (a damaged row) reads as its text
        for k, v in r.items():
            if isinstance(v, bytes):
                r[k] = v.decode("utf-8", "replace")
    return rows


def _chain(con: sqlite3.Connection, session: str) -> list[str]:
    """``session`` and its parents, oldest first."""
    out: list[str] = []
    cur: str | None = session
    while cur and cur not in out:
        out.append(cur)
        row = _rows(con, "SELECT parent_session_id FROM sessions WHERE id = ?", (cur,))
        cur = row[0]["parent_session_id"] if row else None
    return out[::-1]


def _newest_session(con: sqlite3.Connection, path: Path) -> str:
    for r in _rows(
        con,
        "SELECT session_id, content FROM messages WHERE role IN ('user', 'assistant') AND content LIKE ? "
        "ORDER BY id DESC",
        ("%[CONTEXT %",),
    ):
        if is_summary(r["content"] or ""):
            return str(r["session_id"])
    raise TranscriptError(f"{path}: no compaction in any session of this Hermes state.db")


def _transcript(path: str | Path) -> tuple[Path, str, list[dict[str, Any]]]:
    p, session = _split(path)
    if not p.exists():
        raise TranscriptError(f"transcript not found: {p}")
    con = _connect(p)
    try:
        session = session or _newest_session(con, p)
        if not _rows(con, "SELECT 1 FROM sessions WHERE id = ?", (session,)):
            raise TranscriptError(f"{p}: no session {session!r}")
        rows: list[dict[str, Any]] = []
        for sid in _chain(con, session):
            rows += _rows(
                con,
                "SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name, active, compacted "
                "FROM messages WHERE session_id = ? ORDER BY id",
                (sid,),
            )
    except sqlite3.Error as exc:
        raise TranscriptError(f"cannot read {p}: {exc}") from None
    finally:
        con.close()
    return p, session, rows


def _compactions(rows: list[dict[str, Any]]) -> list[int]:
    """Indexes of the rows that bring a new summary (a copy of the last one is not a new compaction)."""
    out: list[int] = []
    last = None
    for i, r in enumerate(rows):
        text = r.get("content") or ""
        if r.get("role") in ("user", "assistant") and is_summary(text):
            body = summary_body(text)
            if body != last:
                out.append(i)
            last = body
    return out


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r.get("role"), r.get("content"), r.get("tool_call_id"), r.get("tool_calls"))


def boundary_count(path: str | Path) -> int:
    return len(_compactions(_transcript(path)[2]))


def read_boundary(path: str | Path, index: int | None = None) -> Boundary:
    p, session, rows = _transcript(path)
    marks = _compactions(rows)
    i = choose(p, len(marks), index)
    at = marks[i]
    start = marks[i - 1] + 1 if i > 0 else 0
    span_rows = [r for r in rows[start:at] if not is_summary(r.get("content") or "")]
    after = rows[at + 1 : marks[i + 1] if i + 1 < len(marks) else len(rows)]
    seen = {_key(r) for r in span_rows}
    kept = [r for r in after if _key(r) in seen]
    prior = merged_prior(rows[at].get("content") or "")
    retained = (
        [Item(role=rows[at]["role"], content=prior)] if prior and rows[at]["role"] in ("user", "assistant") else []
    )
    retained += messages_items(kept)
    first_user = next((it.content for it in messages_items(rows) if it.role == "user"), None)
    return Boundary(
        host="hermes",
        index=i,
        summary=rows[at].get("content") or "",
        previous_summary=summary_body(rows[marks[i - 1]]["content"]) if i > 0 else None,
        span=messages_items(span_rows),
        retained=retained,
        session_id=str(rows[at].get("session_id") or session),
        boundary_id=f"{rows[at].get('session_id')}:{rows[at].get('id')}",
        task=first_user,
    )


def plugin_boundary(payload: dict[str, Any]) -> Boundary:
    """The compaction the Hermes plugin hands over: the summary Hermes is about to keep, the messages it
    was written from, the ones Hermes keeps beside it, and the summary it updates."""
    raw_turns, raw_kept = payload.get("turns"), payload.get("retained")
    turns: list[dict[str, Any]] = raw_turns if isinstance(raw_turns, list) else []
    kept: list[dict[str, Any]] = raw_kept if isinstance(raw_kept, list) else []
    retained = messages_items(kept)
    focus = payload.get("focus_topic")
    if isinstance(focus, str) and focus.strip():
        # what the summarizer was asked to keep in view: the user's /compress words, or Hermes' list of the
        # latest user prompts (quoted from the user)
        retained.append(Item(role="user", content=focus))
    span = messages_items(turns)
    previous = payload.get("previous_summary")
    return Boundary(
        host="hermes",
        index=0,
        summary=str(payload.get("summary") or ""),
        previous_summary=previous if isinstance(previous, str) and previous.strip() else None,
        span=span,
        retained=retained,
        session_id=str(payload.get("session_id") or "") or None,
        task=next((it.content for it in span if it.role == "user"), None),
    )
