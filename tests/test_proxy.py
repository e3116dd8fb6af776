"""``sjc proxy`` run as a user runs it, between the official anthropic and openai SDKs and a fake
upstream on 127.0.0.1 that speaks both wire formats, streamed and not."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from sjc_mcp import log as decision_log
from tests.conftest import FIXTURES, sjc_exe
from tests.fake_upstream import FakeUpstream

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK is in the test extras")
openai = pytest.importorskip("openai", reason="the openai SDK is in the test extras")

CC_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far, paying close attention to the "
    "user's explicit requests and your previous actions."
)
CODEX_PROMPT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that "
    "will resume the task."
)
PYTEST_OUT = "....................\n48 passed in 0.61s"
CC_SUMMARY = (
    "<analysis>\nThe user asked to fix a failing test.\n</analysis>\n\n<summary>\n"
    "1. Primary Request and Intent:\n   - Fix the failing `test_parse_duration` test\n\n"
    "5. Problem Solving:\n   - `pytest -q` now reports 48 passed in 0.61s.\n\n"
    "7. Pending Tasks:\n   - Publish version 2.0 of the package to PyPI.\n"
    "   - Email the changelog to every customer on the mailing list.\n</summary>"
)
CODEX_SUMMARY = (
    "**Progress**\n- `pytest -q` now reports 48 passed in 0.61s.\n\n**Next steps**\n"
    "- Publish version 2.0 of the package to PyPI.\n"
)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proxy:
    def __init__(self, upstream: str, home: Path, config: str = "") -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, HOME=str(home))
        if config:
            (home / "c.toml").write_text(config)
            env["SJC_CONFIG"] = str(home / "c.toml")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sjc_exe(), "proxy", "--listen", f"127.0.0.1:{self.port}", "--upstream", upstream],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(self.proc.stderr.read().decode()) from None
                time.sleep(0.05)
        raise RuntimeError("proxy did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> list[dict]:
        path = self.home / ".local" / "state" / "sjc" / "decisions.jsonl"
        return [r for _, r, _ in decision_log.read(path)] if path.exists() else []

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def upstream():
    fake = FakeUpstream()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def proxy(upstream, tmp_path_factory):
    p = Proxy(upstream.url, tmp_path_factory.mktemp("proxyhome"))
    yield p
    p.stop()


def anthropic_history(prompt: str = CC_PROMPT) -> list[dict]:
    return [
        {"role": "user", "content": "test_parse_duration is failing, fix it"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the tests."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -q"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": PYTEST_OUT}]},
        {"role": "user", "content": prompt},
    ]


def assert_pruned(text: str) -> None:
    assert "48 passed in 0.61s" in text
    assert "Publish version 2.0" not in text


# -- Anthropic ------------------------------------------------------------------------------------------


def test_anthropic_compaction_pruned_plain_and_streamed(proxy, upstream):
    upstream.summary = CC_SUMMARY
    client = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-test-key", max_retries=0)
    msg = client.messages.create(model="claude-x", max_tokens=2000, messages=anthropic_history())
    assert_pruned(msg.content[0].text)
    assert "7. Pending Tasks:" in msg.content[0].text and "Email the changelog" not in msg.content[0].text
    assert msg.usage.input_tokens == 1234 and msg.usage.output_tokens == 321
    with client.messages.stream(model="claude-x", max_tokens=2000, messages=anthropic_history()) as s:
        final = s.get_final_message()
    assert_pruned(final.content[0].text)
    assert final.content[0].text == msg.content[0].text and final.usage.output_tokens == 321
    sent = upstream.requests[-1]["headers"]
    assert "sk-ant-test-key" in (sent.get("x-api-key", "") + sent.get("authorization", ""))  # auth forwarded
    recs = [r for r in proxy.log() if r.get("op") == "proxy" and r.get("status") == "judged"]
    assert len(recs) >= 2 and recs[-1]["pruned"] == 2
    assert "sk-ant-test-key" not in json.dumps(proxy.log())


def test_ordinary_requests_pass_through_byte_for_byte(proxy, upstream):
    body = {"model": "claude-x", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
    for stream in (False, True):
        payload = {**body, "stream": stream}
        direct = httpx.post(upstream.url + "/v1/messages", json=payload, headers={"x-api-key": "k"})
        via = httpx.post(proxy.url + "/v1/messages", json=payload, headers={"x-api-key": "k"})
        assert via.status_code == direct.status_code == 200
        assert via.content == direct.content
        assert via.headers["content-type"] == direct.headers["content-type"] and via.headers["x-upstream"] == "fake"
    assert upstream.requests[-1]["raw"] == upstream.requests[-2]["raw"]  # the body arrived as the client sent it
    get = httpx.get(proxy.url + "/v1/models?limit=5")
    assert get.status_code == 200 and get.json()["data"][0]["id"] == "fake-model"
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    assert client.messages.create(**body).content[0].text == upstream.plain


def test_upstream_errors_pass_through(proxy, upstream):
    upstream.fail_next = 429
    r = httpx.post(proxy.url + "/v1/messages", json={"model": "m", "max_tokens": 5, "messages": anthropic_history()})
    assert r.status_code == 429 and r.headers["retry-after"] == "7" and r.json()["error"]["message"] == "slow down"
    upstream.fail_next = 529
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as exc:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert exc.value.status_code == 529


# -- OpenAI ----------------------------------------------------------------------------------------------


def chat_history() -> list[dict]:
    return [
        {"role": "system", "content": CODEX_PROMPT},
        {"role": "user", "content": "test_parse_duration is failing, fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "shell", "arguments": json.dumps({"command": ["pytest", "-q"]})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": PYTEST_OUT},
        {"role": "user", "content": "Write the summary now."},
    ]


def responses_input() -> list[dict]:
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix test_parse_duration"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["pytest", "-q"]}),
            "call_id": "call_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": PYTEST_OUT},
    ]


def test_openai_chat_compaction(proxy, upstream):
    upstream.summary = CODEX_SUMMARY
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    r = client.chat.completions.create(model="gpt-x", messages=chat_history())
    assert_pruned(r.choices[0].message.content)
    assert "**Next steps**" in r.choices[0].message.content and r.usage.total_tokens == 1555
    chunks = client.chat.completions.create(model="gpt-x", messages=chat_history(), stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == r.choices[0].message.content
    assert upstream.requests[-1]["headers"]["authorization"] == "Bearer sk-test"


def test_openai_responses_compaction(proxy, upstream):
    upstream.summary = CODEX_SUMMARY
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    r = client.responses.create(model="gpt-x", instructions=CODEX_PROMPT, input=responses_input())
    assert_pruned(r.output_text)
    assert r.usage.output_tokens == 321
    with client.responses.stream(model="gpt-x", instructions=CODEX_PROMPT, input=responses_input()) as s:
        deltas = "".join(e.delta for e in s if e.type == "response.output_text.delta")
        final = s.get_final_response()
    assert deltas == final.output_text == r.output_text


def test_openai_ordinary_stream_is_identical(proxy, upstream):
    body = {"model": "gpt-x", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    direct = httpx.post(upstream.url + "/v1/chat/completions", json=body)
    via = httpx.post(proxy.url + "/v1/chat/completions", json=body)
    assert via.content == direct.content
    body = {"model": "gpt-x", "stream": True, "input": "hi"}
    assert (
        httpx.post(proxy.url + "/v1/responses", json=body).content
        == httpx.post(upstream.url + "/v1/responses", json=body).content
    )


# -- fail open, kill switch, shadow ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "status"),
    [
        ("[proxy]\njudge_budget_s = 0.000001\n", "timeout"),
        ('judge = "jev"\n[jev]\nbase_url = "https://judge.example.invalid"\n', "error"),
        ('mode = "shadow"\n', "judged"),
    ],
)
def test_faults_and_shadow_return_the_original(upstream, tmp_path, config, status):
    upstream.summary = CC_SUMMARY
    p = Proxy(upstream.url, tmp_path / "home", config)
    try:
        client = anthropic.Anthropic(base_url=p.url, api_key="k", max_retries=0)
        text = client.messages.create(model="m", max_tokens=100, messages=anthropic_history()).content[0].text
        assert text == CC_SUMMARY
        rec = p.log()[-1]
        assert rec["status"] == status and rec["op"] == "proxy"
        if status == "judged":
            assert rec["mode"] == "shadow" and rec["pruned"] == 2
        else:
            assert "unchanged" in rec["errors"][0]
    finally:
        p.stop()


def test_kill_switch(upstream, tmp_path):
    upstream.summary = CC_SUMMARY
    home = tmp_path / "home"
    (home / ".config" / "sjc").mkdir(parents=True)
    (home / ".config" / "sjc" / "disabled").touch()
    p = Proxy(upstream.url, home)
    try:
        client = anthropic.Anthropic(base_url=p.url, api_key="k", max_retries=0)
        assert client.messages.create(model="m", max_tokens=100, messages=anthropic_history()).content[0].text == (
            CC_SUMMARY
        )
        assert p.log()[-1]["status"] == "disabled"
    finally:
        p.stop()


# -- a compaction request rebuilt from a real Claude Code session --------------------------------------------


def test_replays_a_real_claude_code_compaction(proxy, upstream):
    fixture = FIXTURES / "claude-code" / "entire_1e_0baf6917ea_0.jsonl"
    if not fixture.exists():
        pytest.skip("../shared/fixtures is absent: no real Claude Code transcript to rebuild a request from")
    from sjc_mcp.hosts import read_boundary
    from sjc_mcp.summary import split_summary

    b = read_boundary(fixture, 0)
    messages: list[dict] = []

    def add(role: str, block: dict) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for it in b.span:
        if it.role == "user":
            add("user", {"type": "text", "text": it.content})
        elif it.role == "assistant":
            add("assistant", {"type": "text", "text": it.content})
        elif it.role == "tool_call":
            add("assistant", {"type": "tool_use", "id": it.call_id, "name": it.name, "input": json.loads(it.content)})
        elif it.role == "tool_output":
            add("user", {"type": "tool_result", "tool_use_id": it.call_id, "content": it.content})
    add("user", {"type": "text", "text": CC_PROMPT})
    upstream.summary = b.summary
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    text = client.messages.create(model="m", max_tokens=8000, messages=messages).content[0].text
    original = split_summary(b.summary)
    kept = split_summary(text)
    assert len(text) < len(b.summary) and len(kept.entries) < len(original.entries)
    assert {s.title for s in kept.sections} == {s.title for s in original.sections}
    assert all(e.text in b.summary for e in kept.entries)
    rec = [r for r in proxy.log() if r.get("op") == "proxy"][-1]
    assert rec["status"] == "judged" and rec["pruned"] == len(original.entries) - len(kept.entries)


def test_prefilter_prunes_tool_results_of_a_compaction_request_only(upstream, tmp_path):
    config = (
        "[proxy]\nprefilter = true\n[tools]\nkeep_recent_turns = 1\nmin_reduction = 0.0\ndrop_below = 1.0\n"
        "truncate_below = 1.0\nmargin = 0.0\n"
    )
    p = Proxy(upstream.url, tmp_path / "home", config)
    try:
        upstream.summary = CC_SUMMARY
        messages = [{"role": "user", "content": "fix test_parse_duration"}]
        for i, out in enumerate(["OLD-OUTPUT-ALPHA unrelated listing", "OLD-OUTPUT-BETA docs/ tree", PYTEST_OUT]):
            messages += [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"step {i}"}}],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": out}]},
            ]
        messages.append({"role": "user", "content": CC_PROMPT})
        client = anthropic.Anthropic(base_url=p.url, api_key="k", max_retries=0)
        text = client.messages.create(model="m", max_tokens=100, messages=messages).content[0].text
        sent = json.loads(upstream.requests[-1]["raw"])
        assert "OLD-OUTPUT-ALPHA" not in json.dumps(sent) and "OLD-OUTPUT-BETA" not in json.dumps(sent)
        assert sent["messages"][-1]["content"] == CC_PROMPT and all(m["content"] for m in sent["messages"])
        ops = [(r["op"], r["status"]) for r in p.log()]
        assert ("tools", "judged") in ops and ("proxy", "judged") in ops
        assert "Publish version 2.0" not in text
        body = {"model": "m", "max_tokens": 5, "messages": messages[:-1]}  # no compaction prompt: untouched
        direct = httpx.post(upstream.url + "/v1/messages", json=body)
        via = httpx.post(p.url + "/v1/messages", json=body)
        assert via.content == direct.content and upstream.requests[-1]["raw"] == upstream.requests[-2]["raw"]
    finally:
        p.stop()
