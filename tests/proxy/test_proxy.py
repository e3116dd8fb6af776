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

from sjc_mcp.log import chain as decision_log
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


@pytest.mark.slow
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


@pytest.mark.slow
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
@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# -- the host's own request shape, sessions, server-side compaction, upstream faults ---------------------------

# Claude Code 2.1.332's compaction prompts, as its binary holds them (the first paragraph of each): the full
# compaction, and the two partial ones (summarise the RECENT portion; summarise up to a message).
CC_FULL = CC_PROMPT
CC_RECENT = (
    "Your task is to create a detailed summary of the RECENT portion of the conversation \u2014 the messages that "
    "follow earlier retained context. The earlier messages are being kept intact and do NOT need to be summarized. "
    "Focus your summary on what was discussed, learned, and accomplished in the recent messages only."
)
CC_UP_TO = (
    "Your task is to create a detailed summary of this conversation. This summary will be placed at the start of a "
    "continuing session; newer messages that build on this context will follow after your summary (you do not see "
    "them here). Summarize thoroughly so that someone reading only your summary and then the newer messages can "
    "fully understand what happened and continue the work."
)
# What Claude Code 2.1.332 puts around the prompt: a guard before it, a reminder after it, all one text block,
# the last of the last user message (after the tool results); a system-role message may follow that message.
CC_GUARD = (
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n- Do NOT use Read, Bash, Grep, Glob, Edit, Write, "
    "or ANY other tool.\n- You already have all the context you need in the conversation above.\n- Tool calls will "
    "be REJECTED and will waste your only turn \u2014 you will fail the task.\n- Your entire response must be plain "
    "text: an <analysis> block followed by a <summary> block.\n\n"
)
CC_REMINDER = (
    "\n\nREMINDER: Do NOT call any tools. Respond with plain text only \u2014 an <analysis> block followed by a "
    "<summary> block. Tool calls will be rejected and you will fail the task."
)


def claude_code_2_1_332_request(prompt: str, first_user: str = "test_parse_duration is failing, fix it") -> list:
    """A compaction request in the shape the real Claude Code 2.1.332 sent (seen offline against a scripted model)."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>\nAttribution…\n</system-reminder>"},
                {"type": "text", "text": first_user},
            ],
        },
        {"role": "system", "content": "# Environment\nYou have been invoked in the following environment: …"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -q"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": PYTEST_OUT},
                {"type": "text", "text": CC_GUARD + prompt + "\n…" + CC_REMINDER},
            ],
        },
        {"role": "system", "content": "The following deferred tools are now available via ToolSearch. …"},
    ]


def codex_metadata(kind: str, session: str, window: int = 0) -> str:
    """Codex 0.171.0's x-codex-turn-metadata header (the fields that matter here)."""
    return json.dumps(
        {
            "session_id": session,
            "thread_id": session,
            "turn_id": f"{session}-turn",
            "window_id": f"{session}:{window}",
            "window_number": window,
            "request_kind": kind,
        }
    )


def codex_compaction_input(prompt: str = CODEX_PROMPT) -> list[dict]:
    """Codex 0.171.0 with a custom provider: the history, then the prompt as the last user message."""
    return [
        *responses_input(),
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
    ]


@pytest.fixture
def own_proxy(upstream, tmp_path):
    """A proxy of the test's own, whose stderr is read once it is stopped."""
    p = Proxy(upstream.url, tmp_path / "home")
    yield p
    if p.proc.poll() is None:
        p.stop()


def stderr_of(p: Proxy) -> list[str]:
    p.stop()
    return [ln for ln in p.proc.stderr.read().decode().splitlines() if ln.startswith("sjc proxy: ")]


