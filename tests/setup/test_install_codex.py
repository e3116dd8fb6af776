"""``sjc install codex`` / ``sjc uninstall codex``: CODEX_HOME, the hooks' trust in config.toml, and a
round trip that gives back the user's files. Run as the user runs it (the ``sjc`` console script).

The trust format is Codex's own, learnt from the real CLI (0.171.0, ``codex app-server`` ``hooks/list``
and ``config/value/write``; the end-to-end tests check it again against the CLI): per hook
``[hooks.state."<canonical hooks.json path>:<event_snake>:<group>:<handler>"]`` with
``trusted_hash = "sha256:<hex>"``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sjc_mcp.setup.codex_trust import trust_hash
from tests.conftest import sjc_exe

# (event, command, timeout or None for Codex's default, matcher) -> the currentHash codex app-server reported
OBSERVED = [
    (("PostCompact", "echo a", 30, None), "d0bdd48db2d5d7e95de9082e86a430dfc4cbec0c2d20d58265bdaea00d4db193"),
    (("PostCompact", "echo a", None, None), "bd00aa3486e4a0014cc6db4f03f093022108a47ecca44a7745ce8869db735fa3"),
    (("PostCompact", "echo a", 31, None), "c756b47e73c59c16f4cefa9b47ad8f8696f597ddc42a0ed667f6d0984c8428c3"),
    (("PostCompact", "echo a", 30, "auto"), "6b8ce22c9d80cfb1f7231ab1852c4f80eeaa1a298d2b478539b568bcb27181d0"),
    (("Stop", "echo a", 30, None), "ac79670880052f2e455f977a956a072170388d07cdda7c9dfa0fb75b047e6a31"),
    (
        ("UserPromptSubmit", "/work/main/.venv/bin/sjc hook codex", 30, None),
        "fded57b302c7d59d56d8bee429588954200a6f8c0cee476a47ef936e62429752",
    ),
    (
        ("SessionStart", "/work/main/.venv/bin/sjc hook codex", 30, "compact"),
        "05a90a23fb53ca7a77c76634dff5f8d09917258dcc9519fd4b7a47bd2cfa2294",
    ),
]


@pytest.mark.parametrize(("hook", "expected"), OBSERVED, ids=lambda v: str(v)[:40])
def test_trust_hash_is_the_one_codex_computes(hook, expected):
    event, command, timeout, matcher = hook
    handler = {"type": "command", "command": command} | ({} if timeout is None else {"timeout": timeout})
    assert trust_hash(event, handler, matcher) == f"sha256:{expected}"


class Env:
    def __init__(self, tmp: Path, codex_home: Path | None = None) -> None:
        self.home = tmp / "home"
        self.codex_home = codex_home or tmp / "codex-home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self.hooks = self.codex_home / "hooks.json"
        self.config = self.codex_home / "config.toml"

    def sjc(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, HOME=str(self.home), CODEX_HOME=str(self.codex_home))
        return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, env=env, timeout=60, cwd=cwd)


def trust_state(config: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})


OURS = {"PostCompact", "SessionStart", "UserPromptSubmit"}
CONFIG = 'model = "gpt-5"\n# my comment\n\n[projects."/src/app"]\ntrust_level = "trusted"\n'


def test_install_honours_codex_home_and_says_hooks_need_trust(tmp_path):
    e = Env(tmp_path)
    r = e.sjc("install", "codex")
    assert r.returncode == 0, r.stderr
    assert set(json.loads(e.hooks.read_text())["hooks"]) == OURS
    assert not (e.home / ".codex").exists()
    assert "only after it is trusted" in r.stdout and "sjc install codex --trust" in r.stdout
    assert str(e.config) in r.stdout and not e.config.exists()  # nothing trusted without --trust


def test_trust_writes_one_table_per_hook_and_uninstall_restores_both_files(tmp_path):
    e = Env(tmp_path)
    e.config.write_text(CONFIG)
    r = e.sjc("install", "codex", "--trust")
    assert r.returncode == 0, r.stderr
    text = e.config.read_text()
    assert text.startswith(CONFIG)  # the user's bytes first, untouched
    state = trust_state(e.config)
    hooks = json.loads(e.hooks.read_text())["hooks"]
    src = str(e.hooks.resolve())
    expected = {
        f"{src}:post_compact:0:0": trust_hash("PostCompact", hooks["PostCompact"][0]["hooks"][0]),
        f"{src}:session_start:0:0": trust_hash("SessionStart", hooks["SessionStart"][0]["hooks"][0], "compact"),
        f"{src}:user_prompt_submit:0:0": trust_hash("UserPromptSubmit", hooks["UserPromptSubmit"][0]["hooks"][0]),
    }
    assert {k: v["trusted_hash"] for k, v in state.items()} == expected
    for key, digest in expected.items():  # the form Codex's own config writer uses
        assert f"\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(digest)}\n" in text
    again = e.sjc("install", "codex", "--trust")
    assert "already installed" in again.stdout and "trusted already" in again.stdout
    assert e.config.read_text() == text
    out = e.sjc("uninstall", "codex")
    assert out.returncode == 0 and "trust of 3 sjc hook(s) removed" in out.stdout
    assert e.config.read_text() == CONFIG and not e.hooks.exists()


def test_round_trip_over_a_users_own_hooks_keeps_their_trust(tmp_path):
    e = Env(tmp_path)
    mine = {"type": "command", "command": "notify-send compacted", "timeout": 5}
    user = {"hooks": {"PostCompact": [{"hooks": [mine]}]}, "x-note": "user key"}
    e.hooks.write_text(json.dumps(user, indent=1))
    src = str(e.hooks.resolve())
    mine_key = f"{src}:post_compact:0:0"
    e.config.write_text(CONFIG + f'\n[hooks.state.{json.dumps(mine_key)}]\ntrusted_hash = "sha256:mine"\n')
    assert e.sjc("install", "codex", "--trust").returncode == 0
    state = trust_state(e.config)
    assert state[mine_key]["trusted_hash"] == "sha256:mine" and f"{src}:post_compact:1:0" in state
    # the user adds a hook after ours and trusts it (at its position, 2)
    data = json.loads(e.hooks.read_text())
    later = {"type": "command", "command": "echo later"}
    data["hooks"]["PostCompact"].append({"hooks": [later]})
    e.hooks.write_text(json.dumps(data))
    with e.config.open("a") as fh:
        fh.write(f'\n[hooks.state."{src}:post_compact:2:0"]\ntrusted_hash = "sha256:later"\nenabled = true\n')
    r = e.sjc("uninstall", "codex")
    assert r.returncode == 0, r.stderr
    back = json.loads(e.hooks.read_text())
    assert back == {"hooks": {"PostCompact": [{"hooks": [mine]}, {"hooks": [later]}]}, "x-note": "user key"}
    state = trust_state(e.config)
    # ours gone; the later hook moved from position 2 to 1 and its trust moved with it
    assert state == {
        mine_key: {"trusted_hash": "sha256:mine"},
        f"{src}:post_compact:1:0": {"trusted_hash": "sha256:later", "enabled": True},
    }


def test_a_changed_command_gets_its_hash_replaced(tmp_path):
    e = Env(tmp_path)
    assert e.sjc("install", "codex", "--trust").returncode == 0
    key = next(k for k in trust_state(e.config) if ":session_start:" in k)
    good = trust_state(e.config)[key]["trusted_hash"]
    # as if the hook had been trusted for another command; the user's own key in that table stays
    stale = e.config.read_text().replace(
        f'trusted_hash = "{good}"\n', 'trusted_hash = "sha256:stale"\nenabled = true\n'
    )
    e.config.write_text(stale + "# end\n")
    r = e.sjc("install", "codex", "--trust")
    assert r.returncode == 0 and "trusted 1 sjc hook(s)" in r.stdout
    assert trust_state(e.config)[key] == {"trusted_hash": good, "enabled": True}
    assert e.config.read_text().endswith("# end\n")


def test_dry_run_changes_nothing(tmp_path):
    e = Env(tmp_path)
    e.config.write_text(CONFIG)
    r = e.sjc("install", "codex", "--trust", "--dry-run")
    assert r.returncode == 0 and "would add" in r.stdout and "[hooks.state." in r.stdout
    assert e.config.read_text() == CONFIG and not e.hooks.exists()


def test_unreadable_config_is_a_clear_error_and_nothing_is_written(tmp_path):
    e = Env(tmp_path)
    e.config.write_text("model = \n")
    r = e.sjc("install", "codex", "--trust")
    assert r.returncode == 2 and "not valid TOML" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not e.hooks.exists() and e.config.read_text() == "model = \n"


def test_trust_in_a_form_sjc_does_not_edit(tmp_path):
    e = Env(tmp_path)
    assert e.sjc("install", "codex").returncode == 0
    key = f"{e.hooks.resolve()}:post_compact:0:0"
    e.config.write_text(f'[hooks.state]\n{json.dumps(key)} = {{ trusted_hash = "sha256:other" }}\n')
    r = e.sjc("install", "codex", "--trust")
    assert r.returncode == 2 and "/hooks" in r.stderr


def test_symlinked_codex_home_is_named_by_its_real_path(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    e = Env(tmp_path, codex_home=tmp_path / "link")
    assert e.sjc("install", "codex", "--trust").returncode == 0
    assert all(k.startswith(f"{real / 'hooks.json'}:") for k in trust_state(e.config))


def test_project_scope(tmp_path):
    e = Env(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    r = e.sjc("install", "codex", "--scope", "project", "--trust", cwd=project)
    assert r.returncode == 0, r.stderr
    # Codex 0.171.0 lists a project's hooks only once the project is trusted (seen with app-server hooks/list)
    assert "only once the project is trusted" in r.stdout
    e.config.write_text(
        e.config.read_text() + f'\n[projects.{json.dumps(str(project.resolve()))}]\ntrust_level = "trusted"\n'
    )
    assert "project is trusted" not in e.sjc("install", "codex", "--scope", "project", cwd=project).stdout
    hooks = project / ".codex" / "hooks.json"
    assert set(json.loads(hooks.read_text())["hooks"]) == OURS and not e.hooks.exists()
    assert all(k.startswith(f"{hooks.resolve()}:") for k in trust_state(e.config))  # trust lives in CODEX_HOME
    assert e.sjc("uninstall", "codex", "--scope", "project", cwd=project).returncode == 0
    assert not hooks.exists() and set(trust_state(e.config)) == set()


def test_trust_is_for_codex_only(tmp_path):
    r = Env(tmp_path).sjc("install", "claude-code", "--trust")
    assert r.returncode == 2 and "--trust is for codex" in r.stderr


def test_allowed_roots_follow_codex_home(tmp_path, monkeypatch):
    from sjc_mcp.config import Config
    from sjc_mcp.errors import InputError
    from sjc_mcp.server.roots import check_allowed

    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert "~/.codex/sessions" in Config().allowed_roots
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    config = Config()
    assert str(tmp_path / "ch" / "sessions") in config.allowed_roots
    rollout = tmp_path / "ch" / "sessions" / "2026" / "rollout-x.jsonl"
    assert check_allowed(str(rollout), config, cwd=str(tmp_path / "elsewhere")) == rollout
    with pytest.raises(InputError):
        check_allowed(str(tmp_path / "other" / "rollout-x.jsonl"), config, cwd=str(tmp_path / "elsewhere"))
