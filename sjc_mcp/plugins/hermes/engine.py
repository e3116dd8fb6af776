"""The context engine ``sjc``: Hermes' own compressor, with its summary pruned by sjc before Hermes uses it.

Runs inside Hermes (checked with hermes-agent 0.19.0). Everything Hermes' built-in ``ContextCompressor``
does stays as it is: when to compact, the prompt, the head and tail it keeps, the one summary call, its
fallbacks and the session bookkeeping. Only the summary that ``_generate_summary`` returns changes: after
Hermes has stripped think blocks, redacted secrets and grounded its "## Historical Task Snapshot" section,
the body goes to sjc with the turns it was written from and the summary it updates, and what comes back
(the same text with the unsupported entries deleted) is what Hermes keeps as the next compaction's
previous summary and puts, behind its REFERENCE ONLY notice, into the conversation and ``state.db``.
Anything that goes wrong leaves the summary as Hermes wrote it (``bridge``).

Hermes hands a plugin engine only ``update_model(model, context_length, …)``; the ``compression.*``
settings its own engine gets at construction are read here from Hermes' config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.context_compressor import ContextCompressor  # type: ignore[import-not-found]

from . import bridge

NAME = "sjc"
MESSAGE_KEYS = ("role", "tool_call_id", "tool_name", "name")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # only the text parts: images are no evidence and can be megabytes
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def _calls(calls: Any) -> list[dict[str, Any]]:
    out = []
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict):  # an SDK object
            c = {"id": getattr(c, "id", None), "function": getattr(c, "function", None)}
        fn = c.get("function")
        if not isinstance(fn, dict):
            fn = {"name": getattr(fn, "name", None), "arguments": getattr(fn, "arguments", None)}
        out.append({"id": c.get("id"), "function": {"name": fn.get("name"), "arguments": fn.get("arguments")}})
    return out


def wire(message: Any) -> dict[str, Any]:
    """One message as sjc reads it: role, text, tool calls and the ids that pair results with calls."""
    if not isinstance(message, dict):
        return {"role": "unknown", "content": ""}
    out = {k: message[k] for k in MESSAGE_KEYS if isinstance(message.get(k), str)}
    out["content"] = _text(message.get("content"))
    if message.get("tool_calls"):
        out["tool_calls"] = _calls(message["tool_calls"])
    return out


def compression_settings() -> dict[str, Any]:
    """The ``compression.*`` keys of Hermes' config, read as Hermes reads them for its own engine."""
    try:
        from hermes_cli.config import load_config  # type: ignore[import-not-found]

        c = load_config().get("compression") or {}
        if not isinstance(c, dict):
            c = {}
    except Exception:
        c = {}

    def yes(v: Any) -> bool:
        return str(v).lower() in {"true", "1", "yes"}

    try:
        return {
            "threshold_percent": float(c.get("threshold", 0.50)),
            "protect_first_n": max(0, int(c.get("protect_first_n", 3))),
            "protect_last_n": int(c.get("protect_last_n", 20)),
            "summary_target_ratio": float(c.get("target_ratio", 0.20)),
            "abort_on_summary_failure": yes(c.get("abort_on_summary_failure", False)),
        }
    except (TypeError, ValueError):
        bridge.say("Hermes' compression settings cannot be read; using Hermes' defaults")
        return {}


