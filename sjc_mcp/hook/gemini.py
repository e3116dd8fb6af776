"""Gemini CLI's hook event: ``BeforeModel``, which takes the unsupported entries out of the snapshot the model
is sent.

What the real CLI does (0.61.0, run offline against a scripted model; ``tests/e2e/test_gemini_hooks.py``
checks it):

- A compression is two requests (a first pass and a verification pass) that no hook sees: ``PreCompress``
  fires before every main-loop request and before a compression, and nothing it answers reaches the
  model; there is no event after a compression; ``BeforeModel``/``AfterModel`` do not fire for the two
  compression requests.
- The first hook that sees the snapshot is the ``BeforeModel`` of the next request, which follows at once
  (in the middle of the turn after an automatic compression; with the next prompt after ``/compress``).
  Its ``llm_request.messages`` are the text of each content that has text; the snapshot is at the end of
  message 0, after the ``<session_context>`` text. The chat file (``transcript_path``) already holds the
  snapshot and, before it, the turns it summarised.
- Its ``hookSpecificOutput.llm_request.messages`` are merged back by position into the contents that have
  text; a shorter list leaves the contents past its end as they were. So the answer here is message 0
  alone, with the snapshot's unsupported entries deleted: the model never sees them (the CLI joins that
  content's two text parts into one on the way). It holds for that request only: the CLI's history and
  chat file keep the snapshot as written, so every request until the next compression is rewritten the
  same way, from the judgment kept in the session state (no config, no chat file, no judge). The next
  compression is sent the CLI's own history; what sjc took out of the last snapshot is no source for the
  next one.
- ``systemMessage`` is shown to the user (on stderr in ``gemini -p``): one line when a snapshot is judged.

Hooks in ``settings.json`` run only in a trusted folder; an extension's hooks run in every folder, which is
why ``sjc install gemini`` installs this hook as an extension (``setup/gemini.py``).

The hook runs before every request to the model, so a request without a snapshot costs no more than reading
its payload: this module imports nothing more for it (no ``typing``, no ``hook.base``); ``GeminiHook`` is
built on first use.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SNAPSHOT = "<state_snapshot>"
ENV_END = "</session_context>"
STATE_KEY = "gemini_snapshots"  # sha256 of a snapshot text -> {"text": what the model is sent instead, or None}
OFF_KEY = "gemini_off"  # snapshots seen while sjc was switched off (logged once each)


def snapshot_of(messages: Any) -> tuple[str, str] | None:
    """(what comes before the snapshot, the snapshot as the CLI stored it) from message 0, or None when the
    request carries no snapshot there."""
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        return None
    content = messages[0].get("content")
    if not isinstance(content, str):
        return None
    at = content.find(SNAPSHOT)
    if at < 0:
        return None
    env = content.rfind(ENV_END, 0, at)
    start = env + len(ENV_END) if env >= 0 else 0
    return content[:start], content[start:]


def digest(snapshot: str) -> str:
    import hashlib

    return hashlib.sha256(snapshot.encode()).hexdigest()[:32]


def rewritten(messages: list[Any], prefix: str, text: str | None) -> str:
    """The hook's answer: message 0 with the snapshot replaced by ``text`` ("" when there is nothing to change)."""
    if text is None:
        return ""
    first = {**messages[0], "content": prefix + text}
    return json.dumps({"hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {"messages": [first]}}})


def quick(payload: dict[str, Any]) -> str | None:
    """``BeforeModel`` done before any config is loaded: "" for a request without a snapshot (nearly every
    one), the rewrite of a snapshot already judged; None to judge it (or to log, once per snapshot, that
    sjc is switched off). The switches read here are ``SJC_DISABLE`` and the kill switch at its default
    place; one at a path set in the config is read when a snapshot is judged."""
    request = payload.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    found = snapshot_of(messages)
    if found is None or not isinstance(messages, list):
        return ""
    from sjc_mcp.hook.base import switched_off
    from sjc_mcp.hook.state import SessionState

    prefix, snapshot = found
    key = digest(snapshot)
    state = SessionState.of(str(payload.get("session_id") or ""))
    if switched_off():
        if key in (state.read().get(OFF_KEY) or {}):
            return ""
        with state.update() as st:
            st.setdefault(OFF_KEY, {})[key] = True
        return None  # the full run logs "disabled" for this snapshot, once
    done = (state.read().get(STATE_KEY) or {}).get(key)
    if isinstance(done, dict):
        text = done.get("text")
        return rewritten(messages, prefix, text if isinstance(text, str) else None)
    return None


def __getattr__(name: str) -> Any:
    """``GeminiHook``, built when the hook has a snapshot to judge (module attributes on demand, PEP 562)."""
    if name == "GeminiHook":
        cls = _hook_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _hook_class() -> type:
    from typing import ClassVar

    from sjc_mcp.hook.base import HookBase

    class GeminiHook(HookBase):
        EVENTS: ClassVar[dict[str, str]] = {"BeforeModel": "before_model"}

        def _boundary(self, snapshot: str) -> Any:
            """The compression that wrote ``snapshot``, read from the chat file: the boundary that holds it, or
            (a file that does not hold it yet) everything after its newest snapshot."""
            from sjc_mcp.errors import TranscriptError
            from sjc_mcp.hosts import gemini
            from sjc_mcp.models import Boundary

            if self.transcript is not None and self.transcript.exists():
                try:
                    return gemini.boundary_for(self.transcript, snapshot)
                except TranscriptError:
                    pass
            return Boundary(host="gemini", index=0, summary="", session_id=self.session or None)

        def _seen_before(self, previous: str | None) -> str | None:
            """The previous snapshot as the model was sent it (what sjc took out of it is no source now: the CLI
            keeps it in the history the next compression is made from)."""
            if previous is None:
                return None
            done = (self.state.read().get(STATE_KEY) or {}).get(digest(previous))
            text = done.get("text") if isinstance(done, dict) else None
            return text if isinstance(text, str) else previous

        def before_model(self) -> str:
            from sjc_mcp.log.records import log_nothing

            messages = self.payload["llm_request"]["messages"]
            found = snapshot_of(messages)
            if found is None:
                return ""
            prefix, snapshot = found
            key = digest(snapshot)
            with self.state.update() as st:  # one attempt per snapshot: a judgment that fails is not retried
                st.setdefault(STATE_KEY, {})[key] = {"text": None}
            boundary = self._boundary(snapshot)
            boundary.previous_summary = self._seen_before(boundary.previous_summary)
            if not boundary.sources() and not boundary.previous_summary:
                where = self.transcript or "the payload"
                log_nothing(self.config, f"nothing to judge against: no source in {where}", self.meta(host="gemini"))
                return ""
            done = self._judge(boundary, snapshot)
            self._remember(done)
            text = done.get("pruned_summary") if done.get("mode") == "enforce" and done["pruned"] else None
            with self.state.update() as st:
                st.setdefault(STATE_KEY, {})[key] = {"text": text, "judged": done["key"]}
            out = rewritten(messages, prefix, text if isinstance(text, str) else None)
            answer = json.loads(out) if out else {}
            answer["systemMessage"] = self._user_line(done, verb="removed" if text is not None else None)
            return json.dumps(answer)

    return GeminiHook
