"""``[proxy] prefilter``: stub superseded tool results and relevance-prune the rest of a compaction request before the
compressor sees them (drop the clearly irrelevant, then summarise, then source-judge). Only
recognised compaction requests are touched, so ordinary requests and their prompt caches never are.
"""

from __future__ import annotations

import copy
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.formats import Locator, WireRequest, module
from sjc_mcp.tools.relevance import run


def prefilter(req: WireRequest, config: Config, meta: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The request body with tool results dropped or truncated, or None when nothing changes; ``meta`` (the
    compaction's session and boundary id) goes into the log record."""
    wire = module(req.wire)
    items, where = wire.history(req.body)
    extra = {k: v for k, v in (meta or {}).items() if k in ("session", "boundary_id", "host")}
    result = run(items, config=config, meta={"surface": "proxy", "api": req.wire, "step": "prefilter", **extra})
    if result.status != "judged" or config.mode != "enforce":
        return None
    new = copy.deepcopy(req.body)
    drop: list[Locator] = []
    for v in result.results:
        if v.decision in ("truncate", "supersede"):
            wire.set_output(new, where[v.index], result.replacements[v.index])
        elif v.decision == "drop":
            drop.append(where[v.index])
            if v.call_index is not None:
                drop.append(where[v.call_index])
    if drop:
        wire.drop(new, drop)
    return new if new != req.body else None
