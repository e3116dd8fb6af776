"""Fault suite, files and ports: bad places to read from or listen on are one clear line, never a hang."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.conftest import sjc_exe


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
