"""The real host CLIs for the end-to-end tests: pinned npm installs (cached) and an offline sandbox.

A newer host version is a one-line change below (or ``SJC_E2E_CLAUDE_CODE`` / ``SJC_E2E_CODEX`` /
``SJC_E2E_GEMINI_CLI`` in the environment). Installs are cached in ``$SJC_E2E_CACHE`` (default ``~/.cache/sjc-e2e``), one
folder per package and version, so a run after the first costs no download. ``SJC_E2E=0`` skips every
end-to-end test; a machine without ``npm`` skips them with that reason.

Every host process runs with a throw-away ``HOME``, its model API on 127.0.0.1, and every proxy
variable pointing at a closed loopback port (127.0.0.1:9) with only loopback exempt, so anything the
host tries to reach on its own fails on this machine instead of leaving it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLAUDE_CODE_VERSION = os.environ.get("SJC_E2E_CLAUDE_CODE", "2.1.332")
CODEX_VERSION = os.environ.get("SJC_E2E_CODEX", "0.171.0")
GEMINI_CLI_VERSION = os.environ.get("SJC_E2E_GEMINI_CLI", "0.61.0")

CACHE = Path(os.environ.get("SJC_E2E_CACHE", Path.home() / ".cache" / "sjc-e2e"))
DEAD_PROXY = "http://127.0.0.1:9"
VENV_BIN = Path(sys.executable).parent


def sjc_bin(name: str = "sjc") -> str:
    """The ``sjc`` / ``sjc-mcp`` of the environment running the tests (the checkout under test)."""
    path = VENV_BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed next to {sys.executable}; install the project first")
    return str(path)


def _skip_reason() -> str | None:
    if os.environ.get("SJC_E2E") == "0":
        return "SJC_E2E=0: end-to-end tests against the real host CLIs switched off"
    if shutil.which("npm") is None or shutil.which("node") is None:
        return "npm/node not found: the real host CLIs cannot be installed here"
    return None


def install(package: str, version: str, binary: str) -> Path:
    """``npm install package@version`` into the cache (once; under a lock) and the path of its binary."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    slug = package.strip("@").replace("/", "-")
    prefix = CACHE / "npm" / f"{slug}-{version}"
    exe = prefix / "node_modules" / ".bin" / binary
    short = CACHE / "npm" / f"{package.rsplit('/', 1)[-1]}-{version}" / "node_modules" / ".bin" / binary
    if not exe.exists() and short.exists():
        return short  # the same version cached under the package's short name
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            r = subprocess.run(
                ["npm", "install", "--no-fund", "--no-audit", "--prefix", str(prefix), f"{package}@{version}"],
                capture_output=True,
                text=True,
                timeout=900,
            )
            if r.returncode != 0 or not exe.exists():
                pytest.fail(f"npm install {package}@{version} failed: {r.stderr.strip()[-2000:]}")
    return exe


def claude_code() -> Path:
    return install("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude")


def codex() -> Path:
    return install("@openai/codex", CODEX_VERSION, "codex")


def gemini_cli() -> Path:
    return install("@google/gemini-cli", GEMINI_CLI_VERSION, "gemini")


def offline_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment for a host process: a throw-away HOME, nothing of the caller's sjc or API
    settings, and every non-loopback address routed to a dead port."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        HTTP_PROXY=DEAD_PROXY,
        HTTPS_PROXY=DEAD_PROXY,
        ALL_PROXY=DEAD_PROXY,
        http_proxy=DEAD_PROXY,
        https_proxy=DEAD_PROXY,
        all_proxy=DEAD_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        time.sleep(0.05)
    return False
