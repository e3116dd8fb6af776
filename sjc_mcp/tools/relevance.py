"""Pruning of tool results: superseded outputs first, then relevance ("is this result still needed?").

A filter, not a rewrite. First, outputs that a later read, command or search of the same thing supersedes
become a one-line stub naming the later call, and runs of lines a later output shows again give way to a
line naming where (``supersession.py``; no judge). Then the remaining candidates, completed tool results
outside the pinned first user message and the most recent turns (a partly superseded one as what remains
of it), are judged (cut to ``judge_chars`` for judging) and kept, truncated (the call stays, the result is
cut to its head and its declaration lines with a note saying what was cut) or dropped (call and result).
Biased toward keeping: below ``drop_below - margin`` drops, below ``truncate_below - margin`` truncates, a
score the judge returns for many results at once (an uninformative answer) never cuts, and an output a
stub or marker names stays whole. If the whole pass would save less than ``min_reduction`` of the
tool-result characters, nothing changes and the log says "not worth a call".

What the judge is asked is built in ``tool_request.py``; how a result is cut, in ``truncation.py``."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sjc_mcp.config import Config
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import Item, as_dict
from sjc_mcp.text import estimate_tokens
from sjc_mcp.tools.request import (
    RelevanceRequest,
    ToolResult,
    build_request,
    candidates,
    recent_start,
    redacted_request,
    remaining,
    turn_starts,
)
from sjc_mcp.tools.truncation import OUTLINE_CHARS, outline, truncated

__all__ = [
    "OUTLINE_CHARS",
    "RelevanceRequest",
    "ToolResult",
    "ToolVerdict",
    "ToolsResult",
    "build_request",
    "candidates",
    "judge_tool_results",
    "messages_from_json",
    "outline",
    "prune_tool_results",
    "recent_start",
    "run",
    "truncated",
    "turn_starts",
]

ToolDecision = Literal["keep", "truncate", "drop", "supersede"]


@dataclass(slots=True, kw_only=True)
class ToolVerdict:
    id: int
    index: int  # position of the result in the messages
    tool: str | None
    score: float | None
    decision: ToolDecision
    chars_before: int
    chars_after: int
    call_index: int | None = None  # position of the call it answers
    superseded_by: int | None = None  # position of the later output that supersedes this one
    note: str | None = None  # for a superseded result: the line naming what supersedes it


@dataclass(slots=True, kw_only=True)
class ToolsResult:
    results: list[ToolVerdict]
    messages: list[Item]
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    judge: dict[str, str]
    mode: str
    status: str
    tokens_estimated: bool = True
    errors: list[str] = field(default_factory=list)
    superseded: int = 0
    chars_superseded: int = 0  # tool-result characters the stubs replaced
    # what replaces each superseded result, by its position in the messages (not part of the answer)
    replacements: dict[int, str] = field(default_factory=dict, repr=False)


def decide(scores: dict[int, float | None], config: Config) -> dict[int, ToolDecision]:
    cfg = config.tools
    counts = Counter(round(s, 3) for s in scores.values() if s is not None)
    common = {v for v, n in counts.items() if n >= 3 and n >= 0.2 * max(1, len(scores))}
    out: dict[int, ToolDecision] = {}
    for rid, s in scores.items():
        if s is None or round(s, 3) in common:
            out[rid] = "keep"  # no answer, or one the judge gives to everything: no information to cut on
        elif s < cfg.drop_below - cfg.margin:
            out[rid] = "drop"
        elif s < cfg.truncate_below - cfg.margin:
            out[rid] = "truncate"
        else:
            out[rid] = "keep"
    return out


def _superseded(items: Sequence[Item], results: list[ToolResult], config: Config) -> dict[int, Any]:
    """Result id -> ``supersession.Superseded`` for the candidates a later call supersedes."""
    if not config.tools.supersede or not results:
        return {}
    from sjc_mcp.tools import supersession

    starts = turn_starts(items)
    turn_of = [0] * len(items)
    t = 0
    for i in range(len(items)):
        while t < len(starts) and starts[t] <= i:
            t += 1
        turn_of[i] = max(1, t)
    cutoff = recent_start(items, config.tools.keep_recent_turns)
    found = supersession.find(items, cutoff, turn_of)
    return {r.id: found[r.index] for r in results if r.index in found}


def _protect_relied(results: list[ToolResult], decisions: dict[int, ToolDecision], sup: dict[int, Any]) -> None:
    """An output a stub or marker that stays points to is not cut: the lines it names must still be there."""
    by_index = {r.index: r.id for r in results}
    changed = True
    while changed:
        changed = False
        relied = {j for rid, s in sup.items() if decisions[rid] == "supersede" for j in s.relies_on}
        for j in relied:
            rid = by_index.get(j)
            if rid is not None and decisions[rid] in ("drop", "truncate"):
                decisions[rid] = "supersede" if rid in sup else "keep"
                changed = True


def apply(
    items: Sequence[Item], results: list[ToolResult], decisions: dict[int, ToolDecision], texts: dict[int, str]
) -> list[Item]:
    """The messages with the decisions applied: ``texts`` (by result id) replace the superseded and truncated
    results; a dropped result goes with its call."""
    drop: set[int] = set()
    cut: dict[int, str] = {}
    for r in results:
        d = decisions.get(r.id, "keep")
        if d in ("supersede", "truncate"):
            cut[r.index] = texts[r.id]
        elif d == "drop":
            drop.add(r.index)
            if r.call_index is not None:
                drop.add(r.call_index)
    out = []
    for i, it in enumerate(items):
        if i in drop:
            continue
        out.append(dataclasses.replace(it, content=cut[i]) if i in cut else it)
    return out


def _tool_chars(items: Sequence[Item]) -> int:
    return sum(len(it.content) for it in items if it.role in ("tool_output", "tool_call"))


def _scores(
    items: list[Item],
    full: RelevanceRequest,
    sup: dict[int, Any],
    whole: set[int],
    config: Config,
    task: str | None,
    judge: Any,
) -> tuple[dict[int, float | None], str, str, list[str]]:
    """The judge's score of every candidate it is asked about (not those supersession stubbed outright), its
    name and model, and what went wrong (a judge that fails scores nothing and cuts nothing)."""
    from sjc_mcp.judges import make_judge

    keep_ids = [n for n, r in enumerate(full.results) if r.id not in whole]
    request = remaining(full, keep_ids, sup, config)
    scores: dict[int, float | None] = {r.id: None for r in full.results}
    errors: list[str] = []
    name, model = "none", "none"
    if not request.results:
        return scores, name, model, errors
    judge = judge or make_judge(config)
    name, model = judge.name, judge.model
    if getattr(judge, "sends_text", False):  # redact whole results before they are cut for judging
        request = redacted_request(items, config, task, request, sup)
    try:
        out = judge.relevance(request)
        name, model = out.name, out.model
        errors += out.errors
        for j in out.judgments:
            if j.entry_id in scores and j.entry_id not in whole:
                scores[j.entry_id] = j.score if j.score is None or 0.0 <= j.score <= 1.0 else None
    except Exception as exc:  # a judge that fails cuts nothing
        errors.append(f"judge {name} failed: {type(exc).__name__}: {exc}")
    return scores, name, model, errors


def _decisions(
    items: list[Item],
    full: RelevanceRequest,
    scores: dict[int, float | None],
    sup: dict[int, Any],
    whole: set[int],
    config: Config,
    off: bool,
) -> tuple[dict[int, ToolDecision], dict[int, str]]:
    """Each candidate's decision, and the text that replaces each superseded or truncated one."""
    decided = decide({k: v for k, v in scores.items() if k not in whole}, config) if not off else {}
    decisions: dict[int, ToolDecision] = {r.id: decided.get(r.id, "keep") for r in full.results}
    for rid in sup:  # a partly superseded result the judge would not cut keeps what later outputs do not show
        if rid in whole or decisions[rid] == "keep":
            decisions[rid] = "supersede"
    keep_chars = config.tools.truncate_keep_chars

    def base(r: ToolResult) -> str:  # what a result is before any cut: what supersession left of it, or all
        return sup[r.id].text if r.id in sup else items[r.index].content

    for r in full.results:  # a result already within what truncation keeps is not cut
        if decisions[r.id] == "truncate" and len(base(r)) <= keep_chars:
            decisions[r.id] = "supersede" if r.id in sup else "keep"
    _protect_relied(full.results, decisions, sup)
    texts = {
        r.id: base(r) if d == "supersede" else truncated(base(r), keep_chars)
        for r in full.results
        if (d := decisions[r.id]) in ("supersede", "truncate")
    }
    return decisions, texts


