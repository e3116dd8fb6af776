"""Fault suite, files and ports: bad places to read from or listen on are one clear line, never a hang."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.conftest import ROOT, sjc_exe

ROOT_EX = ROOT / "examples"


def run(*args: str, home, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("listen", ["127.0.0.1:99999", "127.0.0.1:0x", "no-such-host.invalid:8787"])
def test_proxy_refuses_a_bad_listen_address_in_one_line(listen, tmp_path):
    r = run("proxy", "--listen", listen, home=tmp_path)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_proxy_on_a_port_in_use_says_so(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = run("proxy", "--listen", f"127.0.0.1:{port}", home=tmp_path)
    assert r.returncode == 2
    assert "cannot listen on" in r.stderr and "in use" in r.stderr.lower() and "Traceback" not in r.stderr


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/proc/self/environ", "folder"])
def test_prune_refuses_what_is_not_a_regular_file_at_once(target, tmp_path):
    if target == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    elif target == "folder":
        path = tmp_path
    else:
        path = target
    r = run("prune", "--summary", str(path), home=tmp_path, timeout=10)  # a hang fails by the timeout
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.slow
def test_mcp_transcript_faults_are_one_line_tool_errors_never_a_hang(tmp_path):
    """A FIFO under an allowed root, a NUL byte, /proc, and the server's own working folder (not a
    default root) each come back at once as a tool error naming the problem."""
    import anyio
    from mcp import ClientSession

    from tests.server.test_server import _session

    root = tmp_path / "projects"
    root.mkdir()
    fifo = root / "pipe.jsonl"
    os.mkfifo(fifo)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'allowed_roots = ["{root}"]\n')
    cwd_file = tmp_path / "here.jsonl"
    cwd_file.write_text("{}\n")

    async def go(s: ClientSession):
        out = {}
        for name, path in [("fifo", str(fifo)), ("nul", f"{root}/a\x00b.jsonl"), ("proc", "/proc/self/environ")]:
            with anyio.fail_after(20):
                out[name] = await s.call_tool("judge_summary", {"transcript_path": path})
        return out

    out = anyio.run(lambda: _session(tmp_path, go, SJC_CONFIG=str(cfg)))
    for name, r in out.items():
        assert r.is_error, name
        text = r.content[0].text
        assert "Traceback" not in text and len(text.splitlines()) == 1, (name, text)
    assert "not a regular file" in out["fifo"].content[0].text
    assert "outside the allowed roots" in out["proc"].content[0].text

    from sjc_mcp.config import Config
    from sjc_mcp.errors import InputError
    from sjc_mcp.server.roots import check_allowed

    with pytest.raises(InputError, match="outside the allowed roots"):  # defaults: not the working folder
        check_allowed(str(cwd_file), Config(), cwd=str(tmp_path))
    with pytest.raises(InputError, match="outside the allowed roots"):
        check_allowed("/etc/passwd", Config(), cwd="/")


def test_a_spilled_tool_result_symlinked_out_of_the_session_folder_is_not_read(tmp_path):
    from sjc_mcp.hosts.claude_code import _tool_result_text as _tool_text

    session_dir = tmp_path / "session"
    (session_dir / "tool-results").mkdir(parents=True)
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET-OUTSIDE-THE-ROOTS")
    (session_dir / "tool-results" / "big.txt").symlink_to(secret)
    (session_dir / "tool-results" / "ok.txt").write_text("SPILLED-INSIDE")
    spilled = "Output too large, saved to /Users/x/.claude/projects/p/s/tool-results/{}.txt"
    assert "SECRET-OUTSIDE" not in _tool_text(spilled.format("big"), {}, {}, session_dir)
    assert "SPILLED-INSIDE" in _tool_text(spilled.format("ok"), {}, {}, session_dir)


def test_a_decision_log_that_is_a_fifo_never_hangs_and_the_summary_comes_back(tmp_path):
    log = tmp_path / "log.fifo"
    os.mkfifo(log)
    summary = (ROOT_EX / "summary.md").read_text()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(log)}
    r = subprocess.run(
        [sjc_exe(), "prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md")],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert r.returncode == 0 and r.stdout and len(r.stdout) <= len(summary)
    assert "could not write the decision log" in r.stderr and "not a regular file" in r.stderr


def test_a_kill_switch_that_cannot_be_checked_is_taken_as_set(tmp_path, monkeypatch):
    from pathlib import Path

    from sjc_mcp.config import Config

    def denied(self):  # what a folder without search permission gives a non-root user
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "exists", denied)
    reason = Config.of(kill_switch=str(tmp_path / "locked" / "disabled")).disabled()
    assert reason is not None and "cannot be checked" in reason


def test_a_read_only_log_folder_still_gives_the_summary_and_says_why(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "decisions.jsonl").mkdir()  # a log path that cannot be opened as a file, even by root
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(folder / "decisions.jsonl")}
    r = subprocess.run(
        [sjc_exe(), "prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md")],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert r.returncode == 0 and r.stdout.startswith("This session is being continued")
    assert "could not write the decision log" in r.stderr
