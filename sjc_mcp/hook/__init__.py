"""``sjc-hook <host>`` (or ``sjc hook <host>``): run inside the host at compaction, stdin JSON in, stdout out.

It must never break the session: every fault (bad payload, bad transcript, judge down, bad config,
time budget spent) ends with exit 0 and no output, the reason in the decision log and on stderr.

Claude Code (no hook can edit the summary; see ``claude_code`` for the order the CLI runs them in):
- ``PreCompact``: keep the user's ``/compact`` instructions. Prints nothing.
- ``PostCompact``: judge ``compact_summary`` (in a process of its own: the hook returns at once)
  against the compacted span, log, leave the note for the model; print one line for the user.
- ``UserPromptSubmit``, ``PostToolBatch``: keep what they are handed (the transcript lags behind it);
  hand a waiting note to the model as ``additionalContext``, once.
Codex: ``PostCompact`` judges the new ``compacted`` record and keeps the correction;
``SessionStart`` (source ``compact``) hands it to the model in the very next request;
``UserPromptSubmit`` hands over a note only if that did not happen.
Gemini CLI: ``BeforeModel`` takes the unsupported entries out of the snapshot in every request after a
compression (judged once, at the first).
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # no ``typing`` at run time (nor ``signal``, ``threading`` before an event is handled)
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 20_000_000
Events = dict[str, tuple["str | None", "tuple[str, str] | None"]]
# The one table of each hook host: its module and hook class, and every event sjc acts on with the matcher
# ``sjc install`` writes for it and, where sjc acts on one payload value only, that (field, value): Codex
# sends SessionStart at every start and resume, and sjc acts only on the one a compaction starts. Any
# other event returns before the host's module is imported.
HOSTS: dict[str, tuple[str, str, Events]] = {
    "claude-code": (
        "sjc_mcp.hook.claude_code",
        "ClaudeCodeHook",
        {
            "PreCompact": ("manual|auto", None),
            "PostCompact": ("manual|auto", None),
            "UserPromptSubmit": (None, None),
            "PostToolBatch": (None, None),
        },
    ),
    # Codex 0.171.0 at a compaction: PreCompact, the compaction request, PostCompact, then
    # SessionStart(source "compact") whose additionalContext reaches the very next model request.
    # UserPromptSubmit hands over a note only if SessionStart could not.
    "codex": (
        "sjc_mcp.hook.codex",
        "CodexHook",
        {
            "PostCompact": (None, None),
            "SessionStart": ("compact", ("source", "compact")),
            "UserPromptSubmit": (None, None),
        },
    ),
    # Gemini CLI 0.61.0: no hook sees a compression; the BeforeModel of every request after it sees the snapshot.
    "gemini": ("sjc_mcp.hook.gemini", "GeminiHook", {"BeforeModel": (None, None)}),
    # sent by sjc's Hermes plugin at each compaction (no host settings: sjc install hermes installs the plugin)
    "hermes": ("sjc_mcp.hook.hermes", "HermesHook", {"compress": (None, None)}),
    # OpenClaw runs no shell hooks: sjc's plugin for it (plugins/openclaw) sends these at each compaction
    "openclaw": (
        "sjc_mcp.hook.openclaw",
        "OpenClawHook",
        {"CompactionStart": (None, None), "Summarize": (None, None), "Fault": (None, None)},
    ),
}


def _handled(events: Events, payload: dict[str, Any]) -> bool:
    event = str(payload.get("hook_event_name") or "")
    if event not in events:
        return False
    only = events[event][1]
    return only is None or payload.get(only[0]) == only[1]


class _Budget(Exception):
    pass


def _log_fault(config: Any, host: str, payload: dict[str, Any], status: str, message: str) -> None:
    """Log an event that ended without a judgment; light on purpose (no pipeline import)."""
    from sjc_mcp.log import chain as decision_log

    if config is None:  # the config could not be read: the defaults, with the log the environment names
        import os

        from sjc_mcp.config import Config

        config = Config()
        config.decision_log = os.environ.get("SJC_DECISION_LOG") or None
    meta = {
        "op": "hook",
        "surface": "hook",
        "host": host,
        "event": payload.get("hook_event_name"),
        "session": payload.get("session_id"),
    }
    decision_log.append_status(config.decision_log_path, status, [message] if message else [], meta)


def run_hook(host: str, stdin_text: str, config_path: str | None = None) -> str:
    """The hook's whole job; returns what to print on stdout ("" for nothing). Never raises."""
    config = None
    payload: dict[str, Any] = {}
    old_handler = None
    try:
        if host not in HOSTS:
            raise ValueError(f"unknown hook host {host!r}; choose one of: {', '.join(HOSTS)}")
        if len(stdin_text) > MAX_STDIN:
            raise ValueError("hook payload larger than 20 MB")
        parsed = json.loads(stdin_text) if stdin_text.strip() else {}
        if not isinstance(parsed, dict):
            raise ValueError("hook payload is not a JSON object")
        payload = parsed
        module_name, class_name, events = HOSTS[host]
        if not _handled(events, payload):
            return ""  # an event we do not act on: no config, no log, nothing to pay for
        import importlib

        module = importlib.import_module(module_name)
        quick = getattr(module, "quick", None)  # events done before the config is loaded
        early = quick(payload) if quick is not None else None
        if early is not None:
            return early
        from sjc_mcp.config import load_config

        config = load_config(config_path)
        off = config.disabled()
        if off:
            _log_fault(config, host, payload, "disabled", f"disabled by {off}")
            return ""
        budget = config.hook.time_budget_s
        import signal
        import threading

        def _expire(signum: int, frame: Any) -> None:
            raise _Budget(f"time budget of {budget:g}s spent")

        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            old_handler = signal.signal(signal.SIGALRM, _expire)
            signal.setitimer(signal.ITIMER_REAL, budget)
        hook_class = getattr(module, class_name)
        return hook_class(host, payload, config).run()
    except BaseException as exc:  # the host's session must never break because of us
        if isinstance(exc, KeyboardInterrupt):
            return ""
        from sjc_mcp.terminal import clean

        message = f"{type(exc).__name__}: {exc}" if not isinstance(exc, _Budget) else str(exc)
        print(f"sjc hook: {clean(message)}; the summary is left as the host wrote it", file=sys.stderr)
        try:
            _log_fault(config, host, payload, "timeout" if isinstance(exc, _Budget) else "error", message)
        except Exception as log_exc:
            print(f"sjc hook: could not log the fault: {log_exc}", file=sys.stderr)
        return ""
    finally:
        if old_handler is not None:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)


