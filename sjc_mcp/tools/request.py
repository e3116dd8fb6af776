"""What the relevance judge is asked about a history: the candidate tool results (completed, outside the
first user message and the most recent turns), the task, the recent turns and what was said after each.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.hosts.base import Item


@dataclasses.dataclass(slots=True, kw_only=True)
class ToolResult:
    """One candidate: a tool output (and the call it answers) at ``index`` in the messages."""

    id: int
    index: int
    call_index: int | None
    tool: str | None
    call: str | None
    text: str
    is_error: bool = False
    later_from: int = 0  # where in the request's ``later`` the messages after this result begin


@dataclasses.dataclass(slots=True, kw_only=True)
class RelevanceRequest:
    task: str | None
    results: list[ToolResult]
    recent: list[str] = dataclasses.field(default_factory=list)  # the most recent turns, oldest first
    # what the user and the agent said and called, in order (see ``later_from``)
    later: list[str] = dataclasses.field(default_factory=list)


def turn_starts(items: Sequence[Item]) -> list[int]:
    """Where each turn begins: a user message, or the model's next step (its text and calls after the
    results of its previous ones)."""
    out = []
    prev = None
    for i, it in enumerate(items):
        if it.role == "user" or (it.role in ("assistant", "tool_call") and prev in (None, "user", "tool_output")):
            out.append(i)
        prev = it.role
    return out


def recent_start(items: Sequence[Item], keep_recent_turns: int) -> int:
    """Index where the most recent ``keep_recent_turns`` turns begin (``len(items)`` when none are kept)."""
    if keep_recent_turns <= 0:
        return len(items)
    starts = turn_starts(items)
    return starts[-keep_recent_turns] if len(starts) >= keep_recent_turns else 0


def candidates(items: Sequence[Item], keep_recent_turns: int, judge_chars: int) -> list[ToolResult]:
    """Completed tool results before the most recent ``keep_recent_turns`` turns."""
    cutoff = recent_start(items, keep_recent_turns)
    calls = {it.call_id: i for i, it in enumerate(items) if it.role == "tool_call" and it.call_id}
    out: list[ToolResult] = []
    for i, it in enumerate(items[:cutoff]):
        if it.role != "tool_output":
            continue
        ci = calls.get(it.call_id) if it.call_id else None
        call = items[ci] if ci is not None else None
        out.append(
            ToolResult(
                id=len(out),
                index=i,
                call_index=ci,
                tool=it.name or (call.name if call else None),
                call=call.content if call else None,
                text=it.content[:judge_chars],
                is_error=it.is_error,
            )
        )
    return out


def build_request(items: Sequence[Item], config: Config, task: str | None = None) -> RelevanceRequest:
    cfg = config.tools
    results = candidates(items, cfg.keep_recent_turns, cfg.judge_chars)
    first_user = next((it.content for it in items if it.role == "user"), None)
    recent_from = recent_start(items, cfg.keep_recent_turns) if cfg.keep_recent_turns else len(items)
    recent = [f"{it.role}{' ' + it.name if it.name else ''}: {it.content[:2000]}" for it in items[recent_from:]]
    said = [i for i, it in enumerate(items) if it.role in ("assistant", "tool_call", "user")]
    for r in results:
        r.later_from = bisect.bisect_right(said, r.index)
    later = [items[i].content for i in said]
    return RelevanceRequest(task=task or first_user, recent=recent, results=results, later=later)


def remaining(full: RelevanceRequest, keep: list[int], sup: dict[int, Any], config: Config) -> RelevanceRequest:
    """The request for the results at positions ``keep``, a partly superseded one judged on what remains of it."""
    cut = config.tools.judge_chars
    results = [
        dataclasses.replace(r, text=sup[r.id].text[:cut]) if r.id in sup else r for r in (full.results[n] for n in keep)
    ]
    return dataclasses.replace(full, results=results)


def redacted_request(
    items: Sequence[Item], config: Config, task: str | None, request: RelevanceRequest, sup: dict[int, Any]
) -> RelevanceRequest:
    """``request`` rebuilt from redacted copies of the messages (the messages themselves stay as they are)."""
    from sjc_mcp.redact import redacted

    red = build_request([dataclasses.replace(it, content=redacted(it.content)) for it in items], config, task)
    ids = {r.id for r in request.results}
    keep = [n for n, r in enumerate(red.results) if r.id in ids]
    red_sup = {rid: dataclasses.replace(s, text=redacted(s.text)) for rid, s in sup.items()}
    return remaining(red, keep, red_sup, config)
