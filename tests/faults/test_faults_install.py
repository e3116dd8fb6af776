"""Fault suite, settings files: ``sjc install`` then ``sjc uninstall`` (Claude Code and Codex, ``--trust``)
give back the bytes they found, with their mode and links; a settings file sjc cannot edit safely (not
UTF-8, a folder, a FIFO, a link to a device) is one line and exit 2, never a hang, nothing written."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import sjc_exe

pytestmark = pytest.mark.slow

BASE = {
    "model": "opus",
    "env": {"GREETING": "caf\u00e9 \u2014 ok"},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    "permissions": {"allow": [], "deny": {}},
}
JSON_VARIANTS = {
    "lf": json.dumps(BASE, indent=2, ensure_ascii=False) + "\n",
    "no-final-newline": json.dumps(BASE, indent=2, ensure_ascii=False),
    "crlf": (json.dumps(BASE, indent=2, ensure_ascii=False) + "\n").replace("\n", "\r\n"),
    "indent-4": json.dumps(BASE, indent=4, ensure_ascii=False) + "\n",
    "tabs": json.dumps(BASE, indent="\t", ensure_ascii=False) + "\n",
    "compact": json.dumps(BASE, separators=(",", ":"), ensure_ascii=False),
    "one-line": json.dumps(BASE, ensure_ascii=False) + "\n",
    "escaped": json.dumps(BASE, indent=2) + "\n",
    "bom": "\ufeff" + json.dumps(BASE, indent=2, ensure_ascii=False) + "\n",
    "empty-object": "{}",
    "empty-file": "",
}
TOML_VARIANTS = {
    "lf": 'model = "o3"\n\n[projects."/w"]\ntrust_level = "trusted"\n',
    "no-final-newline": 'model = "o3"\n[projects."/w"]\ntrust_level = "trusted"',
    "crlf": 'model = "o3"\r\n\r\n[projects."/w"]\r\ntrust_level = "trusted"\r\n',
    "empty-file": "",
}


def run(home: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "CODEX_HOME": str(home / ".codex")}
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, timeout=timeout, env=env)


def settings_of(home: Path, host: str) -> Path:
    return home / ".claude" / "settings.json" if host == "claude-code" else home / ".codex" / "hooks.json"


def place(path: Path, data: bytes, mode: int, link: bool) -> Path:
    """``data`` at ``path`` with ``mode``; with ``link``, in ``~/dotfiles`` with ``path`` a link to it.
    Returns the real file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    real = path
    if link:
        real = path.parent.parent / "dotfiles" / path.name
        real.parent.mkdir(exist_ok=True)
        path.symlink_to(real)
    real.write_bytes(data)
    os.chmod(real, mode)
    return real


CASES = [(name, 0o644, False) for name in JSON_VARIANTS] + [
    ("lf", 0o600, False),
    ("crlf", 0o600, True),
    ("no-final-newline", 0o640, True),
]


@pytest.mark.parametrize("host", ["claude-code", "codex"])
@pytest.mark.parametrize(
    ("variant", "mode", "link"), CASES, ids=[f"{v}-{m:o}{'-link' if k else ''}" for v, m, k in CASES]
)
def test_install_then_uninstall_gives_back_the_bytes_mode_and_link(host, variant, mode, link, tmp_path):
    home = tmp_path / "home"
    path = settings_of(home, host)
    data = JSON_VARIANTS[variant].encode()
    real = place(path, data, mode, link)
    toml = TOML_VARIANTS.get(variant, TOML_VARIANTS["lf"]).encode()
    config_path = home / ".codex" / "config.toml"
    config = place(config_path, toml, mode, link) if host == "codex" else None
    trust = ["--trust"] if host == "codex" else []
    installed = run(home, "install", host, *trust)
    assert installed.returncode == 0, installed.stderr
    assert "sjc-hook" in real.read_text(encoding="utf-8-sig")  # the hooks went in, through the link
    assert path.is_symlink() == link and stat.S_IMODE(real.stat().st_mode) == mode
    if config is not None:  # the trust went in, through the link too
        assert "trusted_hash" in config.read_text(encoding="utf-8-sig") and config_path.is_symlink() == link
    removed = run(home, "uninstall", host)
    assert removed.returncode == 0, removed.stderr
    assert path.is_symlink() == link
    assert real.read_bytes() == data
    assert stat.S_IMODE(real.stat().st_mode) == mode
    if config is not None:
        assert config.read_bytes() == toml and stat.S_IMODE(config.stat().st_mode) == mode
        assert config_path.is_symlink() == link


def test_a_settings_file_sjc_made_goes_again_at_uninstall(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    assert run(home, "install", "claude-code").returncode == 0
    assert run(home, "uninstall", "claude-code").returncode == 0
    assert not (home / ".claude" / "settings.json").exists()


def test_a_hand_edit_between_install_and_uninstall_is_kept_in_the_files_style(tmp_path):
    home = tmp_path / "home"
    path = settings_of(home, "claude-code")
    place(path, JSON_VARIANTS["crlf"].encode(), 0o600, False)
    assert run(home, "install", "claude-code").returncode == 0
    edited = json.loads(path.read_text())
    edited["model"] = "sonnet"
    path.write_bytes((json.dumps(edited, indent=2, ensure_ascii=False) + "\n").replace("\n", "\r\n").encode())
    assert run(home, "uninstall", "claude-code").returncode == 0
    want = dict(BASE, model="sonnet")
    assert path.read_bytes() == (json.dumps(want, indent=2, ensure_ascii=False) + "\n").replace("\n", "\r\n").encode()


def _bad(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        path.unlink()
    if kind == "latin-1":
        path.write_bytes('model = "caf\xe9"\n'.encode("latin-1") if path.suffix == ".toml" else b'{"m": "caf\xe9"}')
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["latin-1", "folder", "fifo", "dev-zero"])
@pytest.mark.parametrize(
    ("host", "which", "args"),
    [
        ("codex", "config.toml", ("install", "codex", "--trust")),
        ("codex", "config.toml", ("uninstall", "codex")),
        ("codex", "hooks.json", ("install", "codex")),
        ("claude-code", "settings.json", ("install", "claude-code")),
        ("claude-code", "settings.json", ("uninstall", "claude-code")),
    ],
    ids=["codex-config-install", "codex-config-uninstall", "codex-hooks", "claude-install", "claude-uninstall"],
)
def test_a_settings_file_sjc_cannot_edit_is_one_line_and_nothing_is_written(host, which, args, kind, tmp_path):
    home = tmp_path / "home"
    folder = home / (".codex" if host == "codex" else ".claude")
    folder.mkdir(parents=True)
    if args[0] == "uninstall":  # there is something to take out
        assert run(home, "install", *args[1:]).returncode == 0
    _bad(folder / which, kind)
    before = {p.name: (p.read_bytes() if p.is_file() else None) for p in folder.iterdir()}
    r = run(home, *args, timeout=20)  # a hang fails by the timeout
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert str(folder / which) in r.stderr
    after = {p.name: (p.read_bytes() if p.is_file() else None) for p in folder.iterdir()}
    assert after == before
