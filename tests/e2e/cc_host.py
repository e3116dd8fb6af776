"""Driving the real Claude Code CLI offline: a throw-away user (``HOME``), ``claude -p`` runs against a
model API on loopback, the transcripts and decision log they leave, and ``sjc proxy`` in front of the API."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cc_fake
import hostcli
import pytest

CC_TIMEOUT = 180
ANSWER = "Which port again? [[bash echo port check]]"


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> dict[str, Any]:
        try:
            out = json.loads(self.stdout)
        except ValueError:
            pytest.fail(f"claude printed no JSON (rc {self.rc}): {self.stdout[-800:]} {self.stderr[-800:]}")
        return out if isinstance(out, dict) else {}


@dataclass
class Compaction:
    trigger: str | None
    summary: str


class User:
    """A throw-away user: its own ``HOME`` (settings, transcripts, sjc's log and state)."""

    def __init__(self, home: Path, base_url: str) -> None:
        self.home = home
        self.base_url = base_url
        home.mkdir(parents=True, exist_ok=True)
        self.exe = str(hostcli.claude_code())

    @property
    def decision_log(self) -> Path:
        return self.home / ".local" / "state" / "sjc" / "decisions.jsonl"

    @property
    def settings(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def env(self, **extra: str) -> dict[str, str]:
        return hostcli.offline_env(
            self.home, ANTHROPIC_API_KEY="sk-ant-e2e-not-a-key", ANTHROPIC_BASE_URL=self.base_url, **extra
        )

    def claude(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
        t0 = time.monotonic()
        try:
            r = subprocess.run(
                [self.exe, *args],
                cwd=cwd,
                env={**self.env(), **(env or {})},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CC_TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"claude {' '.join(args)[:200]} ran past {CC_TIMEOUT}s: {str(exc.stderr)[-800:]}")
        return Run(r.returncode, r.stdout, r.stderr, time.monotonic() - t0)

    def ask(self, cwd: Path, prompt: str, *more: str, env: dict[str, str] | None = None, cont: bool = True) -> Run:
        """One ``claude -p`` turn (continuing the newest session in ``cwd``) that may use Bash and Read."""
        args = ["-p", prompt, *(["--continue"] if cont else []), "--output-format", "json"]
        r = self.claude(cwd, *args, "--allowedTools", "Bash", "Read", *more, env=env)
        assert r.rc == 0, f"claude -p {prompt!r} failed (rc {r.rc}): {r.stdout[-600:]} {r.stderr[-600:]}"
        return r

    def compact(self, cwd: Path, env: dict[str, str] | None = None) -> Run:
        r = self.claude(cwd, "-p", "/compact", "--continue", "--output-format", "json", env=env)
        assert r.rc == 0, f"claude -p /compact failed (rc {r.rc}): {r.stdout[-600:]} {r.stderr[-600:]}"
        return r

    def session(self, work: Path, env: dict[str, str] | None = None) -> str:
        """A new session in ``work`` (the scenario's files written there first) with two tool turns."""
        work.mkdir(parents=True, exist_ok=True)
        for name, text in cc_fake.FILES.items():
            (work / name).write_text(text)
        first = self.ask(work, f"{cc_fake.PROMPT_BUILD} [[bash echo build ok; ls]]", cont=False, env=env)
        sid = str(first.json().get("session_id"))
        second = self.ask(work, f"{cc_fake.PROMPT_PORT} [[read {work}/config.yaml]]", env=env)
        assert second.json().get("session_id") == sid, "--continue did not continue the session"
        return sid

    def transcript(self, session: str) -> Path:
        hits = list((self.home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        assert hits, f"no transcript for session {session} under {self.home}/.claude/projects"
        return hits[0]

    def compactions(self, session: str) -> list[Compaction]:
        """The compactions Claude Code stored: each boundary's trigger and the summary written after it."""
        out: list[Compaction] = []
        for rec in jsonl(self.transcript(session)):
            if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
                out.append(Compaction((rec.get("compactMetadata") or {}).get("trigger"), ""))
            elif rec.get("isCompactSummary") and out and not out[-1].summary:
                out[-1].summary = cc_fake.text_of((rec.get("message") or {}).get("content"))
        return out

    def decisions(self) -> list[dict[str, Any]]:
        return jsonl(self.decision_log)

    def sjc(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [hostcli.sjc_bin(), *args],
            env={**self.env(), **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )


def jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                if isinstance(rec, dict):
                    out.append(rec)
    return out


def sections(stored: str) -> str:
    """The nine sections of a stored summary, from the first heading to the last entry (without Claude
    Code's lead-in and closing lines), as the next request must carry them."""
    start = stored.index(cc_fake.HEADINGS[0])
    end = stored.find("\n\nIf you need specific details", start)
    return stored[start : end if end >= 0 else len(stored)].rstrip()


def after(exchanges: list[cc_fake.Exchange], first: cc_fake.Exchange) -> list[cc_fake.Exchange]:
    """The ordinary requests that came after ``first``."""
    i = exchanges.index(first)
    return [e for e in exchanges[i + 1 :] if e.kind == "ordinary"]


@contextlib.contextmanager
def sjc_proxy(home: Path, upstream: str, **env: str) -> Iterator[str]:
    """``sjc proxy`` on a free loopback port in front of ``upstream``, as the user ``home``; its URL."""
    port = hostcli.free_port()
    home.mkdir(parents=True, exist_ok=True)
    err = home / f"proxy-{port}.err"
    with err.open("w") as fh:
        proc = subprocess.Popen(
            [hostcli.sjc_bin(), "proxy", "--listen", f"127.0.0.1:{port}", "--upstream", upstream],
            env=hostcli.offline_env(home, **env),
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=fh,
        )
    try:
        if not hostcli.wait_port(port, 30):
            pytest.fail(f"sjc proxy did not listen on 127.0.0.1:{port}: {err.read_text()[-800:]}")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
