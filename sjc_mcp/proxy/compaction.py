"""A recognised compaction's path through the proxy: its answer read whole, the summary in it judged
against the history the request compacts (``pipeline.judge_boundary``) within the time budget, logged, and
sent on pruned, in the same format (stream or not); on any fault of ours the answer as it came. What
became of it is one line on stderr (``outcome_line``)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.formats import Compaction, WireRequest
from sjc_mcp.proxy.relay import UpstreamBrokeOff, answer_headers, respond, say, start

SERVER_SIDE_NOTE = "server-side compaction: nothing to prune (the provider returns the summary encrypted)"


class Gate:
    """Who has the last word on one compaction's record: the judgment (it logged in time) or the budget
    (it ran out first, and the judgment, still running in its thread, must then log nothing)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.expired = False
        self.logged = False

    def claim_log(self) -> bool:
        with self.lock:
            if not self.expired:
                self.logged = True
            return self.logged

    def expire(self) -> bool:
        """True: the budget wins (the judgment will log nothing); False: the judgment logged already."""
        with self.lock:
            if not self.logged:
                self.expired = True
            return self.expired


def judge_answer(
    config: Config,
    req: WireRequest,
    found: Compaction,
    raw: bytes,
    stream: bool,
    meta: dict[str, Any] | None = None,
    gate: Gate | None = None,
) -> tuple[bytes | None, dict[str, Any]]:
    """The pruned answer, or None to send the original; and what happened (the stderr line says it)."""
    from sjc_mcp.formats import module
    from sjc_mcp.log.records import log_nothing, log_prune
    from sjc_mcp.models import PruneResult
    from sjc_mcp.pipeline import judge_boundary
    from sjc_mcp.proxy.request import request_boundary
    from sjc_mcp.summary import HOSTS

    meta = {
        "op": "proxy",
        "surface": "proxy",
        "api": req.wire,
        **(meta or {}),
        "model_requested": req.body.get("model"),
    }
    wire = module(req.wire)
    summary = wire.answer_text(raw, stream)
    if not summary.strip():
        log_nothing(config, "the answer holds no summary text", meta)
        return None, {"status": "nothing", "note": "the answer holds no summary text"}
    boundary = request_boundary(req, found, config.proxy.patterns)
    result = judge_boundary(
        boundary,
        summary=summary,
        host=found.host if found.host in HOSTS else None,
        config=config,
        meta={"boundary": None, **meta},
        log=False,
    )
    assert isinstance(result, PruneResult)
    if gate is not None and not gate.claim_log():  # the budget ran out first: the original was sent
        return None, {"status": "late"}
    log_prune(result, summary, config, {"boundary": None, **meta})
    info = {
        "status": "disabled" if result.disabled else "judged",
        "entries": len(result.entries),
        "removed": result.removed,
        "would_remove": sum(e.decision == "prune" for e in result.entries),
        "unjudged": sum(e.decision == "unjudged" for e in result.entries),
        "mode": result.mode,
        "unstructured": result.unstructured,
        "guarded": result.guarded,
        "incomplete_span": result.incomplete_span,
        "warnings": result.warnings,
    }
    if result.pruned_summary == summary:
        return None, info
    return wire.replace_answer(raw, stream, result.pruned_summary), info


def outcome_line(info: dict[str, Any]) -> str:
    """What became of a judged compaction, in words."""
    if info.get("status") == "disabled":
        return "recognised; sjc is switched off (kill switch or SJC_DISABLE), the answer was returned unchanged"
    if info.get("status") == "nothing":
        return f"recognised; nothing to judge: {info.get('note')}"
    if info.get("unstructured"):
        return "recognised; unstructured: nothing judged, the summary was returned as written"
    if info.get("guarded"):
        return (
            f"recognised, judged; kept whole: pruning {info.get('would_remove', 0)} of {info.get('entries', 0)} "
            "entries would pass max_prune_share"
        )
    n, m = info.get("removed", 0), info.get("entries", 0)
    extra = f", {info['unjudged']} unjudged (kept)" if info.get("unjudged") else ""
    if info.get("incomplete_span"):
        extra += "; the span starts mid-session"
    if info.get("mode") == "shadow":
        return f"recognised, judged, shadow mode: would prune {info.get('would_remove', 0)} of {m} entries{extra}"
    return f"recognised, judged, pruned {n} of {m} entries{extra}"


async def judged(
    config: Config, answer: Any, req: WireRequest, found: Compaction, meta: dict[str, Any], what: str, send: Any
) -> None:
    """A compaction's answer, read whole, judged, and sent on pruned (or as it came, on any fault)."""
    from sjc_mcp.log.records import log_status
    from sjc_mcp.proxy.upstream import UpstreamError

    pieces: list[bytes] = []
    try:
        async for piece in answer.pieces():
            pieces.append(piece)
    except UpstreamError as exc:
        got = sum(map(len, pieces))
        log_status(
            config,
            "upstream",
            [f"the upstream broke its answer off after {got:,} bytes ({exc.kind}); forwarded as sent"],
            meta,
        )
        say(
            f"{what}: recognised, not judged: the upstream broke its answer off after {got:,} bytes "
            f"({exc.kind}); forwarded as far as it came"
        )
        await answer.close()
        await start(send, answer.status, answer_headers(answer.headers))
        for piece in pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        raise UpstreamBrokeOff(str(exc)) from None
    await answer.close()
    raw = b"".join(pieces)
    status, headers = answer.status, answer.headers
    if status != 200:
        log_status(config, "upstream", [f"the upstream answered {status}; passed through"], meta)
        say(f"{what}: recognised; the upstream answered {status}, passed through")
        await respond(send, status, answer_headers(headers), raw)
        return
    content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
    stream = bool(req.body.get("stream")) or b"text/event-stream" in content_type
    pruned = await _judge_in_budget(config, req, found, raw, stream, meta, what)
    if pruned is None:
        await respond(send, status, answer_headers(headers), raw)
    else:
        await respond(send, status, answer_headers(headers, len(pruned)), pruned)


async def _judge_in_budget(
    config: Config, req: WireRequest, found: Compaction, raw: bytes, stream: bool, meta: dict[str, Any], what: str
) -> bytes | None:
    """``judge_answer`` in a thread, within the time budget: the pruned answer, or None to send the
    original (nothing pruned, the budget spent, any fault of ours); what became of it said on stderr."""
    from sjc_mcp.log.records import log_status

    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    try:
        gate = Gate()
        job = loop.run_in_executor(None, judge_answer, config, req, found, raw, stream, meta, gate)
        try:
            pruned, info = await asyncio.wait_for(asyncio.shield(job), timeout=config.proxy.judge_budget_s)
        except asyncio.TimeoutError:
            if gate.expire():
                raise
            pruned, info = await job  # it logged its decision just in time: send what it decided
    except asyncio.TimeoutError:
        log_status(
            config,
            "timeout",
            [f"judge budget of {config.proxy.judge_budget_s:g}s spent; the answer was returned unchanged"],
            meta,
        )
        say(
            f"{what}: recognised, not judged: the judge budget of {config.proxy.judge_budget_s:g} s was spent; "
            "the answer was returned unchanged"
        )
        pruned = None
    except Exception as exc:  # any fault of ours: fail open
        log_status(config, "error", [f"{type(exc).__name__}: {exc}; the answer was returned unchanged"], meta)
        say(f"{what}: recognised, not judged: {type(exc).__name__}: {exc}; the answer was returned unchanged")
        pruned = None
    else:
        say(f"{what}: {outcome_line(info)} ({(time.perf_counter() - t0) * 1000:.0f} ms)")
    return pruned
