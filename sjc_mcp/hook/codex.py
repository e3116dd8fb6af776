"""Codex's hook events: ``PostCompact`` judges the new ``compacted`` record; ``UserPromptSubmit``
hands the note to the model once."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hook.base import HookBase, wait_for


class CodexHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {"PostCompact": "post_compact", "UserPromptSubmit": "user_prompt_submit"}

    def post_compact(self) -> str:
        from sjc_mcp.hosts import codex
        from sjc_mcp.pipeline import log_nothing
        from sjc_mcp.state import summary_key

        if self.transcript is None:
            raise ValueError("PostCompact payload has no transcript_path")

        def probe() -> Any:
            try:
                return codex.read_boundary(self.transcript)
            except TranscriptError:  # no compacted record yet
                return None

        b = wait_for(probe, self.transcript, min(5.0, self.config.hook.time_budget_s / 2))
        if b is None:
            raise RuntimeError(f"no compacted record in {self.transcript}")
        if b.note:
            log_nothing(self.config, b.note, self.meta(boundary=b.index, boundary_id=b.boundary_id, host="codex"))
            return ""
        done = self.state.read().get("judged", {}).get(summary_key(b.summary))
        if done is None:
            done = self._judge(b, b.summary)
            self._remember(done)
        return json.dumps({"systemMessage": self._user_line(done)})

    def user_prompt_submit(self) -> str:
        pending = None
        with self.state.update() as st:
            for rec in (st.get("judged") or {}).values():
                if rec.get("correction") and not rec.get("delivered"):
                    pending = rec["correction"]
                    rec["delivered"] = True
        if not pending:
            return ""
        return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": pending}})

