"""``[proxy] prefilter``: stub superseded tool results and relevance-prune the rest of a compaction request before the
compressor sees them (drop the clearly irrelevant, then summarise, then source-judge). Only
recognised compaction requests are touched, so ordinary requests and their prompt caches never are.
"""

from __future__ import annotations

import copy
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.proxy.request import Locator, content_text, history
from sjc_mcp.tools.relevance import run


def prefilter(
    api: str, body: dict[str, Any], config: Config, meta: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The request body with tool results dropped or truncated, or None when nothing changes; ``meta`` (the
    compaction's session and boundary id) goes into the log record."""
    items, where = history(api, body)
    extra = {k: v for k, v in (meta or {}).items() if k in ("session", "boundary_id", "host")}
    result = run(items, config=config, meta={"surface": "proxy", "api": api, "step": "prefilter", **extra})
    if result.status != "judged" or config.mode != "enforce":
        return None
    new = copy.deepcopy(body)
    drop: list[Locator] = []
    for v in result.results:
        if v.decision in ("truncate", "supersede"):
            text = result.replacements[v.index]
            loc = where[v.index]
            if api == "anthropic":
                new["messages"][loc[0]]["content"][loc[1]]["content"] = text
            elif api == "chat":
                new["messages"][loc[0]]["content"] = text
            else:
                new["input"][loc[0]]["output"] = text
        elif v.decision == "drop":
            drop.append(where[v.index])
            if v.call_index is not None:
                drop.append(where[v.call_index])
    if not drop:
        return new if new != body else None
    if api == "anthropic":
        for mi, bi in sorted(drop, reverse=True):
            del new["messages"][mi]["content"][bi]
        new["messages"] = [m for m in new["messages"] if m.get("content")]
    elif api == "chat":
        gone_msgs = set()
        for mi, ti in sorted(drop, reverse=True):
            if ti is None:
                gone_msgs.add(mi)
            else:
                del new["messages"][mi]["tool_calls"][ti]
                m = new["messages"][mi]
                if not m["tool_calls"]:
                    del m["tool_calls"]
                    if not content_text(m.get("content")):
                        gone_msgs.add(mi)
        new["messages"] = [m for i, m in enumerate(new["messages"]) if i not in gone_msgs]
    else:
        gone = {loc[0] for loc in drop}
        new["input"] = [it for i, it in enumerate(new["input"]) if i not in gone]
    return new
