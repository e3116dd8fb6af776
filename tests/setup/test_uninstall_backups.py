"""``sjc uninstall HOST`` and the ``*.sjc-backup-*`` files sjc made: the ones that hold nothing the file does
not hold now, besides sjc's own entries, are removed, and the output says so; any other is kept and named,
with why. Run as the user runs it: ``sjc install`` / ``sjc uninstall`` in a throw-away HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import sjc_exe

pytestmark = pytest.mark.slow  # runs sjc as a process

SETTINGS = '{\n  "model": "opus",\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}\n}\n'


def sjc(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SJC_", "XDG_", "CODEX_", "OPENCLAW_", "HERMES_"))}
    r = subprocess.run(
        [sjc_exe(), *args], capture_output=True, text=True, timeout=60, env={**base, "HOME": str(home), **env}
    )
    assert r.returncode == 0, r.stderr
    return r


def backups(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.sjc-backup-*"))


def test_install_then_uninstall_leaves_no_backup_and_says_so(tmp_path):
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(SETTINGS)
    sjc(tmp_path, "install", "claude-code")
    sjc(tmp_path, "install", "claude-code", "--dry-run")
    made = backups(claude)
    assert len(made) == 1
    dry = sjc(tmp_path, "uninstall", "claude-code", "--dry-run").stdout
    assert f"would remove the 1 backup(s) sjc made of settings.json ({made[0]})" in dry
    assert backups(claude) == made  # a dry run removes nothing
    out = sjc(tmp_path, "uninstall", "claude-code").stdout
    assert (claude / "settings.json").read_text() == SETTINGS
    assert backups(claude) == []
    assert f"{claude}: removed the 2 backup(s) sjc made of settings.json ({made[0]}, " in out
    assert "each held nothing it does not hold now, besides sjc's own entries" in out
    assert "(backup: " not in out  # no line names a backup that is gone


def test_a_backup_holding_what_the_user_changed_since_is_kept_and_named(tmp_path):
    claude = tmp_path / ".claude"
    claude.mkdir()
    settings = claude / "settings.json"
    settings.write_text(SETTINGS)
    sjc(tmp_path, "install", "claude-code")
    (first,) = backups(claude)
    data = json.loads(settings.read_text())
    data["model"] = "sonnet"  # the user's own change while sjc was installed
    settings.write_text(json.dumps(data))
    broken = claude / "settings.json.sjc-backup-20200101-000000"
    broken.write_bytes(b"\xff\xfe not text")
    out = sjc(tmp_path, "uninstall", "claude-code").stdout
    assert json.loads(settings.read_text())["model"] == "sonnet" and "sjc-hook" not in settings.read_text()
    assert backups(claude) == sorted([first, broken.name])  # what the file no longer holds is still there
    assert f"{claude / first}: kept: it holds settings settings.json does not hold now; compare the two" in out
    assert f"{broken}: kept: it cannot be read (" in out
    assert "removed the 1 backup(s) sjc made of settings.json" in out  # its own, of the file with the hooks
    assert (claude / first).read_text() == SETTINGS


def test_codex_hooks_and_their_trust(tmp_path):
    codex = tmp_path / ".codex"
    codex.mkdir()
    config = codex / "config.toml"
    config.write_text('model = "o4"\n\n[projects."/work"]\ntrust_level = "trusted"\n')
    original = config.read_bytes()
    env = {"CODEX_HOME": str(codex)}
    sjc(tmp_path, "install", "codex", "--trust", **env)
    assert backups(codex) != []
    out = sjc(tmp_path, "uninstall", "codex", **env).stdout
    assert config.read_bytes() == original and not (codex / "hooks.json").exists()
    assert backups(codex) == []
    assert "backup(s) sjc made of hooks.json" in out and "backup(s) sjc made of config.toml" in out


def test_openclaw_and_hermes(tmp_path):
    openclaw = tmp_path / "openclaw.json"
    original = '{"agents": {"defaults": {"compaction": {"keepRecentTokens": 200}}}, "gateway": {"port": 1}}\n'
    openclaw.write_text(original)
    env = {"OPENCLAW_CONFIG_PATH": str(openclaw)}
    sjc(tmp_path, "install", "openclaw", **env)
    out = sjc(tmp_path, "uninstall", "openclaw", **env).stdout
    assert openclaw.read_text() == original and backups(tmp_path) == []
    assert "backup(s) sjc made of openclaw.json" in out

    hermes = tmp_path / "hermes-home"
    hermes.mkdir()
    (hermes / "config.yaml").write_text("model:\n  default: x\n")
    env = {"HERMES_HOME": str(hermes)}
    sjc(tmp_path, "install", "hermes", **env)
    assert backups(hermes) != []
    out = sjc(tmp_path, "uninstall", "hermes", **env).stdout
    assert (hermes / "config.yaml").read_text() == "model:\n  default: x\n" and backups(hermes) == []
    assert "backup(s) sjc made of config.yaml" in out
