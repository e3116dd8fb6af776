"""``sjc install hermes`` / ``sjc uninstall hermes`` on a throw-away HERMES_HOME: the plugin's files, Hermes'
config.yaml edited in place (comments and indentation kept), and put back byte for byte.

What Hermes makes of the result is shown in the real Hermes: tests/e2e/test_hermes_plugin.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sjc_mcp.errors import InputError
from sjc_mcp.setup import hermes

CONFIG = """\
# my Hermes settings
model:
  provider: custom   # a local server
  base_url: "http://127.0.0.1:8080/v1"
  default: my-model
toolsets:
- terminal
- web

compression:
  enabled: true
  threshold: 0.50
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "hermes-home"
    h.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(h))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return h


def load(path: Path) -> dict:
    from ruamel.yaml import YAML

    return dict(YAML(typ="safe").load(path.read_text()) or {})


def test_install_enables_the_engine_and_keeps_everything_else(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text(CONFIG)
    _, message = hermes.install()
    text = cfg.read_text()
    assert text.startswith(CONFIG)  # the user's lines, comments and blank line kept as they were
    data = load(cfg)
    assert data["plugins"]["enabled"] == ["sjc"] and data["context"]["engine"] == "sjc"
    assert "sjc's context engine enabled (backup:" in message
    backups = list(home.glob("config.yaml.sjc-backup-*"))
    assert len(backups) == 1 and backups[0].read_text() == CONFIG
    folder = home / "plugins" / "sjc"
    assert {p.name for p in folder.iterdir()} >= {*hermes.FILES, "sjc.json", "install.json"}
    settings = json.loads((folder / "sjc.json").read_text())
    assert settings["v"] == 1 and settings["command"][-1] == "hermes" and settings["timeout_s"] >= 30
    assert (folder / "engine.py").read_bytes() == (
        Path(hermes.__file__).parents[1] / "plugins" / "hermes" / "engine.py"
    ).read_bytes()


def test_installing_twice_changes_nothing(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text(CONFIG)
    hermes.install()
    once = cfg.read_bytes()
    _, message = hermes.install()
    assert cfg.read_bytes() == once
    assert "already enabled; nothing changed" in message and "plugin up to date" in message
    assert len(list(home.glob("config.yaml.sjc-backup-*"))) == 1


def test_uninstall_puts_the_config_back_byte_for_byte(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text(CONFIG)
    hermes.install()
    _, message = hermes.uninstall()
    assert cfg.read_text() == CONFIG
    assert not (home / "plugins" / "sjc").exists()
    assert "put back as it was before sjc install" in message


def test_uninstall_after_the_user_changed_the_config_takes_out_only_sjc(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text(CONFIG + "plugins:\n  enabled:\n  - disk-cleanup\ncontext:\n  engine: compressor\n")
    hermes.install()
    data = load(cfg)
    assert data["plugins"]["enabled"] == ["disk-cleanup", "sjc"] and data["context"]["engine"] == "sjc"
    cfg.write_text(cfg.read_text().replace("threshold: 0.50", "threshold: 0.70"))
    hermes.uninstall()
    after = cfg.read_text()
    assert "threshold: 0.70" in after  # the user's later change stays
    data = load(cfg)
    assert data["plugins"]["enabled"] == ["disk-cleanup"] and data["context"]["engine"] == "compressor"


def test_a_config_made_by_install_is_removed_by_uninstall(home: Path) -> None:
    hermes.install()
    cfg = home / "config.yaml"
    assert load(cfg) == {"plugins": {"enabled": ["sjc"]}, "context": {"engine": "sjc"}}
    hermes.uninstall()
    assert not cfg.exists()


def test_sjc_disabled_by_the_user_is_enabled_and_disabled_again(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text("plugins:\n  enabled: []\n  disabled: [sjc, other]\n")
    hermes.install()
    data = load(cfg)
    assert data["plugins"] == {"enabled": ["sjc"], "disabled": ["other"]}
    cfg.write_text(cfg.read_text() + "agent:\n  api_max_retries: 2\n")
    hermes.uninstall()
    data = load(cfg)
    assert data["plugins"] == {"enabled": [], "disabled": ["other", "sjc"]}
    assert data["agent"] == {"api_max_retries": 2}


def test_four_space_indentation_is_kept(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text("model:\n    provider: custom\ntoolsets:\n    - terminal\n")
    hermes.install()
    assert cfg.read_text() == (
        "model:\n    provider: custom\ntoolsets:\n    - terminal\nplugins:\n    enabled:\n        - sjc\n"
        "context:\n    engine: sjc\n"
    )


def test_another_context_engine_is_left_alone(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text("context:\n  engine: lcm\n")
    with pytest.raises(InputError, match=r"context\.engine is 'lcm'"):
        hermes.install()
    assert cfg.read_text() == "context:\n  engine: lcm\n"
    assert not (home / "plugins" / "sjc").exists()


def test_a_config_that_is_not_yaml_is_left_alone(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text("model: [unclosed\n")
    with pytest.raises(InputError, match="is not valid YAML"):
        hermes.install()
    assert cfg.read_text() == "model: [unclosed\n"


def test_someone_elses_plugin_named_sjc_is_left_alone(home: Path) -> None:
    folder = home / "plugins" / "sjc"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: sjc\nauthor: someone else\n")
    with pytest.raises(InputError, match="not sjc's"):
        hermes.install()
    with pytest.raises(InputError, match="not sjc's"):
        hermes.uninstall()
    assert (folder / "plugin.yaml").exists()


def test_dry_run_writes_nothing(home: Path) -> None:
    cfg = home / "config.yaml"
    cfg.write_text(CONFIG)
    _, message = hermes.install(dry_run=True)
    assert "engine: sjc" in message
    assert cfg.read_text() == CONFIG and not (home / "plugins").exists()


@pytest.mark.slow
def test_no_hermes_home_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "nowhere"), "HOME": str(tmp_path)}
    sjc = Path(sys.executable).parent / "sjc"
    r = subprocess.run([str(sjc), "install", "hermes"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "no Hermes home at" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_doctor_says_what_is_missing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # this install's sjc first on PATH: the fix names it by its bare name (else by its path)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    (home / "config.yaml").write_text(CONFIG)
    assert [(c.status, c.what) for c in hermes.doctor_checks()] == [("warn", "sjc's context engine not installed")]
    hermes.install()
    assert [c.status for c in hermes.doctor_checks()] == ["ok", "ok", "ok"]
    settings = home / "plugins" / "sjc" / "sjc.json"
    settings.write_text(json.dumps({"v": 1, "command": [str(home / "gone" / "sjc-hook"), "hermes"]}))
    (home / "config.yaml").write_text(CONFIG)
    checks = hermes.doctor_checks()
    assert [c.status for c in checks] == ["ok", "FAIL", "FAIL"]
    assert all(c.fix == "sjc install hermes" for c in checks[1:])
