"""OpenClaw's events. OpenClaw runs no shell hooks: these come from sjc's plugin for it
(``sjc_mcp/plugins/openclaw``), a compaction provider that runs ``sjc-hook openclaw`` at each compaction.

- ``CompactionStart``: answers ``{"enabled": true, "time_budget_s": …}``. A switched-off sjc (kill switch,
  ``SJC_DISABLE``) or a config it cannot read never gets here: it answers nothing and logs why, and the
  plugin leaves the compaction to OpenClaw's own summariser before asking any model.
- ``Summarize``: the summary OpenClaw's summariser wrote, the messages it summarised (OpenClaw's own:
  ``user``, ``assistant`` with ``toolCall`` blocks, ``toolResult``) and the previous summary; answers
  ``{"summary": <pruned>, "removed", "kept", "mode"}`` (in shadow mode the summary as it came).
- ``Fault``: what went wrong on the plugin's side (no answer in time, no model); logged, answers nothing.
"""

from __future__ import annotations

import json
import sys
from typing import Any, ClassVar

from sjc_mcp.hook.base import HookBase


class OpenClawHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {"CompactionStart": "start", "Summarize": "summarize", "Fault": "fault"}

    def start(self) -> str:
        return json.dumps({"enabled": True, "time_budget_s": self.config.hook.time_budget_s})

    def summarize(self) -> str:
        from sjc_mcp.hosts.base import Boundary
        from sjc_mcp.hosts.openclaw import message_items
        from sjc_mcp.pipeline import judge_boundary

        summary = self.payload.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("Summarize payload has no summary")
        messages = self.payload.get("messages")
        if not isinstance(messages, list):
            raise ValueError("Summarize payload has no messages list")
        previous = self.payload.get("previous_summary")
        boundary = Boundary(
            host="openclaw",
            index=0,
            summary=summary,
            previous_summary=previous if isinstance(previous, str) and previous.strip() else None,
            span=[item for m in messages if isinstance(m, dict) for item in message_items(m)],
            session_id=self.session or None,
            boundary_id=None,
        )
        meta = self.meta(host="openclaw")
        r: Any = judge_boundary(boundary, host="openclaw", config=self.config, meta=meta, log=True)
        for warning in getattr(r, "warnings", None) or []:
            print(f"sjc hook: {warning}", file=sys.stderr)
        return json.dumps({"summary": r.pruned_summary, "removed": r.removed, "kept": r.kept, "mode": r.mode})

    def fault(self) -> str:
        from sjc_mcp.log import chain as decision_log

        message = str(self.payload.get("message") or "the plugin gave up")
        meta = self.meta(host="openclaw")
        decision_log.append_status(self.config.decision_log_path, "error", [f"plugin: {message}"], meta)
        return ""