def _verdict(
    r: ToolResult, items: list[Item], d: ToolDecision, texts: dict[int, str], score: float | None, sup: dict[int, Any]
) -> ToolVerdict:
    result_text = items[r.index].content
    size = 0 if d == "drop" else len(texts[r.id]) if d in ("supersede", "truncate") else len(result_text)
    return ToolVerdict(
        id=r.id,
        index=r.index,
        call_index=r.call_index,
        tool=r.tool,
        score=score,
        decision=d,
        chars_before=len(result_text),
        chars_after=size,
        superseded_by=sup[r.id].later if r.id in sup and d != "drop" else None,
        note=sup[r.id].stub if r.id in sup and d != "drop" else None,
    )


def _log(result: ToolsResult, config: Config, meta: dict[str, Any] | None, after: int, t0: float) -> None:
    verdicts = result.results
    record = {
        "v": 1,
        "op": "tools",
        **{k: v for k, v in (meta or {}).items() if v is not None},
        "judge": result.judge,
        "config_hash": config.digest(),
        "mode": config.mode,
        "status": result.status,
        "results": [as_dict(v, exclude=frozenset({"index", "call_index"}), exclude_none=True) for v in verdicts],
        "chars_before": result.chars_before,
        "chars_after": result.chars_after,
        "chars_after_enforced": after,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "tokens_estimated": True,
        "duration_ms": round((time.perf_counter() - t0) * 1000, 2),
        "errors": result.errors,
        "kept": sum(v.decision == "keep" for v in verdicts),
        "truncated": sum(v.decision == "truncate" for v in verdicts),
        "dropped": sum(v.decision == "drop" for v in verdicts),
        "superseded": result.superseded,
        "entries": [],
    }
    try:
        decision_log.append(config.decision_log_path, record)
    except OSError as exc:
        print(f"sjc: could not write the decision log {config.decision_log_path}: {exc}", file=sys.stderr)


