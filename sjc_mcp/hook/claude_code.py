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
keep what they are handed (the transcript may lag behind it); ``PostCompact`` starts a judgment of
``compact_summary`` in a process of its own and returns at once (Claude Code waits for each hook, not
for that process): it judges against the transcript as it was at ``PostCompact`` (up to the boundary:
the compacted span) and what those events kept, logs, and leaves the note for the model; the next
``UserPromptSubmit`` or ``PostToolBatch`` hands the note to the model, once (waiting for the judgment
only if it is still running). After a manual ``/compact`` that is the model's next request. After a
compaction in the middle of a turn, the request that continues the turn right away cannot carry it
(no hook runs between the summary and that request); the first request after the next tool batch or
prompt does. No event ever waits for the transcript, and none loads the config unless it judges.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from sjc_mcp.hook.base import HookBase, correction_text, deliver_note, switched_off
from sjc_mcp.hook.state import SessionState, write_atomic

MAX_KEPT = 4_000_000  # characters of tool output kept from one batch
MAX_PROMPT = 200_000
NOW = "sjc_judge_now"  # set in the payload the background judgment runs with, and with it:
RECENT = "sjc_recent"  # what the events before the compaction were handed
SIZE = "sjc_transcript_size"  # how long the transcript was when PostCompact ran
WAIT_FOR_JUDGE_S = 10.0  # how long a hand-over waits for a judgment still running


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
    """Every event, done before any config is loaded: the output ("" for none), or None when the hook
    must go on with the config (to judge, or to log that sjc is switched off). ``PostCompact`` starts
    the judgment in the background and returns at once; the other events keep what they are handed and
    hand a waiting note over. The switches read here are ``SJC_DISABLE`` and the kill switch at its
    default place; one at a path set in the config is read when the summary is judged."""
    event = payload.get("hook_event_name")
    if event == "PostCompact":
        summary = payload.get("compact_summary")
        if payload.get(NOW) or switched_off() or not isinstance(summary, str) or not summary.strip():
            return None  # judge (or log why not) here
        return _judge_in_background(payload, _config_arg())
    if switched_off():
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


def _config_arg() -> str | None:
    """The ``--config`` this ``sjc hook`` was started with, for the judgment it starts (the environment,
    ``SJC_CONFIG`` included, it inherits anyway)."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def _judge_in_background(payload: dict[str, Any], config_path: str | None) -> str | None:
    """Start judging ``payload`` in a process of its own (it outlives this hook, and Claude Code, which
    waits for this hook before it goes on, does not wait for it); None if it cannot be started."""
    import subprocess

    state = SessionState.of(str(payload.get("session_id") or ""))
    recent = state.read_recent()  # taken now: the next events write what comes after the compaction
    state.drop_recent()
    size = None
    with contextlib.suppress(OSError, TypeError, KeyError):
        size = os.path.getsize(str(payload["transcript_path"]))
    job = {**payload, NOW: True, RECENT: recent, SIZE: size}
    marker = state.judging_path()
    write_atomic(marker, json.dumps({"payload": job, "config": config_path}))
    try:
        subprocess.Popen(
            [sys.executable, "-m", "sjc_mcp.hook.claude_code", str(marker)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        marker.unlink(missing_ok=True)
        return None  # judge here instead
    return "sjc: judging the compaction summary; the agent hears of entries with no source before its next step"


def _written_since(path: Path, size: int) -> bool:
    """Whether a compaction boundary was appended to the transcript past ``size`` bytes."""
    with path.open("rb") as fh:
        fh.seek(size)
        return b'"compact_boundary"' in fh.read()


def judge_now(marker: Path) -> None:
    """The background judgment: the hook's full run over the payload in ``marker``, then the marker goes."""
    from sjc_mcp.hook import run_hook
    from sjc_mcp.hook.state import own_json

    try:
        job = own_json(marker)  # {} unless it is one of sjc's own files (``private.read_own``)
        run_hook("claude-code", json.dumps(job["payload"]), job.get("config"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"sjc hook: cannot judge {marker}: {exc}", file=sys.stderr)
    finally:
        marker.unlink(missing_ok=True)


def hand_over(state: SessionState, event: str) -> str:
    """The waiting note as this event's ``additionalContext`` ("" when none waits); it is handed over
    once, and its judgment marked delivered. A judgment still running is waited for (only then)."""
    deadline = time.monotonic() + WAIT_FOR_JUDGE_S
    while state.judging() and time.monotonic() < deadline:
        time.sleep(0.02)
    return deliver_note(state, event)


class ClaudeCodeHook(HookBase):
    EVENTS: ClassVar[dict[str, str]] = {
        "PostCompact": "post_compact",
        "UserPromptSubmit": "hand_over",
        "PostToolBatch": "hand_over",
    }

    def _span(self, recent: dict[str, Any], size: Any) -> Any:
        """The compacted span: the transcript as it was when PostCompact ran (the boundary not yet
        written: everything since the last one), or, once Claude Code has written this compaction
        (a judgment in the background may start later), the span before it; and what the latest hooks
        were handed that the transcript did not hold yet."""
        from sjc_mcp.errors import TranscriptError
        from sjc_mcp.hosts import claude_code
        from sjc_mcp.hosts.base import Boundary, Item

        boundary = None
        if self.transcript is not None and self.transcript.exists():
            try:
                if isinstance(size, int) and _written_since(self.transcript, size):
                    boundary = claude_code.read_boundary(self.transcript)
                else:
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
        from sjc_mcp.hook.state import summary_key
        from sjc_mcp.log.records import log_nothing

        summary = self.payload.get("compact_summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("PostCompact payload has no compact_summary")
        if self.payload.get(NOW):
            recent = self.payload.get(RECENT) or {}
        else:
            recent = self.state.read_recent()
            self.state.drop_recent()
        boundary = self._span(recent, self.payload.get(SIZE))
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
                done["correction"] = correction_text(seen, bool(done.get("incomplete_span"))) if seen else None
            self._remember(done)
        if done.get("correction") and not done.get("delivered"):
            self.state.put_note({"text": done["correction"], "key": key, "trigger": self.payload.get("trigger")})
        return self._user_line(done)

    def hand_over(self) -> str:
        return hand_over(self.state, self.event)


if __name__ == "__main__":  # the background judgment started by PostCompact
    judge_now(Path(sys.argv[1]))
