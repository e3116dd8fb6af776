"""sjc on PATH in one command, as ``docs/install.md`` says: ``uv tool install`` or ``pipx install`` of a clone, of a
git URL, or of the package name; and what such an install does for the rest of the set-up: the hook entries
``sjc install`` writes, and ``sjc doctor``'s fix lines, each run as printed.

Facts, each checked below (uv 0.13.9, pipx 1.18.4, Python 3.11):

- ``uv tool install PATH|git+URL|NAME`` and ``pipx install PATH|git+URL`` build a wheel, install it into a venv
  of their own (``~/.local/share/uv/tools/sjc-mcp``, ``~/.local/share/pipx/venvs/sjc-mcp``) and link
  ``sjc``, ``sjc-hook`` and ``sjc-mcp`` into ``~/.local/bin``; uv prints ``Installed 3 executables: sjc,
  sjc-hook, sjc-mcp``. Nothing runs from the clone afterwards: with the clone deleted, ``sjc-mcp`` answers.
- With ``~/.local/bin`` not on PATH, uv says so and, when ``SHELL`` names the user's shell, names
  ``uv tool update-shell`` (with no ``SHELL`` it only warns); pipx names ``pipx ensurepath``.
- uv records where it installed from (``uv-receipt.toml``: the folder, or the git URL). Installing again over
  it (``uv tool install --reinstall PATH``, ``pipx install --force PATH``) takes the clone's files as they
  are now and keeps every path.
- ``sjc install claude-code`` run from such an install (uv or pipx) writes ``<tool venv>/bin/sjc-hook
  claude-code``: the real file behind the ``~/.local/bin`` link, which runs under any PATH.
- ``sjc doctor`` names this install's commands in its fixes: the bare name when it is the one on PATH, else the
  absolute path; ``claude mcp add`` always gets ``sjc-mcp``'s absolute path (run as printed, the server answers).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import hostcli
import pytest
from tool_install import SYSTEM_PATH, Served, check_on_path, clone, installer, run, serve, tool_bin, user_env

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # type: ignore[no-redef]

pytestmark = pytest.mark.e2e

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture(scope="module")
def uv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installer(tmp_path_factory.mktemp("installers"), "uv")


@pytest.fixture(scope="module")
def pipx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installer(tmp_path_factory.mktemp("installers"), "pipx")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("git")
    s = serve(clone(base / "src"), base / "repos")
    yield s
    s.close()


def fresh_home(tmp_path: Path, name: str = "home") -> Path:
    home = tmp_path / name
    home.mkdir()
    return home


def answers_initialize(exe: Path, env: dict[str, str]) -> dict[str, object]:
    r = subprocess.run(
        [str(exe)], input=json.dumps(INITIALIZE) + "\n", env=env, capture_output=True, text=True, timeout=60
    )
    for line in r.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("id") == 1:
            return dict(msg["result"]["serverInfo"])
    pytest.fail(f"{exe} gave no initialize answer: {r.stdout[-500:]} {r.stderr[-800:]}")


def test_uv_tool_install_from_a_clone(uv: Path, tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    src = clone(tmp_path / "sjc-mcp")
    # a user whose ~/.local/bin is not on PATH yet: uv installs and says how to put it there
    r = run([str(uv), "tool", "install", str(src)], user_env(home, path=SYSTEM_PATH))
    out = r.stdout + r.stderr
    assert "Installed 3 executables: sjc, sjc-hook, sjc-mcp" in out, out
    assert "is not on your PATH" in out and "uv tool update-shell" in out, out
    check_on_path(home, "uv")
    receipt = tomllib.loads((tool_bin(home, "uv").parent / "uv-receipt.toml").read_text())
    assert receipt["tool"]["requirements"] == [{"name": "sjc-mcp", "directory": str(src)}]

    env = user_env(home)
    r = run(["sjc", "--version"], env)
    assert r.stdout.strip() == "sjc 0.1.0"
    # the README's first prune, from the clone's examples, with the sjc on PATH
    examples = src / "examples"
    r = run(
        [
            "sjc",
            "prune",
            "--summary",
            str(examples / "summary.md"),
            "--evidence",
            *sorted(str(p) for p in (examples / "outputs").glob("*.txt")),
            "--evidence-jsonl",
            str(examples / "user-messages.jsonl"),
        ],
        env,
    )
    assert "entries" in r.stderr + r.stdout
    # upgrading (docs/install.md): install again over it from the clone; the same paths, the clone's new files
    site = next(tool_bin(home, "uv").parent.glob("lib/python3*/site-packages/sjc_mcp"))
    (src / "sjc_mcp" / "paths.py").write_text((src / "sjc_mcp" / "paths.py").read_text() + "# pulled\n")
    assert "# pulled" not in (site / "paths.py").read_text()
    run([str(uv), "tool", "install", "--reinstall", str(src)], env)
    check_on_path(home, "uv")
    assert (site / "paths.py").read_text().endswith("# pulled\n")
    # nothing runs from the clone: gone, the server still answers
    shutil.rmtree(src)
    assert answers_initialize(home / ".local" / "bin" / "sjc-mcp", env)["name"] == "sjc-mcp"


def test_uv_tool_install_from_a_git_url(uv: Path, served: Served, tmp_path: Path) -> None:
    home = fresh_home(tmp_path)
    n = len(served.server.hits)
    r = run([str(uv), "tool", "install", f"git+{served.url}"], user_env(home))
    assert "Installed 3 executables: sjc, sjc-hook, sjc-mcp" in r.stdout + r.stderr
    assert any("git-upload-pack" in h for h in served.server.hits[n:]), served.server.hits
    check_on_path(home, "uv")
    receipt = tomllib.loads((tool_bin(home, "uv").parent / "uv-receipt.toml").read_text())
    assert receipt["tool"]["requirements"] == [{"name": "sjc-mcp", "git": served.url}]
    assert answers_initialize(home / ".local" / "bin" / "sjc-mcp", user_env(home))["name"] == "sjc-mcp"


def test_pipx_install_from_a_clone_and_a_git_url(pipx: Path, served: Served, tmp_path: Path) -> None:
    src = clone(tmp_path / "sjc-mcp")
    for name, spec in (("from-clone", str(src)), ("from-git", f"git+{served.url}")):
        home = fresh_home(tmp_path, name)
        r = run([str(pipx), "install", spec], user_env(home, path=f"{pipx.parent}:{SYSTEM_PATH}"))
        out = " ".join((r.stdout + r.stderr).split())  # pipx wraps its lines
        assert "installed package sjc-mcp 0.1.0" in out, out
        assert "is not on your PATH" in out and "Run `pipx ensurepath`" in out, out  # ~/.local/bin was not
        check_on_path(home, "pipx")
        assert run(["sjc", "--version"], user_env(home)).stdout.strip() == "sjc 0.1.0"
    # the hook entries sjc install writes run the sjc-hook in pipx's venv, by its path
    first = tmp_path / "from-clone"
    run(["sjc", "install", "claude-code"], user_env(first))
    settings = json.loads((first / ".claude" / "settings.json").read_text())
    commands = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    assert commands == {f"{tool_bin(first, 'pipx') / 'sjc-hook'} claude-code"}, commands
    # upgrading: pipx install --force over it, the same paths, the clone's new files
    site = next(tool_bin(first, "pipx").parent.glob("lib/python3*/site-packages/sjc_mcp"))
    (src / "sjc_mcp" / "paths.py").write_text((src / "sjc_mcp" / "paths.py").read_text() + "# pulled\n")
    run([str(pipx), "install", "--force", str(src)], user_env(first, path=f"{pipx.parent}:{SYSTEM_PATH}"))
    check_on_path(first, "pipx")
    assert (site / "paths.py").read_text().endswith("# pulled\n")
    shutil.rmtree(src)
    assert answers_initialize(first / ".local" / "bin" / "sjc-mcp", user_env(first))["name"] == "sjc-mcp"


def test_the_published_name_line(uv: Path, tmp_path: Path) -> None:
    """``uv tool install sjc-mcp``, with the wheel built from the checkout standing in for PyPI's."""
    src = clone(tmp_path / "sjc-mcp")
    home = fresh_home(tmp_path)
    env = user_env(home)
    run([str(uv), "build", "--wheel", "-o", str(tmp_path / "dist"), str(src)], env)
    (wheel,) = (tmp_path / "dist").glob("sjc_mcp-0.1.0-*.whl")
    r = run([str(uv), "tool", "install", "sjc-mcp==0.1.0", "--find-links", str(wheel.parent)], env)
    assert "Installed 3 executables: sjc, sjc-hook, sjc-mcp" in r.stdout + r.stderr
    check_on_path(home, "uv")
    assert run(["sjc", "--version"], env).stdout.strip() == "sjc 0.1.0"