def run(
    items: Sequence[Item],
    *,
    config: Config | None = None,
    task: str | None = None,
    judge: Any = None,
    prune: bool = True,
    log: bool = True,
    meta: dict[str, Any] | None = None,
) -> ToolsResult:
    """Judge every candidate tool result; with ``prune``, return the messages with the decisions applied."""
    config = config or Config()
    items = list(items)
    t0 = time.perf_counter()
    before = _tool_chars(items)
    off = config.disabled()
    full = build_request(items, config, task)
    sup = _superseded(items, full.results, config) if not off else {}
    whole = {rid for rid, s in sup.items() if s.text == s.stub}  # stubbed outright: nothing left to judge
    if off:
        scores: dict[int, float | None] = {r.id: None for r in full.results}
        name, model, errors = "none", "none", [f"disabled by {off}"]
    else:
        scores, name, model, errors = _scores(items, full, sup, whole, config, task, judge)
    decisions, texts = _decisions(items, full, scores, sup, whole, config, bool(off))
    pruned_items = apply(items, full.results, decisions, texts)
    after = _tool_chars(pruned_items)
    status = "disabled" if off else "judged"
    if not off and before and (before - after) / before < config.tools.min_reduction:
        status = "not worth a call"
        decisions = {rid: "keep" for rid in decisions}
        pruned_items = items
        after = before
    enforce = config.mode == "enforce" and status == "judged"
    verdicts = [_verdict(r, items, decisions.get(r.id, "keep"), texts, scores.get(r.id), sup) for r in full.results]
    final = pruned_items if enforce and prune else items
    result = ToolsResult(
        results=verdicts,
        messages=final,
        chars_before=before,
        chars_after=after if enforce else before,
        tokens_before=estimate_tokens("".join(it.content for it in items)),
        tokens_after=estimate_tokens("".join(it.content for it in final)),
        judge={"name": name, "model": model},
        mode=config.mode,
        status=status,
        errors=errors,
        superseded=sum(v.decision == "supersede" for v in verdicts),
        chars_superseded=sum(v.chars_before - v.chars_after for v in verdicts if v.decision == "supersede"),
    )
    cut = ("supersede", "truncate")  # after the floor every decision is "keep": nothing is replaced
    result.replacements = {r.index: texts[r.id] for r in full.results if decisions[r.id] in cut}
    if log:
        _log(result, config, meta, after, t0)
    return result


def judge_tool_results(items: Sequence[Item], **kw: Any) -> ToolsResult:
    return run(items, prune=False, **kw)


def prune_tool_results(items: Sequence[Item], **kw: Any) -> ToolsResult:
    return run(items, prune=True, **kw)


_ROLE_ALIASES = {"tool": "tool_output", "function": "tool_output", "human": "user", "model": "assistant"}


def messages_from_json(data: Any) -> list[Item]:
    """A JSON list of ``{role, content, name?, id?|call_id?, is_error?}`` (roles: user, assistant, tool_call,
    tool_output or tool) as items."""
    from sjc_mcp.errors import InputError
    from sjc_mcp.hosts.base import str_or_none

    if not isinstance(data, list):
        raise InputError("messages must be a JSON list of {role, content, name?, call_id?} objects")
    out = []
    for n, m in enumerate(data):
        if not isinstance(m, dict):
            raise InputError(f"message {n} is not an object")
        role = _ROLE_ALIASES.get(str(m.get("role")), m.get("role"))
        if role not in ("user", "assistant", "tool_call", "tool_output"):
            raise InputError(f"message {n}: role {m.get('role')!r} is not user, assistant, tool_call or tool_output")
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False) if content is not None else ""
        out.append(
            Item(
                role=role,  # type: ignore[arg-type]
                content=content,
                name=str_or_none(m.get("name")),
                call_id=str_or_none(m.get("call_id")) or str_or_none(m.get("id")),
                is_error=bool(m.get("is_error")),
            )
        )
    return out
