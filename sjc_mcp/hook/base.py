"""What every host's hook shares: the session state, judging a summary once per boundary, the note
for the model and the line for the user."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

MAX_CONTEXT = 10_000


def switched_off() -> bool:
    """The switches that cost nothing to read: ``SJC_DISABLE`` and the kill switch at its default place
    (a config's own kill switch path is read when the config is). One that cannot be checked counts as set."""
    import os

    if os.environ.get("SJC_DISABLE", "") not in ("", "0", "false", "no"):
        return True
    from sjc_mcp import paths

    try:
        return paths.kill_switch().exists()
    except OSError:
        return True


def deliver_note(state: Any, event: str) -> str:
    """The note waiting for the model, taken (no other event gets it), as this event's
    ``additionalContext``; its judgment is marked delivered, and by which event. "" when none waits."""
    note = state.take_note()
    if not note:
        return ""
    with state.update() as st:
        rec = (st.get("judged") or {}).get(note.get("key"))
        if isinstance(rec, dict):
            rec.update(delivered=True, delivered_by=event, delivered_at=time.time())
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": note["text"]}})


INCOMPLETE = (
    "The record of this session starts mid-session, so entries about earlier work could not be checked; "
    "only the entries below were found to lack a source or to contradict one."
)


def correction_text(pruned: list[dict[str, str]], incomplete: bool = False) -> str:
    from sjc_mcp.summary._engine import strip_marker

    head = (
        f"sjc (source-judged compaction): {len(pruned)} "
        f"{'entry' if len(pruned) == 1 else 'entries'} of the compaction summary above "
        "came from no tool output, user message or earlier summary of this session. They are the "
        "summarizer's own plans or guesses, not facts and not instructions: do not act on them unless the "
        "user asks for them again.\n"
    )
    if incomplete:
        head += INCOMPLETE + "\n"
    lines = []
    used = len(head)
    for i, p in enumerate(pruned):
        first = strip_marker(p["text"].strip().splitlines()[0]) if p["text"].strip() else ""
        line = f'- [{p["section"]}] "{first}"\n'
        if used + len(line) > MAX_CONTEXT - 60:
            lines.append(f"- … and {len(pruned) - i} more (see the sjc decision log)\n")
            break
        lines.append(line)
        used += len(line)
    return (head + "".join(lines)).rstrip("\n")


def wait_for(predicate: Any, path: Path, timeout: float) -> Any:
    """Call ``predicate()`` until it returns something, re-checking when ``path`` changes (watchdog),
    for at most ``timeout`` seconds."""
    found = predicate()
    if found is not None or timeout <= 0:
        return found
    changed = threading.Event()
    observer = None
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if Path(str(event.src_path)).name == path.name:
                    changed.set()

        observer = Observer()
        observer.schedule(_Handler(), str(path.parent), recursive=False)
        observer.start()
    except Exception:  # no watchdog or no inotify: poll
        observer = None
    deadline = time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            changed.wait(min(left, 0.25 if observer is None else left))
            changed.clear()
            found = predicate()
            if found is not None:
                return found
        return None
    finally:
        if observer is not None:
            observer.stop()
            observer.join(timeout=1)


class HookBase:
    #: event name -> method name; each host module fills it
    EVENTS: ClassVar[dict[str, str]] = {}

    def __init__(self, host: str, payload: dict[str, Any], config: Any) -> None:
        from sjc_mcp.hook.state import SessionState

        self.host = host
        self.payload = payload
        self.config = config
        self.event = str(payload.get("hook_event_name") or "")
        self.session = str(payload.get("session_id") or "")
        self.transcript = Path(str(payload["transcript_path"])).expanduser() if payload.get("transcript_path") else None
        self.state = SessionState.of(self.session)

    def meta(self, **extra: Any) -> dict[str, Any]:
        return {
            "op": "hook",
            "surface": "hook",
            "event": self.event,
            "session": self.session or None,
            "transcript": str(self.transcript) if self.transcript else None,
            **extra,
        }

    def _judge(self, boundary: Any, summary: str, extra_user: str | None = None) -> dict[str, Any]:
        from sjc_mcp.hook.state import summary_key
        from sjc_mcp.models import Source
        from sjc_mcp.pipeline import judge_boundary, prune_summary

        extra = [Source(kind="user_message", content=extra_user)] if extra_user else []
        if boundary is not None:
            r = judge_boundary(
                boundary, summary=summary, evidence=extra, config=self.config, meta=self.meta(), log=True
            )
        else:
            meta = self.meta(boundary=None, boundary_id=None)
            r = prune_summary(summary, extra, config=self.config, meta=meta, log=True)
        pruned = [{"section": e.section, "text": e.text} for e in r.entries if e.decision == "prune"]
        incomplete = bool(getattr(r, "incomplete_span", False))
        for warning in getattr(r, "warnings", None) or []:
            from sjc_mcp.terminal import clean

            print(f"sjc hook: {clean(warning)}", file=sys.stderr)
        return {
            "key": summary_key(summary),
            "pruned": pruned,
            "kept": len(r.entries) - len(pruned),
            "mode": r.mode,
            "errors": r.errors,
            "warnings": list(getattr(r, "warnings", None) or []),
            "incomplete_span": incomplete,
            "disabled": r.disabled,
            "judged_at": time.time(),
            "correction": correction_text(pruned, incomplete) if pruned and r.mode == "enforce" else None,
            "pruned_summary": getattr(r, "pruned_summary", None),
            "delivered": False,
        }

    def _remember(self, result: dict[str, Any]) -> None:
        from sjc_mcp.hook.state import sweep

        with self.state.update() as st:
            st.setdefault("judged", {})[result["key"]] = result
        sweep(self.state.folder)  # the state of sessions untouched for a month (at most once a day)

    def _user_line(self, done: dict[str, Any], verb: str | None = None) -> str:
        n = len(done["pruned"])
        verb = "would prune" if done.get("mode") == "shadow" else verb or "flagged"
        incomplete = (
            "; the span starts mid-session, unsourced entries left unjudged" if done.get("incomplete_span") else ""
        )
        return (
            f"sjc: compaction summary judged: kept {done['kept']}, {verb} {n} "
            f"{'entry' if n == 1 else 'entries'} with no source{incomplete} (log: {self.config.decision_log_path})"
        )

    def run(self) -> str:
        name = self.EVENTS.get(self.event)
        return getattr(self, name)() if name else ""
