"""Claude Code's hook events.

What the real CLI does (2.1.332, run offline against a scripted model; ``tests/e2e/test_cc_hooks.py``
checks it):

- At every compaction (manual ``/compact``, proactive auto-compaction, reactive after a "prompt is too
  long" answer) the hooks run one after the other, each once the one before has exited: ``PreCompact``,
  then the compaction request, then ``SessionStart`` (source ``compact``), then ``PostCompact``. Only
  after that are the boundary and the summary written to the transcript, and the next request to the
  model goes out at once.
- ``SessionStart(compact)`` is handed no summary and the transcript does not hold it yet, so there is
  nothing to judge there (its ``additionalContext`` would reach the next request, but it runs before
  anything can be said). sjc does not use it; a hook that waits there for the summary delays the
  compaction and still finds nothing.
- ``PostCompact`` is handed the summary (``compact_summary``). Its plain stdout is shown to the user
  (after a manual ``/compact`` the model sees it too, in ``<local-command-stdout>``); a
  ``hookSpecificOutput`` from it fails Claude Code's validation.
- Claude Code writes the transcript behind the conversation: when ``PostCompact`` runs in the middle of
  a turn, the results of the tool batch just before the compaction may not be in it yet (seen both
  ways); ``PostToolBatch`` hands its hook those results (``tool_calls``).
- ``UserPromptSubmit`` and ``PostToolBatch`` ``additionalContext`` reach the model's next request.

So: ``PreCompact`` keeps the user's ``/compact`` instructions, ``UserPromptSubmit`` and ``PostToolBatch``
keep what they are handed (the transcript may lag behind it); ``PostCompact`` judges ``compact_summary``
against the transcript as it is then (up to the boundary: the compacted span) and those, logs, leaves
the note for the model and prints one line for the user; the next ``UserPromptSubmit`` or
``PostToolBatch`` hands the note to the model, once. After a manual ``/compact`` that is the model's
next request. After a compaction in the middle of a turn, the request that continues the turn right
away cannot carry it (no hook runs between the summary and that request); the first request after
the next tool batch or prompt does. No event ever waits for the transcript; every event but
``PostCompact`` is done before the config is loaded.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, ClassVar

from sjc_mcp.hook.base import HookBase, correction_text
from sjc_mcp.state import SessionState

MAX_KEPT = 4_000_000  # characters of tool output kept from one batch
MAX_PROMPT = 200_000


def _switched_off() -> bool:
    """The switches that cost nothing to read (the config's own kill switch path is read later)."""
    if os.environ.get("SJC_DISABLE", "") not in ("", "0", "false", "no"):
        return True
    from sjc_mcp import paths

    return paths.kill_switch().exists()


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, dict) for b in value):  # content blocks
        texts = [b["text"] for b in value if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if texts:
            return "\n".join(texts)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _batch(calls: Any) -> list[dict[str, str]]:
    """A ``PostToolBatch`` payload's calls as sources-to-be: id, tool, input, output (capped in total)."""
    out: list[dict[str, str]] = []
    left = MAX_KEPT
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("tool_use_id"), str) or left <= 0:
            continue
        output = _text(c.get("tool_response"))[:left]
        left -= len(output)
        out.append(
            {
                "id": c["tool_use_id"],
                "name": str(c.get("tool_name") or ""),
                "input": _text(c.get("tool_input") or {})[:20_000],
                "output": output,
            }
        )
    return out


def quick(payload: dict[str, Any]) -> str | None:
    """Every event but ``PostCompact``, done before any config is loaded (they only keep what they are
    handed and hand a waiting note over): the output ("" for none); None for ``PostCompact``. The
    switches read here are ``SJC_DISABLE`` and the kill switch at its default place; one at a path set
    in the config is read when the summary is judged."""
    event = payload.get("hook_event_name")
    if event == "PostCompact":
        return None
    if _switched_off():
        return ""
    state = SessionState.of(str(payload.get("session_id") or ""))
    if event == "PreCompact":
        instructions = payload.get("custom_instructions")
        state.write_recent(
            "pre_compact",
            {
                "trigger": payload.get("trigger"),
                "custom_instructions": instructions if isinstance(instructions, str) else None,
                "time": time.time(),
            },
        )
        return ""
    if event == "PostToolBatch":
        batch = _batch(payload.get("tool_calls"))
        if batch:
            state.write_recent("batch", batch)
    elif event == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if isinstance(prompt, str) and prompt.strip() and not prompt.lstrip().startswith("/"):
            state.write_recent("prompt", prompt[:MAX_PROMPT])
    return hand_over(state, str(event))


