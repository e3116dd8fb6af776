"""Codex's hook events. At a compaction Codex 0.171.0 runs PreCompact, sends the compaction request,
writes the ``compacted`` record, runs ``PostCompact``, then ``SessionStart`` with source ``compact``,
whose ``additionalContext`` reaches the model in the very next request (a developer message right
after the summary), within the same turn.

A manual compaction (``thread/compact/start``, the TUI's /compact) runs PostCompact but no SessionStart.

- ``PostCompact`` judges the new ``compacted`` record and leaves the note for the model (replacing an
  older one: that summary is gone), and remembers where in the rollout it stood, so SessionStart need
  not read the rollout again;
- ``SessionStart`` (source ``compact``) hands the note to the model, judging first if PostCompact did not;
- ``UserPromptSubmit`` hands over a note nothing else took (after a manual compaction). A note is taken
  once, so the model is told once."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from sjc_mcp.errors import TranscriptError
from sjc_mcp.hook.base import HookBase, wait_for

_COMPACTED = re.compile(rb'"type"\s*:\s*"compacted"')


def quick(payload: dict[str, Any]) -> str | None:
    """What an event that has nothing to do answers before any config is loaded ("": nothing); None: run it."""
    event = payload.get("hook_event_name")
    if event == "SessionStart" and payload.get("source") != "compact":
        return ""
    if event == "UserPromptSubmit":
        from sjc_mcp.state import SessionState

        if not SessionState.of(str(payload.get("session_id") or "")).note_waiting():
            return ""
    return None


class CodexHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {
        "PostCompact": "post_compact",
        "SessionStart": "session_start",
        "UserPromptSubmit": "user_prompt_submit",
    }

    def _newest(self) -> Any:
        """The newest compaction of the rollout, waiting briefly for its record if the file lags."""
        from sjc_mcp.hosts import codex

        if self.transcript is None:
            raise ValueError(f"{self.event} payload has no transcript_path")

        def probe() -> Any:
            try:
                return codex.read_boundary(self.transcript)
            except TranscriptError:  # no compacted record yet
                return None

        b = wait_for(probe, self.transcript, min(5.0, self.config.hook.time_budget_s / 2))
        if b is None:
            raise RuntimeError(f"no compacted record in {self.transcript}")
        return b

    def _judged(self) -> dict[str, Any] | None:
        """The judgment of the newest compaction (judged now unless it was before), with its note left for
        the model; None when there is nothing to judge (a summary made and encrypted on the server)."""
        from sjc_mcp.pipeline import log_nothing
        from sjc_mcp.state import summary_key

        b = self._newest()
        if b.note:
            log_nothing(self.config, b.note, self.meta(boundary=b.index, boundary_id=b.boundary_id, host="codex"))
            self.state.take_note()  # an older summary's note no longer applies
            return None
        done = self.state.read().get("judged", {}).get(summary_key(b.summary))
        if done is None:
            done = self._judge(b, b.summary)
            self._remember(done)
        if done.get("correction"):  # this compaction put the summary in front of the model again
            self.state.put_note({"text": done["correction"], "key": done["key"], "boundary": b.index})
        else:
            self.state.take_note()
        return done

    def _seen_by_post_compact(self) -> bool:
        """PostCompact judged this compaction: the rollout has no compacted record past where it stood."""
        seen = self.state.read().get("codex_post_compact")
        if not isinstance(seen, dict) or self.transcript is None or seen.get("transcript") != str(self.transcript):
            return False
        try:
            with self.transcript.open("rb") as fh:
                fh.seek(int(seen.get("size", 0)))
                return _COMPACTED.search(fh.read()) is None
        except (OSError, ValueError):
            return False

    def post_compact(self) -> str:
        done = self._judged()
        if done is None:
            return ""
        assert self.transcript is not None
        with self.state.update() as st:
            st["codex_post_compact"] = {"transcript": str(self.transcript), "size": self.transcript.stat().st_size}
        return json.dumps({"systemMessage": self._user_line(done)})

    def session_start(self) -> str:
        if self.payload.get("source") != "compact":
            return ""
        if not self._seen_by_post_compact() and self._judged() is None:
            return ""
        return self._deliver()

    def user_prompt_submit(self) -> str:
        return self._deliver()

    def _deliver(self) -> str:
        """The note waiting for the model, taken (no other event gets it), as this event's additionalContext;
        its judgment is marked delivered, and by which event."""
        import time

        note = self.state.take_note()
        if not note:
            return ""
        with self.state.update() as st:
            rec = (st.get("judged") or {}).get(note.get("key"))
            if isinstance(rec, dict):
                rec.update(delivered=True, delivered_by=self.event, delivered_at=time.time())
        return json.dumps({"hookSpecificOutput": {"hookEventName": self.event, "additionalContext": note["text"]}})
