"""Claude Code's hook events.

Observed in the real CLI: ``SessionStart`` (source ``compact``) and ``PostCompact`` run *before* the
boundary and summary are written to the transcript. No hook can edit the summary;
``SessionStart`` ``additionalContext`` reaches the model after it.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hook.base import HookBase, wait_for


class ClaudeCodeHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {
        "PreCompact": "pre_compact",
        "SessionStart": "session_start",
        "PostCompact": "post_compact",
    }

    def pre_compact(self) -> str:
        from sjc_mcp.hosts import claude_code

        before = claude_code.count_boundaries(self.transcript) if self.transcript and self.transcript.exists() else 0
        with self.state.update() as st:
            st["pre_compact"] = {
                "boundaries_before": before,
                "trigger": self.payload.get("trigger"),
                "custom_instructions": self.payload.get("custom_instructions"),
                "time": time.time(),
            }
        return ""

    def _newest_cc_boundary(self) -> Any:
        from sjc_mcp.hosts import claude_code

        assert self.transcript is not None
        before = (self.state.read().get("pre_compact") or {}).get("boundaries_before")

        def probe() -> Any:
            try:  # one pass over the file: the newest compaction, if there is one yet
                b = claude_code.read_boundary(self.transcript)
            except TranscriptError:
                return None
            return None if isinstance(before, int) and b.index + 1 <= before else b

        wait = min(10.0, self.config.hook.time_budget_s / 2)
        return wait_for(probe, self.transcript, wait)

    def session_start(self) -> str:
        from sjc_mcp.state import summary_key

        if self.payload.get("source") != "compact" or self.transcript is None:
            return ""
        b = self._newest_cc_boundary()
        if b is None:
            raise RuntimeError(f"no new compaction summary appeared in {self.transcript}")
        judged = self.state.read().get("judged", {})
        done = judged.get(summary_key(b.summary))
        if done is None:
            pre = self.state.read().get("pre_compact") or {}
            done = self._judge(b, b.summary, pre.get("custom_instructions"))
            self._remember(done)
        if not done.get("correction"):
            return ""
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": done["correction"]}}
        )

    def post_compact(self) -> str:
        from sjc_mcp.hosts import claude_code
        from sjc_mcp.state import summary_key

        summary = self.payload.get("compact_summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("PostCompact payload has no compact_summary")
        key = summary_key(summary)
        done = self.state.read().get("judged", {}).get(key)
        if done is None:
            boundary = None
            if self.transcript is not None and self.transcript.exists():
                try:
                    newest = claude_code.read_boundary(self.transcript)
                except TranscriptError:  # no compaction written yet
                    newest = None
                if newest is not None and summary_key(newest.summary) == key:
                    boundary = newest
                if boundary is None:
                    boundary = claude_code.read_open_span(self.transcript)
            pre = self.state.read().get("pre_compact") or {}
            done = self._judge(boundary, summary, pre.get("custom_instructions"))
            self._remember(done)
        return self._user_line(done)

