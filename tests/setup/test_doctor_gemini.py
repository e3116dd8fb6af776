"""``sjc doctor`` for Gemini CLI, run as a user runs it, in a throw-away HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import sjc_exe

pytestmark = pytest.mark.slow


def sjc(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    drop = ("SJC_", "XDG_", "CODEX_", "ANTHROPIC_", "GEMINI_", "GOOGLE_")
    base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    base["PATH"] = f"{Path(sjc_exe()).parent}:/usr/bin:/bin"
    return subprocess.run(
        [sjc_exe(), *args], capture_output=True, text=True, timeout=60, env={**base, "HOME": str(home), **env}
    )


def gemini_lines(r: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in r.stdout.splitlines() if line.split()[1:2] == ["gemini"]]


def test_doctor_gemini_hook_server_and_proxy(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    r = sjc(tmp_path, "doctor")
    assert any("hook not installed" in ln and "fix: sjc install gemini" in ln for ln in gemini_lines(r)), r.stdout
    assert sjc(tmp_path, "install", "gemini").returncode == 0
    (tmp_path / ".gemini" / "settings.json").write_text(
        json.dumps({"mcpServers": {"sjc": {"command": str(Path(sjc_exe()).parent / "sjc-mcp"), "args": []}}})
    )
    r = sjc(tmp_path, "doctor", GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:9")
    g = gemini_lines(r)
    assert any(ln.startswith("ok") and "hook installed (extension" in ln for ln in g), r.stdout
    assert any(ln.startswith("ok") and "answered initialize" in ln for ln in g), r.stdout
    assert any(ln.startswith("FAIL") and "not listening" in ln and "sjc proxy --listen 127.0.0.1:9" in ln for ln in g)
    assert r.returncode == 1
