"""How the Hermes plugin reaches sjc: sjc's own interpreter, as a child process, one per compaction.

This module runs inside Hermes (standard library only). Hermes' ``[mcp]`` extra pins an ``mcp`` that sjc
cannot share, and sjc's compiled parts are built for sjc's interpreter, so sjc is never imported here:
the plugin hands the compaction to the command that ``sjc install hermes`` wrote into ``sjc.json`` beside
this file (sjc's interpreter running ``sjc hook hermes``), as one JSON object on stdin, and reads one JSON
object back. A child costs about 60 ms on top of the judgment; a compaction waits seconds for its summary.

Whatever goes wrong here (no settings, no interpreter, a crash, no answer within the timeout, an answer
that is not JSON or is not a deletion from the summary it was given) leaves the summary as Hermes wrote
it, with one line on stderr and in Hermes' log; sjc's side logs its own faults in its decision log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SETTINGS = "sjc.json"
PROTOCOL = 1
DEFAULT_TIMEOUT_S = 30.0
# the child must not read Hermes' own interpreter settings (a PYTHONPATH set for Hermes would put Hermes'
# packages in front of sjc's)
_NOT_PASSED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "PYTHONNOUSERSITE")

logger = logging.getLogger("plugins.sjc")


def say(message: str) -> None:
    """A fault: on stderr (the user sees it) and in Hermes' log."""
    logger.warning("%s", message)
    with contextlib.suppress(Exception):  # no usable stderr: Hermes' log has it
        print(f"sjc: {message}", file=sys.stderr, flush=True)


def load_settings(folder: Path) -> dict[str, Any]:
    """``sjc.json``: ``{"v": 1, "command": [argv...], "timeout_s": 30}``. Raises ``ValueError`` with a line
    fit for the user."""
    path = folder / SETTINGS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} is missing; run `sjc install hermes`") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read ({exc}); run `sjc install hermes` again") from None
    command = data.get("command") if isinstance(data, dict) else None
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise ValueError(f"{path} names no command; run `sjc install hermes` again")
    if data.get("v") != PROTOCOL:
        raise ValueError(f"{path} is for another version of this plugin; run `sjc install hermes` again")
    timeout = data.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        timeout = DEFAULT_TIMEOUT_S
    return {"command": command, "timeout_s": float(timeout)}


def is_deletion(original: str, pruned: str) -> bool:
    """Every line of ``pruned`` is a line of ``original``, in the same order: sjc only deletes."""
    lines = iter(original.splitlines())
    return all(any(line == o for o in lines) for line in pruned.splitlines())


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _NOT_PASSED}


def run(settings: dict[str, Any], payload: dict[str, Any]) -> str | None:
    """Ask sjc to prune ``payload["summary"]``; the pruned summary, or None to keep Hermes' own."""
    timeout = settings["timeout_s"]
    data = json.dumps({"v": PROTOCOL, **payload}, ensure_ascii=True, default=str)
    try:
        done = subprocess.run(
            settings["command"],
            input=data,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            env=child_env(),
        )
    except subprocess.TimeoutExpired:  # subprocess.run has ended the child
        say(f"no answer from sjc within {timeout:g}s; the summary is left as Hermes wrote it")
        return None
    except OSError as exc:
        say(f"cannot run {settings['command'][0]} ({exc.strerror or exc}); the summary is left as Hermes wrote it")
        return None
    for line in (done.stderr or "").splitlines()[-20:]:
        if line.strip():
            logger.info("%s", line)
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or ["no message"]
        say(f"sjc exited with {done.returncode} ({tail[0]}); the summary is left as Hermes wrote it")
        return None
    try:
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
    except ValueError:
        say("sjc answered something that is not JSON; the summary is left as Hermes wrote it")
        return None
    if not isinstance(answer, dict):
        say("sjc answered something that is not a JSON object; the summary is left as Hermes wrote it")
        return None
    if isinstance(answer.get("line"), str):
        logger.info("%s", answer["line"])
    pruned = answer.get("summary")
    if pruned is None:
        return None
    original = str(payload.get("summary") or "")
    if not isinstance(pruned, str) or not pruned.strip() or not is_deletion(original, pruned):
        say("sjc's answer is not a deletion from the summary it was given; the summary is left as Hermes wrote it")
        return None
    return pruned
