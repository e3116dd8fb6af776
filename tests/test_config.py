from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from sjc_mcp import paths
from sjc_mcp.config import load_config
from sjc_mcp.errors import ConfigError


def test_defaults_without_any_file():
    c = load_config(env={})
    assert (c.judge, c.threshold, c.margin, c.mode, c.allow_remote) == ("lexical", 0.5, 0.05, "enforce", False)
    assert c.retrieval.passage_chars == 300 and c.retrieval.top_k == 3 and c.retrieval.chunk_chars == 2000
    assert c.sources == ["tool_output", "user_message", "previous_summary"]
    assert c.disabled() is None


def test_file_then_env_precedence(tmp_path, isolated_home):
    f = tmp_path / "c.toml"
    f.write_text('threshold = 0.7\nmode = "shadow"\n[retrieval]\ntop_k = 5\n')
    c = load_config(f, env={})
    assert (c.threshold, c.mode, c.retrieval.top_k) == (0.7, "shadow", 5)
    c = load_config(env={"SJC_CONFIG": str(f), "SJC_THRESHOLD": "0.3", "SJC_MODE": "enforce"})
    assert (c.threshold, c.mode) == (0.3, "enforce")
    home_cfg = isolated_home / ".config" / "sjc" / "config.toml"
    home_cfg.parent.mkdir(parents=True)
    home_cfg.write_text("threshold = 0.6\n")
    assert load_config(env={}).threshold == 0.6
    assert load_config(env={"SJC_DISABLE": "1"}).disabled() == "SJC_DISABLE=1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("treshold = 0.5\n", "unknown key 'treshold'"),
        ("threshold = 2\n", "threshold"),
        ('mode = "loud"\n', "mode"),
        ("[retrieval]\ntop_n = 3\n", "unknown key 'retrieval.top_n'"),
        ("threshold = \n", "not valid TOML"),
        ('sources = ["tool_output", "assistant"]\n', "sources"),
    ],
)
def test_bad_config_is_one_clear_line(tmp_path, text, message):
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(f, env={})
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_missing_file_and_bad_env(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", env={})
    with pytest.raises(ConfigError, match="SJC_THRESHOLD"):
        load_config(env={"SJC_THRESHOLD": "high"})


def test_example_config_is_valid_and_documents_every_key():
    from pathlib import Path

    from sjc_mcp.config import Config

    example = Path(__file__).resolve().parents[1] / "config.example.toml"
    c = load_config(example, env={})
    text = example.read_text()
    for key in Config().settings():
        assert key in text, key
    from sjc_mcp.config import ToolsConfig

    for f in dataclasses.fields(ToolsConfig):
        assert f"\n{f.name} = " in text, f.name
    assert c.settings() == Config().settings()  # the example shows the defaults


def test_default_paths_follow_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    c = load_config(env={})
    assert c.kill_switch_path == tmp_path / "cfg" / "sjc" / "disabled"
    assert c.decision_log_path == tmp_path / "state" / "sjc" / "decisions.jsonl"
    (tmp_path / "cfg" / "sjc").mkdir(parents=True)
    (tmp_path / "cfg" / "sjc" / "config.toml").write_text("threshold = 0.3\n")
    assert load_config(env={}).threshold == 0.3
    (tmp_path / "cfg" / "sjc" / "disabled").touch()
    assert "kill switch" in (load_config(env={}).disabled() or "")


def test_default_paths_without_xdg_are_under_home(isolated_home):
    c = load_config(env={})
    assert c.kill_switch_path == isolated_home / ".config" / "sjc" / "disabled"
    assert c.decision_log_path == isolated_home / ".local" / "state" / "sjc" / "decisions.jsonl"


@pytest.mark.skipif(not paths._XDG, reason="sjc reads the XDG variables itself only on Linux and the BSDs")
@pytest.mark.parametrize("xdg", [None, "", "relative/dir", "/abs/xdg", "/abs/xdg/"])
@pytest.mark.parametrize("home", ["/home/u", "/home/u/", "relative-home", None])
def test_default_folders_are_the_ones_platformdirs_gives(monkeypatch, xdg, home):
    import platformdirs

    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)
    if home is not None:
        monkeypatch.setenv("HOME", home)
    if xdg is not None:
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
        monkeypatch.setenv("XDG_STATE_HOME", xdg + "-state" if xdg else xdg)
    assert paths.config_dir() == platformdirs.user_config_path("sjc", appauthor=False)
    assert paths.state_dir() == platformdirs.user_state_path("sjc", appauthor=False)


def test_a_command_finds_its_config_and_log_without_importing_platformdirs(tmp_path):
    code = (
        "import sys\nfrom sjc_mcp.config import load_config\nc = load_config()\n"
        "print(c.decision_log_path, c.kill_switch_path, 'platformdirs' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "SJC_"))}
    env["HOME"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    log, kill, imported = r.stdout.split()
    assert log == str(tmp_path / ".local" / "state" / "sjc" / "decisions.jsonl")
    assert kill == str(tmp_path / ".config" / "sjc" / "disabled")
    assert imported == ("False" if paths._XDG else "True")
