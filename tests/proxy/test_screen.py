"""The proxy's screen: a request no host might recognise is never decoded, and every request a host does
recognise passes it (the screen may let an ordinary request through to be decoded, never stop a
compaction)."""

from __future__ import annotations

import json
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjc_mcp.config import DEFAULT_PATTERNS, Config
from sjc_mcp.formats import RawRequest, WireRequest, wire_of
from sjc_mcp.hosts import READERS
from sjc_mcp.proxy import app as proxy_app
from sjc_mcp.proxy import serve as proxy_serve
from sjc_mcp.proxy.request import recognise
from sjc_mcp.proxy.screen import Screen, pattern_marker
from tests.proxy.test_proxy import CC_PROMPT, CODEX_PROMPT

PARTIAL_CC = "Your task is to create a detailed summary of the RECENT portion of the conversation."
GUARDED_CC = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n" + CC_PROMPT


@pytest.mark.parametrize(
    ("pattern", "marker"),
    [
        (DEFAULT_PATTERNS["codex"], b"You are performing a CONTEXT CHECKPOINT COMPACTION"),
        (r"<state_snapshot>", b"state_snapshot"),  # < and > are escaped by some JSON encoders
        (
            DEFAULT_PATTERNS["gemini"],
            b"You are a specialized system component responsible for distilling chat history into a structured XML ",
        ),
        (r"(?s)## Decisions.*## Open TODOs.*## Exact identifiers", b"## Exact identifiers"),  # the longest phrase
        (r"^Summarise the session so far\.$", b"Summarise the session so far."),
        (r"(?s)Compact this:.+?END\Z", b"Compact this:"),
        (r"it's a \"summary\"", b"summary"),  # the longest stretch without a character encoders escape
        (r"<<a>>", None),  # no stretch of four plain characters
        (DEFAULT_PATTERNS["claude-code"], None),  # alternatives: the module's MARKERS cover it
        (r"(?i)summarise", None),
        (r"summar(y|ise)", None),
        (r"[Ss]ummary of", None),
        (r"\d+ entries", None),
        (r"colou?r summary", None),
        (r"a{2} summary", None),
    ],
)
def test_a_pattern_gives_a_marker_only_when_it_is_phrases(pattern, marker):
    assert pattern_marker(pattern) == marker


def raw(body: dict | bytes, path: str = "/v1/messages", headers: dict | None = None, cut: int = 0) -> RawRequest:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    pieces = [data[i : i + cut] for i in range(0, len(data), cut)] if cut else [data]
    return RawRequest(path, wire_of(path) or "", headers or {}, pieces)


@given(
    st.binary(max_size=300),
    st.binary(max_size=300),
    st.lists(st.integers(min_value=1, max_value=80), max_size=12),
)
@settings(max_examples=300, deadline=None)
def test_holds_finds_a_marker_wherever_the_pieces_are_cut(before, after, cuts):
    marker = b"CONTEXT CHECKPOINT"
    data = before + marker + after
    pieces, at = [], 0
    for c in cuts:
        pieces.append(data[at : at + c])
        at += c
    pieces.append(data[at:])
    assert RawRequest("/", "", {}, pieces).holds(b"absent marker", marker)
    # asked as the pieces arrive (each searched once): the same answer once they all have
    growing: list[bytes] = []
    raw = RawRequest("/", "", {}, growing)
    answers = []
    for piece in pieces:
        growing.append(piece)
        answers.append(raw.holds(b"absent marker", marker))
    assert answers[-1] and answers == sorted(answers)  # once found, found
    clean = data.replace(marker, b"")
    if marker not in clean:
        assert not RawRequest("/", "", {}, [clean[i : i + 7] for i in range(0, len(clean), 7)]).holds(marker)


def anthropic(prompt: str, history: int = 3) -> dict:
    messages: list[dict] = []
    for i in range(history):
        messages += [
            {"role": "user", "content": f"step {i}: run the tests"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "pytest"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "48 passed"}]},
        ]
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                {"type": "text", "text": prompt},
            ],
        }
    )
    return {
        "model": "claude-x",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": messages,
    }


def responses(prompt: str, trigger: bool = False) -> dict:
    items: list[dict] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the test"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "48 passed"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
    ]
    if trigger:
        items.append({"type": "compaction_trigger"})
    return {"model": "gpt-x", "instructions": "You are Codex.", "input": items}


def meta(kind: str) -> dict[str, str]:
    return {"x-codex-turn-metadata": json.dumps({"request_kind": kind, "session_id": "s"})}


CASES = [
    ("/v1/messages", anthropic(CC_PROMPT), {}),
    ("/v1/messages", anthropic(PARTIAL_CC), {}),
    ("/v1/messages", anthropic(GUARDED_CC), {}),
    ("/v1/messages", anthropic("Please go on."), {}),
    ("/v1/messages", anthropic(f"Quoting it: {CC_PROMPT}"), {}),
    ("/v1/responses", responses(CODEX_PROMPT), {}),
    ("/v1/responses", responses("Summarise the work so far."), meta("compaction")),
    ("/v1/responses", responses(CODEX_PROMPT), meta("turn")),
    ("/v1/responses", responses("go on", trigger=True), meta("turn")),
    ("/v1/responses/compact", responses("go on"), {}),
    ("/v1/responses", responses("go on"), meta("turn")),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "system", "content": CODEX_PROMPT}]}, {}),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "<state_snapshot>x"}]}, {}),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hello"}]}, {}),
]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize(("path", "body", "headers"), CASES)
def test_every_request_a_host_recognises_passes_the_screen(path, body, headers, ensure_ascii):
    """Over requests of every host's shape (compactions, quotations, ordinary turns): whatever
    ``recognise`` accepts, the screen lets through, wherever the body is cut into pieces."""
    patterns = Config().proxy.patterns
    screen = Screen(patterns)
    data = json.dumps(body, ensure_ascii=ensure_ascii).encode()
    found = recognise(WireRequest(wire_of(path) or "", path, body, headers), patterns)
    for cut in (0, 5, 64):
        passed = screen.might_be_compaction(raw(data, path, headers, cut))
        assert passed or not found, (path, found)