# how long a hook waits for its payload when the host neither finishes it nor closes stdin: the default
# time budget (the config, and so its own budget, is read only once there is a payload to act on)
STDIN_WAIT_S = 20.0


def read_payload(stream: Any = None, wait_s: float = STDIN_WAIT_S) -> str:
    """The hook payload on stdin: read until end of file, or until what came is a whole JSON object (a host
    that keeps stdin open after the payload is not waited on), for at most ``wait_s`` seconds. A payload
    that is neither whole nor ended by then is cut off (a ``TimeoutError``), so the hook ends in time."""
    import os
    import time

    stream = sys.stdin if stream is None else stream
    if stream is None:
        return ""
    import select  # the C module itself: ``selectors`` costs an ignored event a millisecond more

    try:
        fd = stream.fileno()
        select.select([fd], [], [], 0)
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's StringIO), or one select cannot watch
        return str(stream.read(MAX_STDIN + 1))
    deadline = time.monotonic() + wait_s
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_STDIN:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"stdin neither ended nor held a whole payload within {wait_s:g}s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.rstrip().endswith(b"}"):
            try:
                json.loads(b"".join(chunks))
                break  # a whole object: the host may keep stdin open, nothing more is coming
            except ValueError:
                pass
    return b"".join(chunks).decode("utf-8", "replace")


def run_main(host: str, config_path: str | None = None) -> int:
    """Read the payload from stdin, run the hook, print its output; always 0."""
    try:
        data = read_payload()
    except Exception as exc:
        message = f"cannot read the payload on stdin: {exc}"
        print(f"sjc hook: {message}; the summary is left as the host wrote it", file=sys.stderr)
        try:
            from sjc_mcp.config import load_config

            _log_fault(load_config(config_path), host, {}, "timeout", message)
        except Exception as log_exc:
            print(f"sjc hook: could not log the fault: {log_exc}", file=sys.stderr)
        return 0
    out = run_hook(host, data, config_path)
    try:
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except Exception as exc:  # the host closed the pipe: nothing more to do
        print(f"sjc hook: cannot write the output: {exc}", file=sys.stderr)
    return 0


USAGE = "usage: sjc-hook HOST [--config FILE]"


def parse_argv(argv: list[str]) -> tuple[str, str | None] | None:
    """``HOST [--config FILE | --config=FILE]``; None for anything else."""
    if not argv or argv[0].startswith("-"):
        return None
    if len(argv) == 1:
        return argv[0], None
    if len(argv) == 2 and argv[1].startswith("--config="):
        return argv[0], argv[1].split("=", 1)[1]
    if len(argv) == 3 and argv[1] == "--config":
        return argv[0], argv[2]
    return None


def main() -> None:
    """The ``sjc-hook`` console script: a process per hook event, so no argument parser is loaded; a
    command line it cannot read is said on stderr and still exits 0 (a hook never fails the host)."""
    parsed = parse_argv(sys.argv[1:])
    if parsed is None:
        print(f"sjc-hook: {USAGE}", file=sys.stderr)
        sys.exit(0)
    sys.exit(run_main(*parsed))