def doctor_lines(sjc: str, env: dict[str, str]) -> dict[str, str]:
    """``sjc doctor``'s Claude Code lines: what each says -> its fix."""
    r = subprocess.run([sjc, "doctor"], env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=120)
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] == "claude-code":
            what, _, fix = parts[2].partition(" — fix: ")
            out[what] = fix
    return out


def test_hook_entries_and_doctor_fixes_of_a_tool_install(uv: Path, tmp_path: Path) -> None:
    claude = hostcli.claude_code()
    home = fresh_home(tmp_path)
    run([str(uv), "tool", "install", str(clone(tmp_path / "sjc-mcp"))], user_env(home))
    (home / ".claude").mkdir()
    local_bin = home / ".local" / "bin"

    # run by its path, with ~/.local/bin not on PATH: every fix names this install's commands by their path
    lines = doctor_lines(str(local_bin / "sjc"), user_env(home, path=SYSTEM_PATH))
    assert lines["hooks not installed"] == f"{local_bin / 'sjc'} install claude-code", lines
    add = f"claude mcp add --scope user sjc -- {local_bin / 'sjc-mcp'}"
    assert lines["MCP server not registered (optional)"] == add, lines

    # on PATH: the bare name, as the docs write it; run each fix as printed
    env = user_env(home, path=f"{local_bin}:{claude.parent}:{SYSTEM_PATH}")
    lines = doctor_lines("sjc", env)
    assert lines["hooks not installed"] == "sjc install claude-code", lines
    run(["sh", "-c", lines["hooks not installed"]], env)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    commands = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    hook = tool_bin(home, "uv") / "sjc-hook"
    assert commands == {f"{hook} claude-code"}, commands
    # the entry runs under any PATH, as Claude Code runs it (sh -c, the hook JSON on stdin)
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "hello", "cwd": str(home)}
    r = subprocess.run(
        ["sh", "-c", f"{hook} claude-code"],
        input=json.dumps(payload),
        env=user_env(home, path="/usr/bin:/bin"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr

    offline = hostcli.offline_env(home)
    offline["PATH"] = env["PATH"]
    assert lines["MCP server not registered (optional)"] == add, lines
    run(["sh", "-c", add], offline)
    lines = doctor_lines("sjc", env)
    assert "hooks installed (" in " ".join(lines), lines
    registered = [w for w in lines if w.startswith("MCP server sjc registered: sjc-mcp answered initialize")]
    assert registered and lines[registered[0]] == "", lines
