"""Fault suite, the terminal: nothing that came from outside (a session id in a request, entry text, a
quote, a tool name) reaches the terminal raw, in the proxy's lines, ``sjc audit`` or ``sjc judge`` / ``prune``;
and an upstream that drops the connection mid-compaction-answer is forwarded as it came."""

from __future__ import annotations

import json
import os
import re
import subprocess

import httpx
import pytest

from tests.conftest import sjc_exe
from tests.fake_upstream import FakeUpstream
from tests.proxy.test_proxy import (
    CC_SUMMARY,
    CODEX_PROMPT,
    CODEX_SUMMARY,
    Proxy,
    anthropic_history,
    chat_history,
    responses_input,
    stderr_of,
)

RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# each forges something on a terminal: a colour, a cleared screen and a window title, a bell, a C1 CSI, a
# carriage return over the line, a new line of its own, a right-to-left override
HOSTILE_SESSIONS = [
    "s\x1b[31mred",
    "s\x1b[2J\x1b]0;pwned\x07",
    "s\x9b31m-c1",
    "s\rsjc proxy: forged",
    "s\nsjc proxy: anthropic compaction (session forged): recognised, judged, pruned 0 of 5 entries",
    "s\u202eexe.txt",
]


@pytest.fixture
def upstream():
    fake = FakeUpstream()
    yield fake
    fake.close()


@pytest.fixture
def proxy(upstream, tmp_path):
    p = Proxy(upstream.url, tmp_path / "home")
    yield p
    if p.proc.poll() is None:
        p.stop()


def no_raw_control(text: str) -> None:
    found = RAW_CONTROL.findall(text)
    assert not found, f"raw control characters reach the terminal: {found!r}"


@pytest.mark.slow
def test_a_session_id_with_control_characters_is_escaped_on_stderr_and_in_the_audit(proxy, upstream, tmp_path):
    upstream.summary = CC_SUMMARY
    for session in HOSTILE_SESSIONS:
        user_id = json.dumps({"device_id": "d", "account_uuid": "", "session_id": session})
        body = {"model": "m", "max_tokens": 100, "messages": anthropic_history(), "metadata": {"user_id": user_id}}
        r = httpx.post(proxy.url + "/v1/messages", json=body, timeout=60)
        assert r.status_code == 200
    recorded = [rec["session"] for rec in proxy.log()]
    assert recorded == HOSTILE_SESSIONS  # the log keeps the session as it came (JSON escapes it)
    err = "\n".join(stderr_of(proxy))
    lines = [ln for ln in err.splitlines() if ln.startswith("sjc proxy: ")]
    assert len(lines) == len(HOSTILE_SESSIONS), lines  # one line each, none forged
    assert not any(
        ln.startswith(("sjc proxy: forged", "sjc proxy: anthropic compaction (session forged)")) for ln in lines
    )
    no_raw_control(err)
    assert "s\\x1b[31mred" in err and "\\u202e" in err
    log = proxy.home / ".local" / "state" / "sjc" / "decisions.jsonl"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    for view in ([], ["--all"], ["--verify"]):
        a = subprocess.run([sjc_exe(), "audit", "--log", str(log), *view], capture_output=True, text=True, env=env)
        assert a.returncode == 0, a.stderr
        no_raw_control(a.stdout + a.stderr)
        assert not any(ln.lstrip().startswith("sjc proxy:") for ln in a.stdout.splitlines())
    a = subprocess.run([sjc_exe(), "audit", "--log", str(log), "--json"], capture_output=True, text=True, env=env)
    assert sorted(b["session"] for b in json.loads(a.stdout)["boundaries"]) == sorted(HOSTILE_SESSIONS)
    html = tmp_path / "r.html"
    a = subprocess.run(
        [sjc_exe(), "audit", "--log", str(log), "--html", str(html)], capture_output=True, text=True, env=env
    )
    assert a.returncode == 0 and "\x1b" not in html.read_text()