def audit_json(p: Proxy, *args: str) -> dict:
    log = p.home / ".local" / "state" / "sjc" / "decisions.jsonl"
    r = subprocess.run([sjc_exe(), "audit", "--json", "--log", str(log), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_every_record_carries_the_hosts_session_and_audit_groups_by_it(own_proxy, upstream):
    """Three compactions of three sessions: Claude Code naming its session in the header, Claude Code naming it
    only in metadata.user_id, Codex in its headers; each its own session and boundary, one stderr line each."""
    upstream.summary = CC_SUMMARY
    cc = anthropic.Anthropic(base_url=own_proxy.url, api_key="k", max_retries=0)
    cc.messages.create(
        model="m",
        max_tokens=100,
        messages=claude_code_2_1_332_request(CC_FULL),
        extra_headers={"x-claude-code-session-id": "cc-session-A"},
    )
    user_id = json.dumps({"device_id": "d", "account_uuid": "", "session_id": "cc-session-B"})
    cc.messages.create(
        model="m", max_tokens=100, messages=claude_code_2_1_332_request(CC_FULL), metadata={"user_id": user_id}
    )
    upstream.summary = CODEX_SUMMARY
    cx = openai.OpenAI(base_url=own_proxy.url + "/v1", api_key="sk-test", max_retries=0)
    r = cx.responses.create(
        model="gpt-x",
        input=codex_compaction_input(),
        extra_headers={
            "session-id": "codex-session-C",
            "x-codex-turn-metadata": codex_metadata("compaction", "codex-session-C"),
        },
    )
    assert_pruned(r.output_text)
    recs = own_proxy.log()
    assert [r["session"] for r in recs] == ["cc-session-A", "cc-session-B", "codex-session-C"]
    assert all(r["status"] == "judged" and r["pruned"] >= 1 and r["boundary_id"] for r in recs)
    assert recs[2]["boundary_id"] == "codex-window:codex-session-C:0" and recs[2]["host"] == "codex"
    assert len({r["boundary_id"] for r in recs}) == 3
    every = audit_json(own_proxy)["boundaries"]
    assert sorted(b["session"] for b in every) == ["cc-session-A", "cc-session-B", "codex-session-C"]
    only = audit_json(own_proxy, "--session", "cc-session-B")["boundaries"]
    assert len(only) == 1 and only[0]["session"] == "cc-session-B" and only[0]["pruned"] == 2
    lines = stderr_of(own_proxy)
    assert len(lines) == 3, lines
    assert "session cc-session-A" in lines[0] and "recognised, judged, pruned 2 of 5 entries" in lines[0]
    assert "codex compaction (session codex-session-C" in lines[2] and "pruned 1 of 2 entries" in lines[2]


@pytest.mark.parametrize("prompt", [CC_FULL, CC_RECENT, CC_UP_TO], ids=["full", "recent-portion", "up-to"])
def test_claude_codes_partial_compactions_are_recognised(proxy, upstream, prompt):
    upstream.summary = CC_SUMMARY
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    msg = client.messages.create(
        model="m",
        max_tokens=100,
        messages=claude_code_2_1_332_request(prompt),
        extra_headers={"x-claude-code-session-id": "partial"},
    )
    assert_pruned(msg.content[0].text)
    rec = proxy.log()[-1]
    assert rec["status"] == "judged" and rec["session"] == "partial" and rec["recognised_by"] == "last user message"
    # the system-role messages Claude Code sends are the host's, not the agent's prose or a source
    assert "Environment" not in json.dumps(rec["entries"])


def _bytes_direct_and_via(upstream, proxy, path: str, body: dict, headers: dict | None = None) -> tuple[bytes, bytes]:
    direct = httpx.post(upstream.url + path, json=body, headers=headers or {})
    via = httpx.post(proxy.url + path, json=body, headers=headers or {})
    assert direct.status_code == via.status_code == 200
    return direct.content, via.content


@pytest.mark.parametrize(
    "case",
    ["quoted-in-an-earlier-message", "quoted-inside-the-last-message", "quoted-in-a-tool-result", "codex-turn"],
)
def test_a_quoted_prompt_is_not_a_compaction(proxy, upstream, case):
    """Only the host's own request shape counts: the prompt quoted by a user (earlier, or not at the start of the
    last message), or a Codex request its metadata calls a turn, passes through untouched and unlogged."""
    upstream.summary = CC_SUMMARY
    before = len(proxy.log())
    if case == "codex-turn":
        path = "/v1/responses"
        body = {"model": "gpt-x", "input": codex_compaction_input()}
        headers = {"x-codex-turn-metadata": codex_metadata("turn", "quoting")}
    else:
        path, headers = "/v1/messages", {}
        messages = claude_code_2_1_332_request("Thanks.")
        if case == "quoted-in-an-earlier-message":
            messages[0]["content"][1]["text"] = CC_FULL
        elif case == "quoted-inside-the-last-message":
            messages[3]["content"][1]["text"] = f"Why does the tool say '{CC_FULL}'? Explain."
        else:
            messages[3]["content"][0]["content"] = CC_GUARD + CC_FULL
            messages[3]["content"][1]["text"] = "What did that print?"
        body = {"model": "m", "max_tokens": 100, "messages": messages}
    direct, via = _bytes_direct_and_via(upstream, proxy, path, body, headers)
    # the fake answers with the summary whenever the prompt appears anywhere: the proxy left it whole
    assert via == direct and "Publish version 2.0" in via.decode()
    assert len(proxy.log()) == before


@pytest.mark.slow
def test_codex_metadata_marks_a_compaction_whatever_its_prompt_says(own_proxy, upstream):
    proxy = own_proxy
    upstream.summary = CODEX_SUMMARY
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    r = client.responses.create(
        model="gpt-x",
        input=codex_compaction_input("Summarise the work so far for the next model."),
        extra_headers={"x-codex-turn-metadata": codex_metadata("compaction", "reworded", window=3)},
    )
    rec = proxy.log()[-1]
    assert rec["recognised_by"].startswith("x-codex-turn-metadata") and rec["session"] == "reworded"
    # the fake answers a prompt it does not know with one plain sentence: no structure, so it is kept whole
    assert rec["boundary_id"] == "codex-window:reworded:3" and rec["status"] == "unstructured"
    assert r.output_text == upstream.plain
    (line,) = stderr_of(proxy)
    assert "recognised; unstructured: nothing judged" in line


@pytest.mark.slow
def test_server_side_compaction_passes_through_and_says_nothing_can_be_pruned(own_proxy, upstream):
    """Codex with OpenAI's provider: the input ends with a compaction trigger and the summary comes back
    encrypted; the proxy forwards it untouched and logs that nothing can be pruned."""
    body = {
        "model": "gpt-x",
        "input": [*responses_input(), {"type": "compaction_trigger"}],
    }
    headers = {"session-id": "remote-C", "x-codex-turn-metadata": codex_metadata("compaction", "remote-C")}
    direct, via = _bytes_direct_and_via(upstream, own_proxy, "/v1/responses", body, headers)
    assert via == direct
    compact = httpx.post(own_proxy.url + "/v1/responses/compact", json={"model": "gpt-x", "input": []}, headers=headers)
    assert compact.status_code == 200
    recs = own_proxy.log()
    assert [(r["status"], r["session"]) for r in recs] == [("nothing", "remote-C"), ("nothing", "remote-C")]
    assert all(r["note"].startswith("server-side compaction: nothing to prune") for r in recs)
    assert recs[0]["recognised_by"] == "compaction_trigger"
    lines = stderr_of(own_proxy)
    assert len(lines) == 2 and all("server-side compaction: nothing to prune" in ln for ln in lines)


def _read_until_broken(url: str, body: dict) -> tuple[bytes, type[Exception] | None]:
    got = b""
    try:
        with httpx.stream("POST", url, json=body, timeout=30) as r:
            for chunk in r.iter_raw():
                got += chunk
    except httpx.HTTPError as exc:
        return got, type(exc)
    return got, None


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("kind", ["compaction", "ordinary"])
def test_an_answer_the_upstream_breaks_off_is_forwarded_as_sent(own_proxy, upstream, stream, kind):
    upstream.summary = CC_SUMMARY
    messages = anthropic_history() if kind == "compaction" else [{"role": "user", "content": "hi"}]
    body = {"model": "m", "max_tokens": 100, "stream": stream, "messages": messages}
    upstream.drop_after = 150
    direct, direct_error = _read_until_broken(upstream.url + "/v1/messages", body)
    upstream.drop_after = 150
    via, via_error = _read_until_broken(own_proxy.url + "/v1/messages", body)
    assert direct_error is not None and via_error is not None  # both end broken off, not as a whole answer
    assert len(direct) == 150 and via == direct
    recs = own_proxy.log()
    if kind == "compaction":
        assert recs[-1]["status"] == "upstream" and "broke its answer off after 150 bytes" in recs[-1]["errors"][0]
        assert "forwarded as far as it came" in stderr_of(own_proxy)[-1]
    else:
        assert recs == []


@pytest.mark.slow
def test_a_pattern_that_is_no_phrase_has_every_request_decoded_and_still_recognises(upstream, tmp_path):
    """A ``[proxy] patterns`` entry the screen cannot look for undecoded (here case-insensitive) costs a
    decode of every request on a wire format, says so at start, and recognises what it matches."""
    config = '[proxy]\npatterns = { claude-code = "(?i)\\\\Aplease write the handoff" }\n'
    p = Proxy(upstream.url, tmp_path / "home", config)
    try:
        messages = [*anthropic_history()[:-1], {"role": "user", "content": "Please write the handoff summary now."}]
        r = httpx.post(p.url + "/v1/messages", json={"model": "m", "max_tokens": 100, "messages": messages})
        assert r.status_code == 200
        rec = p.log()[-1]
    finally:
        lines = stderr_of(p)
    assert rec["op"] == "proxy" and rec["host"] == "claude-code" and rec["recognised_by"] == "last user message"
    assert lines[0].startswith("sjc proxy: every request is decoded") and "claude-code" in lines[0]
