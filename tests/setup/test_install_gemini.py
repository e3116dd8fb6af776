"""``sjc install gemini`` / ``sjc uninstall gemini``: an extension of sjc's own by default (Gemini CLI runs an
extension's hooks in every folder, a settings file's only in trusted ones), or the project's settings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sjc_mcp.errors import InputError
from sjc_mcp.setup import install
from tests.conftest import sjc_exe


def ext(home: Path) -> Path:
    return home / ".gemini" / "extensions" / "sjc"


def test_user_scope_writes_an_extension_holding_the_hook(isolated_home: Path) -> None:
    path, message = install.install("gemini", command="/opt/sjc/bin/sjc-hook")
    assert path == ext(isolated_home) and "installed" in message
    manifest = json.loads((path / "gemini-extension.json").read_text())
    hooks = json.loads((path / "hooks" / "hooks.json").read_text())
    assert manifest["name"] == "sjc" and manifest["version"]
    assert hooks == {
        "hooks": {
            "BeforeModel": [
                {"hooks": [{"type": "command", "command": "/opt/sjc/bin/sjc-hook gemini", "timeout": 60000}]}
            ]
        }
    }
    assert "nothing changed" in install.install("gemini", command="/opt/sjc/bin/sjc-hook")[1]
    # a new sjc path is written over the old one
    install.install("gemini", command="/usr/bin/sjc-hook")
    assert "/usr/bin/sjc-hook gemini" in (path / "hooks" / "hooks.json").read_text()
    assert "removed" in install.uninstall("gemini")[1]
    assert not path.exists() and path.parent.is_dir()
    assert "nothing changed" in install.uninstall("gemini")[1]


def test_gemini_cli_home_moves_the_extension(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    path, _ = install.install("gemini", command="sjc-hook")
    assert path == tmp_path / "elsewhere" / ".gemini" / "extensions" / "sjc" and path.is_dir()
    assert not (isolated_home / ".gemini").exists()


def test_dry_run_writes_nothing(isolated_home: Path) -> None:
    _, message = install.install("gemini", dry_run=True, command="sjc-hook")
    assert "gemini-extension.json" in message and "sjc-hook gemini" in message
    assert not ext(isolated_home).exists()


def test_an_extension_named_sjc_that_is_not_ours_is_left_alone(isolated_home: Path) -> None:
    other = ext(isolated_home)
    other.mkdir(parents=True)
    (other / "gemini-extension.json").write_text(json.dumps({"name": "sjc-something-else", "version": "1"}))
    with pytest.raises(InputError, match="not sjc's"):
        install.install("gemini", command="sjc-hook")
    with pytest.raises(InputError, match="not sjc's"):
        install.uninstall("gemini")
    assert json.loads((other / "gemini-extension.json").read_text())["name"] == "sjc-something-else"


def test_files_of_the_users_in_the_extension_folder_stay(isolated_home: Path) -> None:
    path, _ = install.install("gemini", command="sjc-hook")
    (path / "NOTES.md").write_text("mine")
    _, message = install.uninstall("gemini")
    assert (path / "NOTES.md").read_text() == "mine" and not (path / "hooks").exists()
    assert "other files left" in message


def test_project_scope_merges_into_the_projects_settings_and_says_it_needs_trust(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "lint-hook", "timeout": 5000}
    settings.write_text(
        json.dumps({"model": {"name": "gemini-2.5-flash"}, "hooks": {"BeforeModel": [{"hooks": [theirs]}]}})
    )
    path, message = install.install("gemini", "project", command="sjc-hook")
    assert path == settings and "trusted folder" in message
    data = json.loads(settings.read_text())
    assert data["model"] == {"name": "gemini-2.5-flash"}
    assert data["hooks"]["BeforeModel"] == [
        {"hooks": [theirs]},
        {"hooks": [{"type": "command", "command": "sjc-hook gemini", "timeout": 60000}]},
    ]
    assert not ext(isolated_home).exists()
    install.uninstall("gemini", "project")
    assert json.loads(settings.read_text()) == {
        "model": {"name": "gemini-2.5-flash"},
        "hooks": {"BeforeModel": [{"hooks": [theirs]}]},
    }


@pytest.mark.slow
def test_the_command_line(isolated_home: Path) -> None:
    r = subprocess.run([sjc_exe(), "install", "gemini"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    hooks = json.loads((ext(isolated_home) / "hooks" / "hooks.json").read_text())
    command = hooks["hooks"]["BeforeModel"][0]["hooks"][0]["command"]
    assert command.endswith("sjc-hook gemini") and Path(command.split()[0]).is_absolute()
    r = subprocess.run([sjc_exe(), "install", "gemini", "--trust"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--trust is for codex" in r.stderr
    r = subprocess.run([sjc_exe(), "uninstall", "gemini"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not ext(isolated_home).exists()
