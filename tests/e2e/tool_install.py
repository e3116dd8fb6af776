"""sjc installed as its docs tell a user to: ``uv tool install`` or ``pipx install`` of a clone, a git URL or the
package name, into a throw-away HOME; afterwards PATH holds that HOME's ``~/.local/bin`` and the system's
folders, never the venv running the tests.

uv and pipx come from PyPI, pinned, into throw-away venvs of their own (pipx apart from uv, so it installs
with pip, as it does where uv is absent). Their downloads are cached in ``$SJC_E2E_CACHE`` (``pip/``, ``uv/``),
so only a first run fetches packages. ``SJC_E2E=0`` skips these tests; so does a machine where uv or pipx
cannot be installed from PyPI, saying why. A git URL is a bare repository on 127.0.0.1 served with git's
smart HTTP protocol (``cc_plugin_fake.GitHttp``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import hostcli
import pytest
from cc_plugin_fake import GitHttp

UV_VERSION = os.environ.get("SJC_E2E_UV", "0.13.9")
PIPX_VERSION = os.environ.get("SJC_E2E_PIPX", "1.18.4")

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
EXECUTABLES = ("sjc", "sjc-hook", "sjc-mcp")
INSTALL_TIMEOUT = 900
# what a clone does not hold: ignored files of the working tree
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache", ".ruff_cache", "*.so", "out"
)


def _system_python() -> str:
    return shutil.which("python3", path=SYSTEM_PATH) or sys.executable


def installer(base: Path, name: str) -> Path:
    """``uv`` or ``pipx`` (the pinned version) from PyPI, in a venv of its own under ``base``: its command."""
    if os.environ.get("SJC_E2E") == "0":
        pytest.skip("SJC_E2E=0: end-to-end tests switched off")
    version = {"uv": UV_VERSION, "pipx": PIPX_VERSION}[name]
    venv = base / f"{name}-{version}"
    subprocess.run([_system_python(), "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{name}=={version}"],
        env=user_env(base),
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
    )
    if r.returncode != 0:
        pytest.skip(f"{name}=={version} cannot be installed from PyPI here: {r.stderr.strip()[-400:]}")
    return venv / "bin" / name


def user_path(home: Path) -> str:
    """A user's PATH after the install: ``~/.local/bin`` (where uv and pipx put the commands), the system."""
    return f"{home / '.local' / 'bin'}{os.pathsep}{SYSTEM_PATH}"


def user_env(home: Path, path: str | None = None) -> dict[str, str]:
    """The environment of a user whose HOME is ``home``: the machine's (its certificates, its pip settings),
    without anything of sjc's, of a venv or of the test run's Python, and with the e2e download cache. A login
    shell sets ``SHELL``; a CI runner may not, and uv names ``uv tool update-shell`` only when it knows the
    shell, so the user here has bash (the machine's ``SHELL`` when it has one)."""
    drop = ("SJC_", "XDG_", "UV_", "PIPX_", "VIRTUAL_ENV", "PYTHON", "CONDA", "PYENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        HOME=str(home),
        SHELL=os.environ.get("SHELL") or "/bin/bash",
        PATH=path or user_path(home),
        UV_CACHE_DIR=str(hostcli.CACHE / "uv"),
        PIP_CACHE_DIR=str(hostcli.CACHE / "pip"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


def run(cmd: list[str], env: dict[str, str], timeout: float = INSTALL_TIMEOUT) -> subprocess.CompletedProcess[str]:
    try:
        r = subprocess.run(cmd, env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} ran past {timeout}s: {str(exc.stderr)[-1500:]}")
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {r.returncode}: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    return r


def clone(dest: Path) -> Path:
    """The checkout's files as a clone holds them (tracked and new files; nothing ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    if listed.returncode != 0:  # not a git work tree: copy everything a clone would not leave out
        shutil.copytree(ROOT, dest, ignore=NOT_IN_A_CLONE, symlinks=True)
        return dest
    dest.mkdir(parents=True)
    for rel in filter(None, listed.stdout.decode().split("\0")):
        src = ROOT / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel, follow_symlinks=False)
    return dest


def git_repo(src: Path, bare: Path) -> str:
    """``src`` committed into a bare repository ``bare``; the commit's id."""
    git = ["git", "-c", "user.name=sjc", "-c", "user.email=sjc@example.invalid", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sjc-mcp"]):
        subprocess.run([*git, *args], cwd=src, check=True, capture_output=True, timeout=60)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True, capture_output=True, timeout=60)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=bare, check=True, capture_output=True, text=True, timeout=30
    ).stdout.strip()


@dataclass
class Served:
    """A clone of the checkout as ``{url}`` (git smart HTTP on 127.0.0.1), committed as ``sha``."""

    server: GitHttp
    url: str
    sha: str

    def close(self) -> None:
        self.server.close()


def serve(src: Path, repos: Path, name: str = "sjc-mcp") -> Served:
    repos.mkdir(parents=True, exist_ok=True)
    sha = git_repo(src, repos / f"{name}.git")
    server = GitHttp(repos)
    return Served(server, f"{server.url}/{name}.git", sha)


def tool_bin(home: Path, tool: str) -> Path:
    """Where uv or pipx keeps the commands' real files (``~/.local/bin`` holds links to them)."""
    data = home / ".local" / "share"
    return (data / "uv" / "tools" / "sjc-mcp" if tool == "uv" else data / "pipx" / "venvs" / "sjc-mcp") / "bin"


def check_on_path(home: Path, tool: str) -> None:
    """The three commands in ``~/.local/bin``, each a link into the tool's own venv, found on the user's PATH."""
    for name in EXECUTABLES:
        link = home / ".local" / "bin" / name
        assert link.is_symlink(), f"{link} is not there"
        assert link.resolve() == (tool_bin(home, tool) / name).resolve(), link.resolve()
        assert shutil.which(name, path=user_path(home)) == str(link)
        assert not str(link.resolve()).startswith(str(ROOT)), "installed into the checkout"
