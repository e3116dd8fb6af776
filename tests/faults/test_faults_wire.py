"""Fault suite, the MCP server's wire: a JSON-RPC message holding a lone surrogate escape (what a JavaScript
host writes for a string cut in the middle of a surrogate pair) is answered at once, on stdio and over
HTTP, each lone surrogate read as U+FFFD; the rest of the text comes back as it was sent.

Clients write the raw lines and bodies themselves: the SDK's Python client cannot send a lone surrogate."""

from __future__ import annotations

import json
import select
import subprocess

import httpx
import pytest

from sjc_mcp.server.wire import repair
from tests.conftest import sjc_exe
from tests.server.test_server_http import TOKEN, _env, http_server

# as a JavaScript host's JSON.stringify writes them: lone halves escaped, whole characters as UTF-8
SUMMARY_JSON = (
    r'"- the build passed: 48 passed \ud83d\n- the \\ud800 escape is text, \u2705 is whole\n- publish 2.0 next"'
)
EVIDENCE_JSON = r'[{"kind":"tool_output","name":"pytest","content":"$ pytest -q\n48 passed \udc00\n\\ud800 \u2705"}]'
KEPT = "- the build passed: 48 passed \ufffd\n- the \\ud800 escape is text, \u2705 is whole\n"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(n: int, tool: str = "prune_summary") -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"{tool}",'
        f'"arguments":{{"summary":{SUMMARY_JSON},"evidence":{EVIDENCE_JSON}}}}}}}'
    ).encode()


def test_repair_touches_only_lone_surrogates():
    line = _call(2) + b"\n"
    fixed = json.loads(repair(line))
    args = fixed["params"]["arguments"]
    assert args["summary"].startswith("- the build passed: 48 passed \ufffd\n- the \\ud800 escape is text, \u2705")
    assert args["evidence"][0]["content"] == "$ pytest -q\n48 passed \ufffd\n\\ud800 \u2705"
    assert repair(line).endswith(b"\n") and not repair(line[:-1]).endswith(b"\n")
    whole = b'{"a":"\\ud83d\\ude00 and \\\\ud800"}'  # a whole pair, and an escaped backslash: nothing to do
    assert repair(whole) is whole
    assert repair(b'{"a": "\\ud800"') == b'{"a": "\\ud800"'  # no JSON: as it came


def _read_answer(proc: subprocess.Popen, wait: float = 60) -> dict:
    """The next line the server writes (``wait`` only keeps a server that never answers from hanging the test;
    it is not what is asserted)."""
    ready, _, _ = select.select([proc.stdout], [], [], wait)
    assert ready, "no answer"
    return json.loads(proc.stdout.readline())


@pytest.mark.slow
def test_stdio_answers_a_lone_surrogate_at_once(tmp_path):
    proc = subprocess.Popen(
        [sjc_exe("sjc-mcp")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp_path)
    )
    try:
        assert proc.stdin is not None
        for message in (
            json.dumps(INITIALIZE).encode(),
            json.dumps(INITIALIZED).encode(),
            _call(2),
            _call(3, "judge_summary"),
        ):
            proc.stdin.write(message + b"\n")
            proc.stdin.flush()
            if b'"id"' in message:
                answer = _read_answer(proc)
                assert answer["id"] == json.loads(repair(message))["id"] and "error" not in answer, answer
                if answer["id"] == 2:
                    pruned = answer["result"]["structuredContent"]
                if answer["id"] == 3:
                    judged = answer["result"]["structuredContent"]
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert pruned["pruned_summary"] == KEPT, pruned["pruned_summary"]
    assert [e["decision"] for e in judged["entries"]] == ["keep", "keep", "prune"]
    assert "Traceback" not in err, err


@pytest.mark.slow
def test_http_answers_a_lone_surrogate_like_any_call(tmp_path):
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    with http_server(tmp_path) as (_, url, err), httpx.Client(timeout=60) as client:
        first = client.post(url, json=INITIALIZE, headers=headers)
        headers["mcp-session-id"] = first.headers["mcp-session-id"]
        client.post(url, json=INITIALIZED, headers=headers)
        r = client.post(url, content=_call(2), headers=headers)
        err.seek(0)
        log = err.read().decode()
    assert r.status_code == 200, r.text
    data = next(json.loads(x[5:]) for x in r.text.splitlines() if x.startswith("data:"))
    assert data["id"] == 2 and data["result"]["structuredContent"]["pruned_summary"] == KEPT, data
    assert "Traceback" not in log, log
