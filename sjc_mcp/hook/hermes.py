"""Hermes Agent's one event: ``compress``, sent by sjc's Hermes plugin (``sjc_mcp/plugins/hermes``) at every
compaction, before Hermes uses or stores the summary it just got.

The payload (one JSON object on stdin, protocol ``v`` 1): ``summary`` (Hermes' summary body, without its
notice), ``turns`` (the compacted messages as the session had them), ``retained`` (the messages Hermes keeps
beside the summary), ``previous_summary``, ``focus_topic``, ``session_id``, ``hermes_home``. The answer on
stdout: ``{"summary": PRUNED, "line": …}`` when entries were deleted, ``{"line": …}`` when the summary stays
as it is, nothing at all when the hook did not judge (switched off, a fault: the reason is in the decision
log and on stderr). The plugin keeps Hermes' summary unless it gets a summary back that only deletes lines.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, ClassVar

from sjc_mcp.hook.base import HookBase

PROTOCOL = 1


class HermesHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {"compress": "compress"}

    def meta(self, **extra: Any) -> dict[str, Any]:
        home = self.payload.get("hermes_home")
        db = os.path.join(home, "state.db") if isinstance(home, str) and home else None
        return {**super().meta(**extra), "surface": "hermes-plugin", "transcript": db}

    def compress(self) -> str:
        from sjc_mcp.hosts.hermes import plugin_boundary
        from sjc_mcp.pipeline import judge_boundary

        if self.payload.get("v") != PROTOCOL:
            raise ValueError(f"the Hermes plugin speaks protocol {self.payload.get('v')!r}, this sjc {PROTOCOL}")
        boundary = plugin_boundary(self.payload)
        if not boundary.summary.strip():
            raise ValueError("the Hermes plugin sent no summary")
        r = judge_boundary(boundary, host="hermes", config=self.config, meta=self.meta(), log=True)
        for warning in r.warnings:  # the plugin passes these lines on to Hermes' log
            print(f"sjc hook: {warning}", file=sys.stderr)
        removed = sum(e.decision == "prune" for e in r.entries)
        verb = "would prune" if r.mode == "shadow" else "pruned"
        line = (
            f"sjc: compaction summary judged: kept {len(r.entries) - removed}, {verb} {removed} "
            f"{'entry' if removed == 1 else 'entries'} with no source (log: {self.config.decision_log_path})"
        )
        answer: dict[str, Any] = {"line": line}
        pruned = getattr(r, "pruned_summary", boundary.summary)
        if pruned != boundary.summary:
            answer["summary"] = pruned
        return json.dumps(answer, ensure_ascii=True)