def test_an_ordinary_request_is_not_screened_in_and_a_compaction_is():
    screen = Screen(Config().proxy.patterns)
    assert not screen.everything and screen.why_not == []
    assert not screen.might_be_compaction(raw(anthropic("Please go on.")))
    assert not screen.might_be_compaction(raw(responses("go on"), "/v1/responses", meta("turn")))
    # Codex's turn metadata says what the request is, whatever its words
    assert not screen.might_be_compaction(raw(responses(CODEX_PROMPT), "/v1/responses", meta("turn")))
    assert screen.might_be_compaction(raw(responses("Summarise."), "/v1/responses", meta("compaction")))
    assert screen.might_be_compaction(raw(anthropic(CC_PROMPT)))
    assert screen.might_be_compaction(raw(responses("go on", trigger=True), "/v1/responses"))
    assert screen.might_be_compaction(raw(responses("go on"), "/v1/responses/compact"))


def test_a_host_without_markers_or_a_pattern_sjc_cannot_read_has_every_request_decoded():
    silent = types.SimpleNamespace(recognise=lambda req, pattern: None)
    screen = Screen({}, {**READERS, "newhost": silent})
    assert screen.everything and "newhost" in screen.why_not[0]
    assert screen.might_be_compaction(raw(anthropic("Please go on.")))
    screen = Screen({**DEFAULT_PATTERNS, "mine": r"(?i)please summarise"})
    assert screen.everything and screen.might_be_compaction(raw(anthropic("Please go on.")))
    # a user's own phrase for a host that has a module: its words are looked for too
    screen = Screen({**DEFAULT_PATTERNS, "claude-code": r"\AMake the handoff note now"})
    assert not screen.everything
    assert screen.might_be_compaction(raw(anthropic("Make the handoff note now, please.")))
    assert not screen.might_be_compaction(raw(anthropic("Please go on.")))


def test_an_ordinary_request_through_the_app_is_never_decoded(monkeypatch):
    """The relay itself: a request no host might recognise goes by without ``json.loads``; one that might
    be is decoded and recognised."""
    app = proxy_app.ProxyApp(Config())
    calls = []
    real = json.loads

    def counting(data, *args, **kwargs):
        calls.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(proxy_app.json, "loads", counting)
    body = json.dumps(anthropic("Please go on.", history=200)).encode()
    headers = [(b"content-type", b"application/json")]
    assert app.recognise("anthropic", "/v1/messages", headers, [body[:4000], body[4000:]]) == (None, None)
    assert calls == []
    body = json.dumps(anthropic(CC_PROMPT)).encode()
    req, found = app.recognise("anthropic", "/v1/messages", headers, [body[:100], body[100:]])
    assert calls == [len(body)] and found is not None and found.host == "claude-code" and req is not None


def test_the_heap_headroom_is_kept_where_glibc_is():
    """``sjc proxy`` asks glibc to keep freed heap at hand (mallopt M_TOP_PAD); on another C library it
    changes nothing and says so."""
    import os

    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    assert proxy_serve.keep_heap_headroom() is bool(glibc)


def captured_requests() -> list[tuple[str, str, dict, dict]]:
    """The model requests the real hosts sent in the end-to-end runs (``../shared/e2e/<host>/samples``)."""
    from tests.conftest import SHARED

    out = []
    for path in sorted((SHARED / "e2e").glob("*/samples/*.json")):
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("path"), str) and isinstance(data.get("body"), dict):
            out.append(
                (path.parent.parent.name + "/" + path.name, data["path"], data["body"], data.get("headers") or {})
            )
    return out


def test_every_request_a_real_host_sent_that_is_recognised_passes_the_screen():
    """The captured requests of Hermes, OpenClaw and Gemini CLI (compactions and the turns around them): each
    one a host recognises passes the screen, and the ordinary turns after a compaction do not."""
    from tests.conftest import SHARED, need_shared

    need_shared(SHARED / "e2e")
    samples = captured_requests()
    if not samples:
        pytest.skip("no captured requests in ../shared/e2e/*/samples")
    patterns = Config().proxy.patterns
    screen = Screen(patterns)
    recognised, screened_out = 0, 0
    for name, path, body, headers in samples:
        wire = wire_of(path)
        if wire is None:
            continue  # a path the proxy relays without asking any host (Gemini's own API, here)
        names = {k.lower(): str(v) for k, v in headers.items()}
        found = recognise(WireRequest(wire, path, body, names), patterns)
        for ensure_ascii in (True, False):
            data = json.dumps(body, ensure_ascii=ensure_ascii).encode()
            passed = screen.might_be_compaction(RawRequest(path, wire, names, [data[:1000], data[1000:]]))
            assert passed or not found, (name, found)
        recognised += found is not None
        screened_out += not screen.might_be_compaction(RawRequest(path, wire, names, [json.dumps(body).encode()]))
    assert recognised >= 3  # Gemini CLI's, Hermes' and OpenClaw's compactions are among them
    assert screened_out >= 2  # the turns after a compaction (Hermes', OpenClaw's) are never decoded