class SjcContextEngine(ContextCompressor):  # type: ignore[misc]
    """Hermes' ``ContextCompressor``; its summary pruned by sjc."""

    def __init__(self, settings: dict[str, Any] | None, settings_error: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sjc_settings = settings
        self._sjc_settings_error = settings_error
        self._sjc_depth = 0
        self._sjc_originals: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return NAME

    def compress(self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        self._sjc_originals = None
        try:
            return super().compress(messages, *args, **kwargs)  # type: ignore[no-any-return]
        finally:
            self._sjc_originals = None  # no history kept between compactions (nor in an agent's copy)

    def _prune_old_tool_results(self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        """Hermes' pre-pass copies every message and shortens old tool results (a one-line digest, or
        "[Duplicate tool output …]" for all but the newest of identical ones) before it picks the span: the
        span sjc judges against is read from the messages as they were, which this keeps the way to."""
        result, pruned = super()._prune_old_tool_results(messages, *args, **kwargs)
        if isinstance(result, list) and len(result) == len(messages):
            self._sjc_originals = {
                "every": messages,
                "of_copy": {id(c): m for c, m in zip(result, messages, strict=True)},
            }
        return result, pruned

    def _generate_summary(
        self, turns_to_summarize: list[dict[str, Any]], focus_topic: str | None = None, memory_context: str = ""
    ) -> str | None:
        if self._sjc_depth:  # Hermes retrying on its main model: the outer call judges the result once
            return super()._generate_summary(  # type: ignore[no-any-return]
                turns_to_summarize, focus_topic=focus_topic, memory_context=memory_context
            )
        previous: str | None = getattr(self, "_previous_summary", None)  # the summary this one updates, if any
        self._sjc_depth += 1
        try:
            out = super()._generate_summary(turns_to_summarize, focus_topic=focus_topic, memory_context=memory_context)
        finally:
            self._sjc_depth -= 1
        if not out:  # no summary: Hermes' own fallback or abort follows
            return out  # type: ignore[no-any-return]
        try:
            body = self._strip_summary_prefix(out)
            pruned = self._sjc_prune(body, previous, turns_to_summarize, focus_topic)
        except Exception as exc:  # never break a compaction
            bridge.say(f"{type(exc).__name__}: {exc}; the summary is left as Hermes wrote it")
            return out  # type: ignore[no-any-return]
        if pruned is None or pruned == body:
            return out  # type: ignore[no-any-return]
        self._previous_summary = pruned  # the next iterative update starts from the pruned summary
        return self._with_summary_prefix(pruned)  # type: ignore[no-any-return]

    def _sjc_prune(
        self, body: str, previous: str | None, turns: list[dict[str, Any]], focus_topic: str | None
    ) -> str | None:
        if self._sjc_settings is None:
            bridge.say(f"{self._sjc_settings_error}; the summary is left as Hermes wrote it")
            return None
        span, retained = self._sjc_span(turns)
        payload = {
            "hook_event_name": "compress",
            "session_id": getattr(self, "_session_id", "") or None,
            "hermes_home": _hermes_home(),
            "summary": body,
            "previous_summary": previous,
            "turns": [wire(m) for m in span],
            "retained": [wire(m) for m in retained],
            # what the summarizer was asked to keep in view: the user's words after /compress, or on automatic
            # compaction Hermes' list of the latest user prompts (the kept tail's among them)
            "focus_topic": focus_topic,
        }
        return bridge.run(self._sjc_settings, payload)

    def _sjc_span(self, turns: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
        """The compacted messages as the session had them, and the ones Hermes keeps beside the summary
        (head and tail, without the system prompt and Hermes' own summary messages)."""
        if not self._sjc_originals:
            return list(turns), []
        of_copy = self._sjc_originals["of_copy"]
        span = [of_copy.get(id(t), t) for t in turns]
        in_span = {id(m) for m in span}
        retained = [
            m
            for m in self._sjc_originals["every"]
            if id(m) not in in_span
            and isinstance(m, dict)
            and m.get("role") != "system"
            and not self._is_context_summary_content(m.get("content"))
        ]
        return span, retained


def _hermes_home() -> str | None:
    try:
        from hermes_constants import get_hermes_home  # type: ignore[import-not-found]

        return str(get_hermes_home())
    except Exception:
        return None


def build(folder: Path) -> SjcContextEngine | None:
    """The engine to register, or None (with a line saying why) when this Hermes lacks what it wraps."""
    missing = [
        a
        for a in ("_generate_summary", "_strip_summary_prefix", "_with_summary_prefix")
        if not hasattr(ContextCompressor, a)
    ]
    if missing:
        bridge.say(
            f"this Hermes' ContextCompressor has no {', '.join(missing)}: the sjc context engine is not registered "
            "and Hermes compacts with its own"
        )
        return None
    try:
        settings, error = bridge.load_settings(folder), None
    except ValueError as exc:
        settings, error = None, str(exc)
    return SjcContextEngine(settings, error, model="", quiet_mode=True, **compression_settings())
