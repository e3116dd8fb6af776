"""Fault suite, budgets: a judge server that drips its answer cannot hold sjc past its deadline."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from sjc_mcp import prune_summary
from sjc_mcp.config import Config
from tests.judges.test_remote_judges import example


class DripServer:
    """Accepts on 127.0.0.1 and sends a valid-looking HTTP answer one byte every ``every`` seconds, so no
    single read ever times out. Stops by itself after ``lifetime`` seconds. ``ended`` says how each
    connection ended: "client went away" (a send failed: the client closed it), or "server stopped"."""

    def __init__(self, every: float = 0.2, lifetime: float = 30.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.every = every
        self.stop_at = time.monotonic() + lifetime
        self.accepted = 0
        self.ended: list[str] = []
        self.cond = threading.Condition()
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n" + b" " * 100000
        how = "server stopped"
        try:
            for i in range(len(answer)):
                if self.closed or time.monotonic() > self.stop_at:
                    break
                conn.sendall(answer[i : i + 1])
                time.sleep(self.every)
        except OSError:
            how = "client went away"
        finally:
            conn.close()
            with self.cond:
                self.ended.append(how)
                self.cond.notify_all()

    def all_ended(self) -> list[str]:
        """How each accepted connection ended, once all have (at the latest when the server stops itself)."""
        with self.cond:
            self.cond.wait_for(lambda: len(self.ended) >= self.accepted, timeout=self.stop_at - time.monotonic() + 5)
            return list(self.ended)

    def _serve(self) -> None:
        while not self.closed and time.monotonic() < self.stop_at:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()
        self.sock.close()

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def drip():
    server = DripServer()
    yield server
    server.close()


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["openai", "anthropic", "jev"])
def test_a_dripping_judge_server_ends_at_the_deadline_with_entries_kept_unjudged(judge, drip, tmp_path):
    table = {
        "base_url": drip.url,
        "connect_timeout_s": 1,
        "read_timeout_s": 1.5,
        "total_timeout_s": 2,
        "max_retries": 1,
    }
    config = Config.of(
        judge=judge, decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"), **{judge: table}
    )
    summary, evidence = example()
    r = prune_summary(summary, evidence, config=config)
    assert drip.accepted >= 1  # the server was reached and dripped
    # sjc hung up on every connection while its answer was still arriving (the whole answer would take hours,
    # the server stops itself after 30 s): the budget ended the call, neither a read timeout nor the server
    assert set(drip.all_ended()) == {"client went away"}, drip.ended
    assert r.pruned_summary == summary  # nothing judged, nothing cut
    assert all(e.decision == "unjudged" for e in r.entries)
    assert any("time budget" in err for err in r.errors), r.errors


@pytest.mark.slow
def test_a_proxy_judgment_past_its_budget_logs_nothing_later(tmp_path):
    """The budget runs out, the original answer goes to the agent and the log says "timeout"; the judgment
    still finishing in its thread must not add a "judged" record (the audit would count a pruning that
    never reached the agent)."""
    import anthropic

    from tests.fake_upstream import FakeUpstream
    from tests.proxy.test_proxy import CC_SUMMARY, Proxy, anthropic_history

    upstream = FakeUpstream()
    proxy = Proxy(upstream.url, tmp_path / "home", "[proxy]\njudge_budget_s = 0.000001\n")
    try:
        upstream.summary = CC_SUMMARY
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        text = client.messages.create(model="m", max_tokens=100, messages=anthropic_history()).content[0].text
        assert text == CC_SUMMARY
        time.sleep(2.0)  # long enough for the abandoned judgment to finish
        records = [r for r in proxy.log() if r.get("op") == "proxy"]
        assert [r["status"] for r in records] == ["timeout"], records
    finally:
        proxy.stop()
        upstream.close()


def _hook_with_stdin_held_open(tmp_path, data: bytes, wait: float) -> tuple[int | None, str, str]:
    """``sjc-hook claude-code`` handed ``data`` on a stdin the host never closes; (exit code or None if it
    had not ended after ``wait`` seconds, stdout, stderr)."""
    import json  # noqa: F401 - the payloads are built by the callers
    import os
    import subprocess

    from tests.conftest import sjc_exe

    env = {**os.environ, "HOME": str(tmp_path), "SJC_DECISION_LOG": str(tmp_path / "log.jsonl")}
    proc = subprocess.Popen(
        [sjc_exe("sjc-hook"), "claude-code"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()  # and never closed while the hook runs
    try:
        code = proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = None
    finally:
        out, err = proc.communicate()
        proc.stdin.close()
    return code, out.decode(), err.decode()


@pytest.mark.slow
def test_a_hook_whose_stdin_is_never_closed_acts_on_the_whole_payload(tmp_path):
    """The host writes the payload and keeps stdin open: the hook does not wait for the end of a stream
    that never comes; it acts on the payload and ends."""
    import json

    from tests.hosts.test_hosts import small_cc

    payload = {
        "hook_event_name": "PostCompact",
        "session_id": "s",
        "transcript_path": str(small_cc(tmp_path)),
        "compact_summary": "## Pending Tasks\n- Publish 2.0\n",
    }
    code, out, err = _hook_with_stdin_held_open(tmp_path, json.dumps(payload).encode(), wait=60)
    assert code == 0, err
    assert out.startswith("sjc: "), out + err  # PostCompact's line for the user: the payload was read


@pytest.mark.slow
def test_a_hook_whose_payload_never_ends_stops_waiting_within_its_budget(tmp_path):
    """Half a payload and a stdin never closed: the hook stops waiting at the default time budget, leaves
    the summary as it was (nothing on stdout), exits 0, and says why on stderr and in the log."""
    import json

    from sjc_mcp.config import HookConfig

    budget = HookConfig().time_budget_s
    code, out, err = _hook_with_stdin_held_open(
        tmp_path, b'{"hook_event_name": "PostCompact", "session_id', wait=budget * 3
    )
    assert code == 0, "the hook outlived three times its budget"
    assert out == ""
    assert "cannot read the payload on stdin" in err and "summary is left as the host wrote it" in err
    records = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["timeout"]
