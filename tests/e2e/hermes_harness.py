"""Driving the real Hermes Agent in a throw-away home: the pinned PyPI install (cached), its config,
``hermes chat -q`` turns, a manual ``/compress`` through its TUI gateway, and what it stored in state.db.

Hermes is installed from PyPI with ``pip`` into a venv of its own, once per version, in
``$SJC_E2E_CACHE/pypi/hermes-agent-mcp-<version>`` (default ``~/.cache/sjc-e2e``), with the ``[mcp]``
extra: that pins ``mcp`` 1.26, which sjc's own MCP SDK cannot share, so the plugin is shown working where
sjc cannot be installed into Hermes' venv. ``SJC_E2E_HERMES`` picks another version. Hermes needs
Python 3.11 to 3.13: the venv is made with the interpreter running the tests when it is one of those, else
with the first ``python3.13`` / ``python3.12`` / ``python3.11`` on PATH; without one the tests skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hostcli
import pytest

HERMES_VERSION = os.environ.get("SJC_E2E_HERMES", "0.19.0")
TURN_TIMEOUT = float(os.environ.get("SJC_E2E_HERMES_TIMEOUT", "180"))
PIP_TIMEOUT = 1200


def _python() -> str | None:
    if (3, 11) <= sys.version_info[:2] <= (3, 13):
        return sys.executable
    for name in ("python3.13", "python3.12", "python3.11"):
        found = shutil.which(name)
        if found:
            return found
    return None


def hermes_venv() -> Path:
    """The venv holding ``hermes-agent[mcp]==HERMES_VERSION`` (installed once, under a lock)."""
    if os.environ.get("SJC_E2E") == "0":
        pytest.skip("SJC_E2E=0: end-to-end tests against the real hosts switched off")
    python = _python()
    if python is None:
        pytest.skip(f"hermes-agent {HERMES_VERSION} needs Python 3.11-3.13; none found on PATH")
    venv = hostcli.CACHE / "pypi" / f"hermes-agent-mcp-{HERMES_VERSION}"
    exe = venv / "bin" / "hermes"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".hermes-{HERMES_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted install
            steps = [
                [python, "-m", "venv", str(venv)],
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"hermes-agent[mcp]=={HERMES_VERSION}"],
            ]
            for cmd in steps:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT)
                if r.returncode != 0:
                    shutil.rmtree(venv, ignore_errors=True)
                    pytest.fail(f"{' '.join(cmd[-3:])} failed: {(r.stderr or r.stdout).strip()[-2000:]}")
    return venv


def config_yaml(base_url: str, protect_first_n: int = 0, in_place: bool = True, extra: str = "") -> str:
    """Hermes' config for the fake model: a custom OpenAI-compatible provider on loopback, a 65536-token
    window (compaction at 64000 reported prompt tokens), only the terminal tool."""
    return (
        "model:\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        "  default: fake-model\n"
        "  api_key: fake-key-for-loopback\n"
        "  context_length: 65536\n"
        "toolsets:\n"
        "- terminal\n"
        "compression:\n"
        "  enabled: true\n"
        "  threshold: 0.5\n"
        f"  protect_first_n: {protect_first_n}\n"
        "  protect_last_n: 2\n"
        f"  in_place: {'true' if in_place else 'false'}\n"
        "agent:\n"
        "  api_max_retries: 1\n" + extra
    )


class Hermes:
    """One sandbox: ``home`` (HOME), ``hermes_home`` (HERMES_HOME), ``work`` (the session's cwd)."""

    def __init__(self, root: Path, workspace: dict[str, str], hermes_home: Path | None = None) -> None:
        self.venv = hermes_venv()
        self.exe = str(self.venv / "bin" / "hermes")
        self.root = root
        self.home = root / "home"
        self.hermes_home = hermes_home or self.home / ".hermes"
        self.work = root / "work"
        for d in (self.home, self.hermes_home, self.work):
            d.mkdir(parents=True, exist_ok=True)
        for name, text in workspace.items():
            (self.work / name).write_text(text)
        self.decision_log = root / "decisions.jsonl"
        self.env = hostcli.offline_env(
            self.home,
            HERMES_HOME=str(self.hermes_home),
            SJC_DECISION_LOG=str(self.decision_log),
            PIP_NO_INDEX="1",  # Hermes installs optional packages at run time: never from here
        )
        self.config = self.hermes_home / "config.yaml"
        self.db = self.hermes_home / "state.db"

    def turn(self, prompt: str, session: str | None = None, env: dict[str, str] | None = None) -> Turn:
        """``hermes chat -q PROMPT -Q --yolo [--resume SESSION]`` in ``work``."""
        cmd = [self.exe, "chat", "-q", prompt, "-Q", "--yolo", *(["--resume", session] if session else [])]
        r = subprocess.run(
            cmd,
            cwd=self.work,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TURN_TIMEOUT,
        )
        sid = next(
            (ln.split()[-1] for ln in reversed(r.stderr.splitlines()) if ln.startswith("session_id:")), session or ""
        )
        if r.returncode != 0 or not sid:
            raise AssertionError(f"hermes chat failed (rc {r.returncode}): {r.stderr.strip()[-3000:]}")
        return Turn(sid, r.stdout, r.stderr)

    def sjc(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [hostcli.sjc_bin(), *args],
            cwd=self.work,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )

    @contextlib.contextmanager
    def gateway(self, env: dict[str, str] | None = None) -> Iterator[Gateway]:
        gw = Gateway(str(self.venv / "bin" / "python"), self.work, {**self.env, **(env or {})})
        try:
            yield gw
        finally:
            gw.close()

    # ---- what Hermes stored --------------------------------------------------------------------------

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            con.row_factory = sqlite3.Row
            return [dict(r) for r in con.execute(sql, args)]
        finally:
            con.close()

    def active_summaries(self, session: str) -> list[str]:
        """The content of every active message of ``session`` that carries a compaction summary."""
        from hermes_fake import NOTICE

        rows = self.rows("SELECT content FROM messages WHERE session_id = ? AND active = 1 ORDER BY id", (session,))
        return [r["content"] for r in rows if NOTICE in (r["content"] or "")]

    def decisions(self) -> list[dict[str, Any]]:
        if not self.decision_log.exists():
            return []
        return [json.loads(ln) for ln in self.decision_log.read_text().splitlines() if ln.strip()]


class Turn:
    def __init__(self, session: str, stdout: str, stderr: str) -> None:
        self.session = session
        self.stdout = stdout
        self.stderr = stderr


class Gateway:
    """Hermes' TUI gateway (``python -m tui_gateway.entry``, the back end of ``hermes --tui``):
    newline-delimited JSON-RPC on stdio. ``compress`` is what the TUI's ``/compress [focus]`` does."""

    def __init__(self, python: str, cwd: Path, env: dict[str, str]) -> None:
        self.p = subprocess.Popen(
            [python, "-m", "tui_gateway.entry"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self.n = 0

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            with contextlib.suppress(ValueError):
                self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def _read_err(self) -> None:
        assert self.p.stderr is not None
        for line in self.p.stderr:
            self.stderr.append(line)

    def call(self, method: str, params: dict[str, Any], timeout: float = TURN_TIMEOUT) -> dict[str, Any]:
        self.n += 1
        rid = self.n
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        return self._wait(lambda m: m.get("id") == rid, timeout, method)

    def _wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float, what: str) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            if m is None:
                raise RuntimeError(f"the TUI gateway exited during {what}: {''.join(self.stderr)[-2000:]}")
            if pred(m):
                return m
        raise TimeoutError(f"the TUI gateway did not answer {what} within {timeout:g}s")

    def compress(self, session: str, focus: str = "", timeout: float = TURN_TIMEOUT) -> dict[str, Any]:
        """``session.resume`` then ``session.compress``; the agent is built in the background and compress
        answers 5032 until it is ready: asked again until it is."""
        r = self.call("session.resume", {"session_id": session, "cols": 100})
        if "error" in r:
            raise RuntimeError(f"session.resume: {r['error']}")
        gsid = r["result"]["session_id"]
        end = time.monotonic() + timeout
        while True:
            r = self.call("session.compress", {"session_id": gsid, "focus_topic": focus}, timeout=timeout)
            if (r.get("error") or {}).get("code") != 5032 or time.monotonic() > end:
                break
        if "error" in r:
            raise RuntimeError(f"session.compress: {r['error']}")
        return {k: v for k, v in (r.get("result") or {}).items() if k not in ("messages", "info")}

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.p.stdin is not None
            self.p.stdin.close()
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=10)
