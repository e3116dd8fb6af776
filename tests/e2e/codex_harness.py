"""Driving the real Codex CLI in a throw-away home: its config, ``codex exec``, ``codex app-server``
(JSON-RPC over stdio) and what it leaves behind (rollouts, hooks list)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import codex_fake
import hostcli

EXEC_TIMEOUT = float(os.environ.get("SJC_E2E_CODEX_TIMEOUT", "90"))
API_KEY_ENV = "SJC_E2E_FAKE_KEY"


def toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string


class Codex:
    """One sandbox: ``home`` (HOME), ``codex_home`` (CODEX_HOME), ``work`` (the session's cwd)."""

    def __init__(self, root: Path, codex_home: Path | None = None, decision_log: Path | None = None) -> None:
        self.exe = str(hostcli.codex())
        self.root = root
        self.home = root / "home"
        self.codex_home = codex_home or self.home / ".codex"
        self.work = root / "work"
        for d in (self.home, self.codex_home, self.work):
            d.mkdir(parents=True, exist_ok=True)
        for name, text in codex_fake.WORKSPACE.items():
            (self.work / name).write_text(text)
        self.decision_log = decision_log or root / "decisions.jsonl"
        self.env = hostcli.offline_env(
            self.home,
            CODEX_HOME=str(self.codex_home),
            SJC_DECISION_LOG=str(self.decision_log),
            **{API_KEY_ENV: "sk-e2e-not-a-key"},
        )
        self.config = self.codex_home / "config.toml"

    def write_config(
        self,
        base_url: str,
        provider: str = "sjce2e",
        name: str = "OpenAI-compatible (e2e)",
        extra: str = "",
        compact_limit: int = 1000,
    ) -> None:
        """A custom Responses provider at ``base_url``; a compaction limit far below what the fake reports.

        Codex 0.171.0 at limit 1000: the turn after a manual compaction compacts first as well (at 20000 it
        does not), so a test of what follows a manual compaction raises ``compact_limit``."""
        self.config.write_text(
            f'model = "fake-model"\nmodel_provider = "{provider}"\n'
            f"model_auto_compact_token_limit = {compact_limit}\nmodel_context_window = 200000\n"
            "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n"
            f"[model_providers.{provider}]\nname = {toml_str(name)}\nbase_url = {toml_str(base_url)}\n"
            f'env_key = "{API_KEY_ENV}"\nwire_api = "responses"\n' + extra
        )

    def run(
        self,
        *args: str,
        timeout: float = EXEC_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``codex exec ARGS`` in ``work``, no approvals or sandbox (the fake's shell call runs as is)."""
        cmd = [self.exe, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *args]
        return subprocess.run(
            cmd,
            cwd=self.work,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

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
    def app_server(self) -> Iterator[AppServer]:
        srv = AppServer(self.exe, self.work, self.env)
        try:
            yield srv
        finally:
            srv.close()

    # ---- what Codex wrote ------------------------------------------------------------------------

    def rollouts(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)

    def records(self, rollout: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in rollout.read_text().splitlines() if line.strip()]

    def compacted(self) -> list[dict[str, Any]]:
        """Every ``compacted`` record's payload, oldest first, over all rollouts."""
        return [r["payload"] for p in self.rollouts() for r in self.records(p) if r.get("type") == "compacted"]

    def decisions(self, path: Path | None = None) -> list[dict[str, Any]]:
        p = path or self.decision_log
        if not p.exists():
            return []
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]

    def thread_id(self) -> str:
        first = self.records(self.rollouts()[-1])[0]
        return str(first["payload"]["id"])


class AppServer:
    """``codex app-server``: newline-delimited JSON-RPC on stdin/stdout; every wait is bounded."""

    def __init__(self, exe: str, cwd: Path, env: dict[str, str]) -> None:
        self.p = subprocess.Popen(
            [exe, "app-server"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.n = 0
        self.call("initialize", {"clientInfo": {"name": "sjc-e2e", "version": "1"}})
        self.notify("initialized")

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            with contextlib.suppress(ValueError):
                self.inbox.put(json.loads(line))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"method": method}
        if params is not None:
            msg["params"] = params
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def call(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        self.n += 1
        rid = self.n
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps({"id": rid, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        msg = self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {json.dumps(msg['error'])}")
        return dict(msg.get("result") or {})

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(m)
            if pred(m):
                return m
        raise TimeoutError(f"codex app-server: no awaited message within {timeout:g}s")

    def hooks(self, cwd: Path) -> list[dict[str, Any]]:
        res = self.call("hooks/list", {"cwds": [str(cwd)]})
        return [h for d in res.get("data", []) for h in d.get("hooks", [])]

    def compact(self, thread_id: str, timeout: float = EXEC_TIMEOUT) -> None:
        """What the TUI's ``/compact`` does: resume the thread, ``thread/compact/start``, wait for the turn."""
        self.call("thread/resume", {"threadId": thread_id})
        self.call("thread/compact/start", {"threadId": thread_id})
        self.wait(lambda m: m.get("method") == "turn/completed", timeout)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.p.stdin is not None
            self.p.stdin.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=10)


@contextlib.contextmanager
def sjc_proxy(upstream: str, env: dict[str, str], log: Path) -> Iterator[str]:
    """``sjc proxy`` on a free loopback port in front of ``upstream``; yields its origin."""
    port = hostcli.free_port()
    with open(log, "ab") as out:
        p = subprocess.Popen(
            [hostcli.sjc_bin(), "proxy", "--listen", f"127.0.0.1:{port}", "--upstream", upstream],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        if not hostcli.wait_port(port, 30):
            raise RuntimeError(f"sjc proxy did not listen on 127.0.0.1:{port}: {log.read_text()[-2000:]}")
        yield f"http://127.0.0.1:{port}"
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)
