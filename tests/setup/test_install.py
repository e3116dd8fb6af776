from __future__ import annotations

import json
import subprocess

from sjc_mcp.setup.hook_entries import EVENTS, hook_block
from tests.conftest import ROOT, sjc_exe


def sjc(*args, home):
    import os

    env = dict(os.environ, HOME=str(home))
    env.pop("CODEX_HOME", None)
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, env=env, timeout=60)


def test_install_merges_keeps_unrelated_and_uninstall_restores(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {
            "PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "echo mine"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
        },
    }
    settings.write_text(json.dumps(original, indent=2))
    dry = sjc("install", "claude-code", "--dry-run", home=tmp_path)
    assert dry.returncode == 0 and json.loads(settings.read_text()) == original
    r = sjc("install", "claude-code", home=tmp_path)
    assert r.returncode == 0 and "installed" in r.stdout
    after = json.loads(settings.read_text())
    assert after["model"] == "opus" and after["permissions"] == original["permissions"]
    assert after["hooks"]["Stop"] == original["hooks"]["Stop"]
    pre = after["hooks"]["PreCompact"]
    assert pre[0] == original["hooks"]["PreCompact"][0] and "sjc" in pre[1]["hooks"][0]["command"]
    for event, matcher in EVENTS["claude-code"].items():  # each event once, with its matcher (or none)
        ours = [g for g in after["hooks"][event] if any("sjc" in h["command"] for h in g["hooks"])]
        assert len(ours) == 1 and ours[0].get("matcher") == matcher
    assert list(tmp_path.joinpath(".claude").glob("settings.json.sjc-backup-*"))
    again = sjc("install", "claude-code", home=tmp_path)
    assert "already installed" in again.stdout and json.loads(settings.read_text()) == after
    out = sjc("uninstall", "claude-code", home=tmp_path)
    assert out.returncode == 0 and json.loads(settings.read_text()) == original


def test_codex_install_into_empty_home_and_back(tmp_path):
    r = sjc("install", "codex", home=tmp_path)
    hooks = json.loads((tmp_path / ".codex" / "hooks.json").read_text())
    assert r.returncode == 0 and set(hooks["hooks"]) == {"PostCompact", "SessionStart", "UserPromptSubmit"}
    assert hooks["hooks"]["SessionStart"][0]["matcher"] == "compact"
    assert "only after it is trusted" in r.stdout and "--trust" in r.stdout
    sjc("uninstall", "codex", home=tmp_path)
    assert not (tmp_path / ".codex" / "hooks.json").exists()


def test_broken_settings_is_a_clear_error(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{oops")
    r = sjc("install", "claude-code", home=tmp_path)
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    assert (tmp_path / ".claude" / "settings.json").read_text() == "{oops"


def test_shipped_hook_files_match_what_install_writes():
    hooks = ROOT / "hooks"
    assert json.loads((hooks / "claude-code-settings.json").read_text())["hooks"] == hook_block(
        "claude-code", "sjc-hook"
    )
    plugin_hooks = ROOT / "plugin" / "hooks"
    plugin = json.loads((plugin_hooks / "hooks.json").read_text())["hooks"]
    assert plugin == hook_block("claude-code", '"${CLAUDE_PLUGIN_ROOT}/hooks/sjc-hook"')
    assert (plugin_hooks / "sjc-hook").stat().st_mode & 0o111


def test_shipped_codex_hooks_file_matches_what_install_writes():
    assert json.loads((ROOT / "hooks" / "codex-hooks.json").read_text())["hooks"] == hook_block("codex", "sjc-hook")


def test_backups_are_never_overwritten(isolated_home, monkeypatch):
    """Install, a change of the user's, uninstall, install again within one second: every backup keeps what it
    backed up (uninstall removes only the backups that hold nothing the file does not hold now, besides
    sjc's own entries: here its own, of the file with the hooks)."""
    from sjc_mcp.setup import install as inst
    from sjc_mcp.setup import settings_file

    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '{"model": "opus", "hooks": {}}\n'
    settings.write_text(original)
    monkeypatch.setattr(settings_file.time, "strftime", lambda fmt: "20261130-120000")  # all within one second
    inst.install("claude-code", "user", command="/x/sjc-hook")
    settings.write_text(settings.read_text().replace('"opus"', '"sonnet"'))
    inst.uninstall("claude-code", "user")
    inst.install("claude-code", "user", command="/x/sjc-hook")
    backups = sorted(settings.parent.glob("settings.json.sjc-backup-*"))
    assert [b.name for b in backups] == [
        "settings.json.sjc-backup-20261130-120000",
        "settings.json.sjc-backup-20261130-120000-2",
    ]
    assert backups[0].read_text() == original  # the first backup still holds the user's own settings
    assert '"sonnet"' in backups[1].read_text() and "sjc-hook" not in backups[1].read_text()


def test_install_over_an_older_install_replaces_its_stale_events(isolated_home):
    """An older sjc installed SessionStart(compact); installing this version takes it out, keeps foreign hooks."""
    from sjc_mcp.setup import install as inst

    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    old = {
        "hooks": {
            "SessionStart": [
                {"matcher": "compact", "hooks": [{"type": "command", "command": "/old/sjc hook claude-code"}]},
                {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]},
            ],
            "PostCompact": [
                {
                    "matcher": "manual|auto",
                    "hooks": [{"type": "command", "command": "/old/sjc hook claude-code", "timeout": 5}],
                }
            ],
        }
    }
    settings.write_text(json.dumps(old))
    inst.install("claude-code", "user", command="/new/sjc-hook")
    now = json.loads(settings.read_text())
    assert now["hooks"]["SessionStart"] == [old["hooks"]["SessionStart"][1]]
    commands = [h["command"] for groups in now["hooks"].values() for g in groups for h in g["hooks"]]
    assert "/old/sjc hook claude-code" not in commands and "/new/sjc-hook claude-code" in commands
    before = settings.read_text()
    inst.install("claude-code", "user", command="/new/sjc-hook")  # again: nothing changes
    assert settings.read_text() == before