def hand_over(state: SessionState, event: str) -> str:
    """The waiting note as this event's ``additionalContext`` ("" when none waits); it is handed over
    once, and its judgment marked delivered."""
    note = state.take_note()
    if note is None:
        return ""
    with state.update() as st:
        rec = (st.get("judged") or {}).get(note.get("key"))
        if isinstance(rec, dict):
            rec.update(delivered=True, delivered_by=event, delivered_at=time.time())
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": note["text"]}})


class ClaudeCodeHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {
        "PostCompact": "post_compact",
        "UserPromptSubmit": "hand_over",
        "PostToolBatch": "hand_over",
    }

    def _span(self, recent: dict[str, Any]) -> Any:
        """The compacted span: the transcript up to now (the boundary is not written yet), and what the
        latest hooks were handed that it does not hold yet."""
        from sjc_mcp.errors import TranscriptError
        from sjc_mcp.hosts import claude_code
        from sjc_mcp.hosts.base import Boundary, Item

        boundary = None
        if self.transcript is not None and self.transcript.exists():
            try:
                boundary = claude_code.read_open_span(self.transcript)
            except TranscriptError:
                boundary = None
        if boundary is None:
            boundary = Boundary(host="claude-code", index=0, summary="", session_id=self.session or None)
        calls = {it.call_id for it in boundary.span if it.role == "tool_call" and it.call_id}
        answered = {it.call_id for it in boundary.span if it.role == "tool_output" and it.call_id}
        for c in recent.get("batch") or []:
            if not isinstance(c, dict) or c.get("id") in answered:
                continue
            if c.get("id") not in calls:
                boundary.span.append(Item(role="tool_call", content=c["input"], name=c["name"], call_id=c["id"]))
            boundary.span.append(Item(role="tool_output", content=c["output"], name=c["name"], call_id=c["id"]))
        prompt = recent.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            said = {it.content.strip() for it in boundary.span if it.role == "user"}
            if prompt.strip() not in said:
                boundary.span.append(Item(role="user", content=prompt))
        return boundary

    def post_compact(self) -> str:
        from sjc_mcp.pipeline import log_nothing
        from sjc_mcp.state import summary_key

        summary = self.payload.get("compact_summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("PostCompact payload has no compact_summary")
        recent = self.state.read_recent()
        self.state.drop_recent()
        boundary = self._span(recent)
        key = summary_key(summary)
        judged = self.state.read().get("judged", {})
        done = judged.get(key)
        if boundary.previous_summary:
            # what sjc flagged in an earlier summary of this session is no source now (no hook could take
            # it out of that summary, so it is still there to be repeated)
            for rec in judged.values():
                for p in rec.get("pruned") or []:
                    if p.get("text") and p["text"] in boundary.previous_summary:
                        boundary.previous_summary = boundary.previous_summary.replace(p["text"], "")
        if done is None:
            if not boundary.sources() and not boundary.previous_summary:
                where = self.transcript or "the payload"
                log_nothing(self.config, f"nothing to judge against: no source in {where}", self.meta())
                return ""
            pre = recent.get("pre_compact") or {}
            done = self._judge(boundary, summary, pre.get("custom_instructions"))
            if done.get("correction"):  # Claude Code keeps no <analysis> in the summary the model sees
                seen = [p for p in done["pruned"] if p["section"] != "Analysis"]
                done["correction"] = correction_text(seen) if seen else None
            self._remember(done)
        if done.get("correction") and not done.get("delivered"):
            self.state.put_note({"text": done["correction"], "key": key, "trigger": self.payload.get("trigger")})
        return self._user_line(done)

    def hand_over(self) -> str:
        return hand_over(self.state, self.event)
