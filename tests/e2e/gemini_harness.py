"""Driving the real Gemini CLI in a throw-away home: its settings, headless ``gemini -p``, an interactive
session under tmux (for ``/compress``, which ``gemini -p`` does not run), and what it leaves behind (chat
files, the decision log).

The CLI is ``@google/gemini-cli`` from npm, pinned in ``hostcli`` (``SJC_E2E_GEMINI_CLI`` overrides), cached like
the other hosts. Every run is offline: ``GEMINI_API_KEY`` is a fake key,
``GOOGLE_GEMINI_BASE_URL`` points at a scripted model (or ``sjc proxy``) on 127.0.0.1, the settings turn
telemetry, usage statistics and update checks off, and every proxy variable points at a dead port.

Facts of Gemini CLI 0.61.0 the driver relies on, each seen in its runs:

- With ``GOOGLE_GEMINI_BASE_URL`` and ``GEMINI_API_KEY`` set it calls ``POST {base}/v1beta/models/M:…``
  with the key in ``x-goog-api-key``; ``security.auth.selectedType: "gemini-api-key"`` in the settings
  avoids the first-start auth dialog. ``HTTPS_PROXY`` with ``NO_PROXY`` covering 127.0.0.1 is honoured.
- With folder trust on (the default) ``gemini -p`` in a folder not yet trusted exits 55 ("not running in
  a trusted directory"); settings hooks run only in trusted folders. The sandbox turns folder trust off
  unless a test asks for it.
- A resumed session (``-r latest``) first creates an empty chat file; the default session cleanup at the
  next start then deletes "unresumable" files and every file sharing their short id, the real session
  included. The sandbox turns ``general.sessionRetention`` off.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gemini_fake
import hostcli
import pytest

GEMINI_CLI_VERSION = hostcli.GEMINI_CLI_VERSION
RUN_TIMEOUT = float(os.environ.get("SJC_E2E_GEMINI_TIMEOUT", "120"))
API_KEY = "fake-e2e-key"
MODEL = "gemini-2.5-flash"


def need_tmux() -> str:
    exe = shutil.which("tmux")
    if exe is None:
        pytest.skip("tmux not found: the interactive Gemini CLI (/compress) is driven in a tmux pane")
    return exe


def base_settings(trust: bool = False) -> dict[str, Any]:
    """The offline settings every sandbox starts from; ``trust``: leave folder trust on (the default)."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": trust}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "sessionRetention": {"enabled": False},
        },
        "model": {"name": MODEL},
        "ui": {"hideBanner": True, "hideTips": True},
        "tools": {"shell": {"enableInteractiveShell": False}},
    }


def merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def text_of(content: Any) -> str:
    """A chat-file message's text: a string, or the text parts of a parts list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


class Gemini:
    """One sandbox: ``home`` (HOME, with ``.gemini/settings.json``), ``work`` (the session's folder, holding
    the scenario's files)."""

    def __init__(self, root: Path, decision_log: Path | None = None) -> None:
        self.exe = str(hostcli.gemini_cli())
        self.root = root
        self.home = root / "home"
        self.work = root / "work"
        for d in (self.home / ".gemini", self.work):
            d.mkdir(parents=True, exist_ok=True)
        for name, text in gemini_fake.FILES.items():
            (self.work / name).write_text(text)
        self.decision_log = decision_log or root / "decisions.jsonl"
        self.base_url = ""
        self.env = hostcli.offline_env(
            self.home,
            GEMINI_API_KEY=API_KEY,
            SJC_DECISION_LOG=str(self.decision_log),
            TERM="xterm-256color",
        )
        self.settings_path = self.home / ".gemini" / "settings.json"

    def write_settings(self, base_url: str, extra: dict[str, Any] | None = None, trust: bool = False) -> None:
        """The model API at ``base_url``; ``extra`` merged into the offline base (``hooks``, ``mcpServers``)."""
        self.base_url = base_url
        self.settings_path.write_text(json.dumps(merged(base_settings(trust), extra or {}), indent=2))

    def _env(self, env: dict[str, str] | None) -> dict[str, str]:
        return {**self.env, "GOOGLE_GEMINI_BASE_URL": self.base_url, **(env or {})}

    def run(
        self,
        prompt: str,
        resume: bool = False,
        args: Sequence[str] = (),
        timeout: float = RUN_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``gemini --yolo [-r latest] -p PROMPT --output-format json`` in ``work``."""
        cmd = [
            self.exe,
            "--yolo",
            *(["-r", "latest"] if resume else []),
            *args,
            "-p",
            prompt,
            "--output-format",
            "json",
        ]
        return subprocess.run(
            cmd,
            cwd=self.work,
            env=self._env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run_cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``gemini ARGS`` (a subcommand such as ``extensions list``) in ``work``."""
        return subprocess.run(
            [self.exe, *args],
            cwd=self.work,
            env=self._env(None),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def sjc(
        self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [hostcli.sjc_bin(), *args],
            cwd=self.work,
            env=self._env(env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def tui(
        self,
        lines: list[str],
        timeout: float = RUN_TIMEOUT,
        env: dict[str, str] | None = None,
        trust_answer: str | None = None,
    ) -> Tui:
        """An interactive session typing ``lines`` (the last one should be ``/quit``); waits for it to end.
        ``trust_answer``: the key to press in the folder-trust dialog ("1" trust, "3" don't trust)."""
        t = Tui(self, env)
        try:
            t.start(timeout, trust_answer)
            for line in lines:
                t.send(line, timeout)
            t.wait_exit(30)
        finally:
            t.close()
        return t

    # ---- what Gemini CLI wrote -------------------------------------------------------------------------

    def chat_files(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*.json*"), key=lambda p: p.stat().st_mtime)

    @staticmethod
    def records(path: Path) -> list[dict[str, Any]]:
        out = []
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                if isinstance(rec, dict):
                    out.append(rec)
        return out

    def session_file(self) -> Path:
        """The chat file of the session (the newest one holding messages: a resume also leaves an empty one)."""
        files = [f for f in self.chat_files() if any("id" in r or "$set" in r for r in self.records(f))]
        assert files, f"no chat file under {self.home / '.gemini' / 'tmp'}"
        return files[-1]

    def stored_snapshots(self, path: Path | None = None) -> list[str]:
        """Every distinct ``<state_snapshot>`` user message the CLI stored, oldest first (0.61.0 writes it only
        inside ``{"$set": {"messages": [...]}}`` records)."""
        seen: dict[str, str] = {}
        for f in [path] if path else self.chat_files():
            for rec in self.records(f):
                msgs = rec["$set"].get("messages") if isinstance(rec.get("$set"), dict) else [rec]
                for m in msgs or []:
                    if (
                        isinstance(m, dict)
                        and m.get("type") == "user"
                        and "<state_snapshot>" in text_of(m.get("content"))
                    ):
                        seen.setdefault(str(m.get("id")), text_of(m.get("content")))
        return list(seen.values())

    def model_texts(self) -> list[str]:
        """The text of every ``gemini`` message the CLI stored (last write of each id)."""
        by_id: dict[str, str] = {}
        for f in self.chat_files():
            for rec in self.records(f):
                if rec.get("type") == "gemini" and text_of(rec.get("content")):
                    by_id[str(rec.get("id"))] = text_of(rec.get("content"))
        return list(by_id.values())

    def decisions(self) -> list[dict[str, Any]]:
        if not self.decision_log.exists():
            return []
        return [json.loads(ln) for ln in self.decision_log.read_text().splitlines() if ln.strip()]


class Tui:
    """``gemini --yolo`` in a tmux pane of a private tmux server (its own socket file), 200x50."""

    READY = "Type your message"
    BUSY = "esc to cancel"
    TRUST = "Do you trust the files in this folder?"

    def __init__(self, g: Gemini, env: dict[str, str] | None) -> None:
        self.tmux = need_tmux()
        self.g = g
        self.dir = Path(tempfile.mkdtemp(prefix="sjc-tmux-"))  # short: a socket path has a length limit
        self.sock = str(self.dir / "s")
        e = g._env(env)
        inner = shlex.join(["env", "-i", *[f"{k}={v}" for k, v in sorted(e.items())], g.exe, "--yolo"])
        self.cmd = f"cd {shlex.quote(str(g.work))} && {inner}; echo SJC-E2E-EXIT-$?; sleep 30"
        self.panes: list[str] = []

    def _tmux(self, *args: str) -> str:
        r = subprocess.run(
            [self.tmux, "-S", self.sock, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": os.environ.get("PATH", ""), "TERM": "xterm"},
        )
        return r.stdout

    def pane(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "g")

    def snap(self, label: str) -> str:
        p = self.pane()
        self.panes.append(f"===== {label}\n{p}")
        return p

    def wait(self, pred: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred(self.pane()):
                return True
            time.sleep(0.3)
        return False

    def idle(self, timeout: float) -> bool:
        """The input box is there and no spinner has shown for 2.5 s in a row."""
        end = time.monotonic() + timeout
        calm: float | None = None
        while time.monotonic() < end:
            p = self.pane()
            if self.BUSY in p or self.READY not in p:
                calm = None
            elif calm is None:
                calm = time.monotonic()
            elif time.monotonic() - calm >= 2.5:
                return True
            time.sleep(0.3)
        return False

    def start(self, timeout: float, trust_answer: str | None = None) -> None:
        self._tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", "g", self.cmd)
        if trust_answer is not None:
            if not self.wait(lambda p: self.TRUST in p, timeout):
                raise AssertionError(
                    "the interactive Gemini CLI asked nothing about folder trust:\n" + self.snap("start")
                )
            self._tmux("send-keys", "-t", "g", trust_answer)
            time.sleep(0.5)
            self._tmux("send-keys", "-t", "g", "Enter")
        if not self.wait(lambda p: self.READY in p and self.TRUST not in p, timeout):
            raise AssertionError("the interactive Gemini CLI showed no input box:\n" + self.snap("start"))
        self.idle(timeout)

    def send(self, line: str, timeout: float) -> None:
        self._tmux("send-keys", "-t", "g", "-l", line)
        time.sleep(0.5)
        self._tmux("send-keys", "-t", "g", "Enter")
        time.sleep(1.0)
        p = self.pane()
        if line.startswith("/") and self.READY not in p and self.BUSY not in p and "SJC-E2E-EXIT-" not in p:
            self._tmux("send-keys", "-t", "g", "Enter")  # the completion list took the first Enter
        if line == "/quit":
            return
        if not self.idle(timeout):
            raise AssertionError(f"the interactive Gemini CLI did not settle after {line!r}:\n" + self.snap(line))
        self.snap(line)

    def wait_exit(self, timeout: float) -> None:
        if not self.wait(lambda p: "SJC-E2E-EXIT-" in p, timeout):
            raise AssertionError("the interactive Gemini CLI did not exit after /quit:\n" + self.snap("quit"))
        self.snap("exit")

    def close(self) -> None:
        self._tmux("kill-server")
        shutil.rmtree(self.dir, ignore_errors=True)