@pytest.mark.slow
def test_entry_text_and_sections_with_control_characters_are_escaped_by_judge_and_prune(tmp_path):
    summary = (
        "## Pending Tasks\x1b[8m\n"
        "- Publish version 2.0 to PyPI\x1b]0;title\x07 and email every customer\n"
        "- Rewrite the \u202eeludom\u202c in Rust\rsjc: nothing removed\n"
    )
    src = tmp_path / "summary.md"
    src.write_text(summary)
    config = tmp_path / "c.toml"
    config.write_text("max_prune_share = 1.0\n")  # let both go: their lines are what is checked
    env = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "SJC_DECISION_LOG": str(tmp_path / "log.jsonl"),
        "SJC_CONFIG": str(config),
    }
    for cmd in ("judge", "prune"):
        r = subprocess.run(
            [sjc_exe(), cmd, "--summary", str(src), "--no-evidence"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        shown = r.stderr if cmd == "prune" else r.stdout + r.stderr
        no_raw_control(shown)
        assert "\\x1b]0;title\\x07" in shown
        if cmd == "prune":  # the summary itself goes out byte for byte: escaping is for what sjc says about it
            assert set(r.stdout.splitlines(keepends=True)) <= set(summary.splitlines(keepends=True))


# -- an upstream that breaks its compaction answer off -------------------------------------------------------


def _compaction(wire: str, stream: bool) -> tuple[str, dict]:
    if wire == "anthropic":
        return "/v1/messages", {"model": "m", "max_tokens": 100, "stream": stream, "messages": anthropic_history()}
    if wire == "chat":
        return "/v1/chat/completions", {"model": "gpt-x", "stream": stream, "messages": chat_history()}
    return "/v1/responses", {
        "model": "gpt-x",
        "stream": stream,
        "instructions": CODEX_PROMPT,
        "input": responses_input(),
    }


def _read_until_broken(url: str, body: dict) -> tuple[int | None, bytes, bool]:
    got = b""
    status = None
    try:
        with httpx.stream("POST", url, json=body, timeout=30) as r:
            status = r.status_code
            for chunk in r.iter_raw():
                got += chunk
    except httpx.HTTPError:
        return status, got, True
    return status, got, False


@pytest.mark.slow
@pytest.mark.parametrize("cut", ["no-body", "half", "all-but-one"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("wire", ["anthropic", "chat", "responses"])
def test_a_compaction_answer_the_upstream_drops_is_forwarded_as_it_came(wire, stream, cut, proxy, upstream):
    """The upstream declares the answer's length and closes the connection part way: the agent gets the
    same bytes it would have got without the proxy, and the same broken end (never a whole, pruned or
    made-up answer); the proxy says so in one line and in the log."""
    upstream.summary = CC_SUMMARY if wire == "anthropic" else CODEX_SUMMARY
    path, body = _compaction(wire, stream)
    upstream.drop_after = 10**9
    status, whole, _ = _read_until_broken(upstream.url + path, body)  # the whole answer, to size the cut
    size = len(whole)
    at = {"no-body": 0, "half": size // 2, "all-but-one": size - 1}[cut]
    upstream.drop_after = at
    direct = _read_until_broken(upstream.url + path, body)
    upstream.drop_after = at
    via = _read_until_broken(proxy.url + path, body)
    assert direct[2] and via[2], (direct, via)  # both end broken off, not as a whole answer
    assert direct[1] == whole[:at] and via[1] == direct[1]
    assert via[0] == direct[0] == status
    records = proxy.log()
    assert [r["status"] for r in records] == ["upstream"], records
    assert "broke its answer off" in records[0]["errors"][0]
    assert any("broke its answer off" in ln for ln in stderr_of(proxy))


def test_the_one_escaping_rule():
    from sjc_mcp.terminal import clean

    assert clean("a\x1b[31mb\x07\x9b\n\r\t\u202e\ud800z") == "a\\x1b[31mb\\x07\\x9b\\x0a\\x0d\\x09\\u202e\\ud800z"
    assert clean("caf\u00e9 \u2014 \U0001f600 ok") == "caf\u00e9 \u2014 \U0001f600 ok"  # printable text as it is
    assert clean(None) == ""
    assert os.linesep not in clean("x" + os.linesep)
