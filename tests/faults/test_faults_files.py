"""Fault suite, files and ports: bad places to read from or listen on are one clear line, never a hang."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

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
    assert out["nul"].content[0].text.endswith(": transcript path contains a NUL byte")

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


@pytest.mark.slow
@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "folder", "/dev/null"])
@pytest.mark.parametrize(
    "command", [("prune",), ("judge",), ("tools", "judge"), ("replay",)], ids=["prune", "judge", "tools", "replay"]
)
def test_a_transcript_that_is_not_a_regular_file_is_refused_at_once(command, target, tmp_path):
    if target == "fifo":
        path = tmp_path / "session.jsonl"
        os.mkfifo(path)
    elif target == "folder":
        path = tmp_path / "folder.jsonl"
        path.mkdir()
        os.mkfifo(path / "inside.jsonl")  # replay reads a folder's files: the FIFO in it is refused too
    else:
        path = target
    args = [str(path)] if command == ("replay",) else ["--transcript", str(path)]
    r = run(*command, *args, home=tmp_path, timeout=20)  # a hang fails by the timeout
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    if command == ("replay",) and target == "folder":  # a folder's FIFO is passed over
        assert r.returncode == 0 and "replayed 0 compactions from 0 files" in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "regular file" in r.stderr or "folder" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ("prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md")),
        ("audit",),
        ("doctor",),
        ("install", "claude-code"),
    ],
    ids=["prune", "audit", "doctor", "install"],
)
def test_a_closed_stdout_is_one_line_and_exit_2_and_nothing_is_done(command, tmp_path):
    """``sjc prune >&-``: the result could go nowhere, so nothing is done; said in one line on stderr."""
    (tmp_path / ".claude").mkdir()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sjc_exe(), *command],
        stdout=None,
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=30,
        env=env,
        close_fds=True,
        preexec_fn=lambda: os.close(1),
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == f"sjc: error: standard output is closed: sjc {command[0]} prints its result there"
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert not (tmp_path / ".local").exists()


@pytest.mark.slow
def test_closed_stdin_and_stderr_never_mix_into_the_result(tmp_path):
    """``sjc prune <&-``: no summary, one line; ``sjc prune 2>&-``: the summary alone on stdout (the lines
    meant for stderr go nowhere, not into the result)."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sjc_exe(), "prune", "--no-evidence"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        preexec_fn=lambda: os.close(0),
    )
    assert r.returncode == 2 and "the summary is empty" in r.stderr and "Traceback" not in r.stderr
    config = tmp_path / "c.toml"
    config.write_text("max_prune_share = 1.0\n")
    summary = (ROOT_EX / "summary.md").read_text()
    r = subprocess.run(
        [sjc_exe(), "prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md"), "--config", str(config)],
        stdout=subprocess.PIPE,
        timeout=30,
        env=env,
        preexec_fn=lambda: os.close(2),
    )
    out = r.stdout.decode()
    assert r.returncode == 0 and "sjc:" not in out and "removed" not in out
    assert set(out.splitlines(keepends=True)) <= set(summary.splitlines(keepends=True))


def _drop_search_permission() -> list[str] | None:
    """A command prefix under which a folder without search permission cannot be entered: as a user, none;
    as root, root without the capabilities that bypass file permissions (setpriv). None when neither works."""
    if os.getuid() != 0:
        return []
    import shutil

    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    probe = subprocess.run([setpriv, "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True)
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"] if probe.returncode == 0 else None


@pytest.mark.slow
@pytest.mark.parametrize("command", ["prune", "hook", "audit", "doctor"])
def test_a_home_under_an_unsearchable_folder(command, tmp_path):
    """HOME under a folder without search permission: every path sjc keeps there (config, kill switch,
    log, state) cannot even be checked. ``sjc prune`` and ``sjc audit`` say so in one line (exit 2), the hook
    leaves the summary and exits 0, doctor reports and ends."""
    prefix = _drop_search_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: root searches every folder")
    locked = tmp_path / "locked"
    (locked / "home").mkdir(parents=True)
    locked.chmod(0)
    try:
        env = {"HOME": str(locked / "home"), "PATH": "/usr/bin:/bin"}
        stdin = None
        if command == "prune":
            args = ["prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md")]
        elif command == "hook":
            args = ["hook", "claude-code"]
            stdin = json.dumps(
                {
                    "hook_event_name": "PostCompact",
                    "session_id": "s",
                    "compact_summary": "## Pending Tasks\n- Publish 2.0\n",
                }
            )
        else:
            args = [command]
        r = subprocess.run(
            [*prefix, sjc_exe(), *args], input=stdin, capture_output=True, text=True, timeout=60, env=env
        )
    finally:
        locked.chmod(0o700)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    if command == "hook":
        assert r.returncode == 0 and r.stdout == ""
    elif command == "doctor":
        assert r.returncode == 1 and "Permission denied" in r.stdout
    else:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Permission denied" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "anchor-fifo"])
@pytest.mark.parametrize("view", [[], ["--json"], ["--verify"]], ids=["terminal", "json", "verify"])
def test_audit_of_a_log_that_is_not_a_regular_file_is_one_line(view, target, tmp_path):
    log = tmp_path / "decisions.jsonl"
    if target == "fifo":
        os.mkfifo(log)
    elif target == "anchor-fifo":  # a whole log, and a FIFO where its anchor goes: reported, not waited on
        subprocess.run(
            [sjc_exe(), "prune", "--no-evidence", "--summary", str(ROOT_EX / "summary.md")],
            capture_output=True,
            timeout=60,
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(log)},
        )
        (tmp_path / "decisions.jsonl.anchor").unlink()
        os.mkfifo(tmp_path / "decisions.jsonl.anchor")
    else:
        log = Path(target)
    r = run("audit", "--log", str(log), *view, home=tmp_path, timeout=20)  # a hang fails by the timeout
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    if target == "anchor-fifo":
        assert r.returncode in (0, 1) and r.stdout
    else:
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "not a regular file" in r.stderr
