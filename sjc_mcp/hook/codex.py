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
from sjc_mcp.hook.base import HookBase, deliver_note, switched_off, wait_for

_COMPACTED = re.compile(rb'"type"\s*:\s*"compacted"')


def quick(payload: dict[str, Any]) -> str | None:
    """What an event answers before any config is loaded ("": nothing); None: run it with the config.
    Handing over a note PostCompact left needs no config: SessionStart(compact) after PostCompact saw
    this compaction, and UserPromptSubmit, take the note here."""
    from pathlib import Path

    from sjc_mcp.hook.state import SessionState

    event = payload.get("hook_event_name")  # SessionStart only with source "compact" (``hook.HOSTS``)
    if event not in ("SessionStart", "UserPromptSubmit"):
        return None
    state = SessionState.of(str(payload.get("session_id") or ""))
    waiting = state.note_waiting()
    if event == "UserPromptSubmit":
        return deliver_note(state, event) if waiting and not switched_off() else ("" if not waiting else None)
    transcript = Path(str(payload["transcript_path"])).expanduser() if payload.get("transcript_path") else None
    if transcript is not None and seen_by_post_compact(state, transcript):
        return deliver_note(state, event) if waiting and not switched_off() else ("" if not waiting else None)
    return None  # PostCompact did not see this compaction: judge it first


def seen_by_post_compact(state: Any, transcript: Any) -> bool:
    """PostCompact judged the newest compaction: the rollout has no compacted record past where it stood."""
    seen = state.read().get("codex_post_compact")
    if not isinstance(seen, dict) or seen.get("transcript") != str(transcript):
        return False
    try:
        with transcript.open("rb") as fh:
            fh.seek(int(seen.get("size", 0)))
            return _COMPACTED.search(fh.read()) is None
    except (OSError, ValueError):
        return False


class CodexHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {
        "PostCompact": "post_compact",
        "SessionStart": "session_start",
        "UserPromptSubmit": "user_prompt_submit",
    }

    def _newest(self) -> Any:
        """The newest compaction of the rollout, waiting briefly for its record if the file lags."""
        from sjc_mcp.hosts import codex

        transcript = self.transcript
        if transcript is None:
            raise ValueError(f"{self.event} payload has no transcript_path")

        def probe() -> Any:
            try:
                return codex.read_boundary(transcript)
            except TranscriptError:  # no compacted record yet
                return None

        b = wait_for(probe, transcript, min(5.0, self.config.hook.time_budget_s / 2))
        if b is None:
            raise RuntimeError(f"no compacted record in {self.transcript}")
        return b

    def _judged(self) -> dict[str, Any] | None:
        """The judgment of the newest compaction (judged now unless it was before), with its note left for
        the model; None when there is nothing to judge (a summary made and encrypted on the server)."""
        from sjc_mcp.hook.state import summary_key
        from sjc_mcp.log.records import log_nothing

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

    def post_compact(self) -> str:
        done = self._judged()
        if done is None:
            return ""
        assert self.transcript is not None
        with self.state.update() as st:
            st["codex_post_compact"] = {"transcript": str(self.transcript), "size": self.transcript.stat().st_size}
        return json.dumps({"systemMessage": self._user_line(done)})

    def session_start(self) -> str:  # source "compact": the others are never handed over (``hook.HOSTS``)
        if not seen_by_post_compact(self.state, self.transcript) and self._judged() is None:
            return ""
        return self._deliver()

    def user_prompt_submit(self) -> str:
        return self._deliver()

    def _deliver(self) -> str:
        return deliver_note(self.state, self.event)
