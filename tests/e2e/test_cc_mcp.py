"""``sjc-mcp`` inside the real Claude Code CLI: added with ``claude mcp add``, listed as connected, and
called by the model in a ``claude -p`` turn; the tool result Claude Code hands back is checked.

Facts of the real CLI (2.1.332): MCP tools are deferred: the first request lists ``mcp__sjc__*`` by name
only (a system message), and the model fetches a tool's schema with ``ToolSearch``
(``select:mcp__sjc__prune_summary``) before calling it, after which the tool is in the request's tool
list; the scripted model does just that. The result comes back as the tool's JSON text.

MCP start-up in ``claude -p PROMPT`` (observed on a 2-core machine under load, load average 7-10, the
server's answer delayed by a wrapper): the first request waits for connecting servers only briefly (a
server answering 1.5 s after its start was named in it, one at 2.5 s was not). A server not yet connected
is named in that request as "still connecting", with the note to call ``ToolSearch`` with a relevant
keyword ("ToolSearch will wait for connecting servers"). It waits when nothing already there matches: a
search naming the server (``sjc``, ``sjc prune``) or the tool (``prune_summary``,
``select:mcp__sjc__prune_summary``) waited and loaded the sjc tools; one matching a tool already there
(``prune summary``, ``compaction summary``: the built-in ``SendMessage``) was answered at once without them.
Servers answering 3 to 9 s after their start were used in the first turn so; at 12 s the call failed with
"No such tool available". ``MCP_TIMEOUT=60000`` changed none of these waits. ``"alwaysLoad": true`` in the
server's entry of ``~/.claude.json`` sends the tools' schemas in every request (not deferred) and holds the
first request until the server has connected (a server answering after ~7 s was used without
``ToolSearch``; one at 20 s was not).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cc_fake
import hostcli
import pytest
from cc_fake import FakeClaudeAPI
from cc_host import Run, User

pytestmark = pytest.mark.e2e

TOOL = "mcp__sjc__prune_summary"


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory, fake: FakeClaudeAPI) -> User:
    user = User(tmp_path_factory.mktemp("cc-mcp") / "home", fake.url)
    work = user.home.parent / "work"
    work.mkdir()
    added = user.claude(work, "mcp", "add", "--scope", "user", "sjc", "--", hostcli.sjc_bin("sjc-mcp"))
    assert added.rc == 0, added.stdout + added.stderr
    return user


def test_claude_mcp_list_shows_sjc_connected(user: User) -> None:
    listed = user.claude(user.home.parent / "work", "mcp", "list")
    line = next((x for x in listed.stdout.splitlines() if x.startswith("sjc:")), "")
    assert listed.rc == 0 and "Connected" in line, listed.stdout + listed.stderr


def test_the_model_calls_prune_summary_and_gets_the_pruned_summary(user: User, fake: FakeClaudeAPI) -> None:
    work = user.home.parent / "work"
    run = user.claude(
        work, "-p", f"Prune this compaction summary. [[mcp {TOOL}]]", "--output-format", "json", "--allowedTools", TOOL
    )
    assert run.rc == 0, run.stdout[-800:] + run.stderr[-800:]
    sid = run.json()["session_id"]
    reqs = fake.requests(sid)
    calls = {
        b["id"]: b
        for e in reqs
        if e.kind == "ordinary" and e.answer["block"]["type"] == "tool_use"
        for b in [e.answer["block"]]
        if b["name"] == TOOL
    }
    assert len(calls) == 1, f"the model called {TOOL} {len(calls)} times"
    searched = [
        e.answer["block"] for e in reqs if e.kind == "ordinary" and e.answer["block"].get("name") == "ToolSearch"
    ]
    offered = [e for e in reqs if TOOL in {t.get("name") for t in e.body.get("tools") or []}]
    assert searched or offered, "the sjc tool was never offered to the model"
    results = cc_fake.tool_results(reqs[-1].body)
    [cid] = calls
    assert cid in results, "Claude Code sent no result for the sjc tool call"
    result = json.loads(results[cid])
    entries = result["entries"]
    for key in cc_fake.INVENTED_KEYS:
        assert [e["decision"] for e in entries if key in e["text"]] == ["prune"], key
    supported = [line for line, _ in cc_fake.SUPPORTED]
    for line in supported:
        assert [e["decision"] for e in entries if e["text"].strip() == line.strip()] == ["keep"], line
    pruned = result["pruned_summary"]
    assert not [k for k in cc_fake.INVENTED_KEYS if k in pruned]
    assert all(line in pruned.splitlines() for line in supported), pruned
    assert all(h in pruned.splitlines() for h in cc_fake.HEADINGS)


def test_half_an_emoji_in_the_tool_input_is_answered(user: User, fake: FakeClaudeAPI) -> None:
    """The model's tool input holds a lone surrogate (a string cut inside an emoji's surrogate pair, as the
    scripted API writes it: ``\\ud83d``); Claude Code hands it to sjc-mcp as it is, and the call is answered
    at once with U+FFFD in its place. Without ``server/wire.py`` the SDK dropped that message unanswered and
    Claude Code 2.1.332 waited out its tool timeout: with ``MCP_TOOL_TIMEOUT=20000`` the model got 'MCP server
    "sjc" tool "prune_summary" timed out after 20s'."""
    text, _ = cc_fake.summary()
    line = next(x for x, _ in cc_fake.SUPPORTED if x in text)
    fake.mcp_input = {
        "summary": text.replace(line, line + " \ud83d"),
        "evidence": [{**e, "content": e["content"] + "\n\udc00"} for e in cc_fake.evidence()],
    }
    try:
        run = user.claude(
            user.home.parent / "work",
            *("-p", f"Prune this compaction summary. [[mcp {TOOL}]]", "--output-format", "json"),
            *("--allowedTools", TOOL),
            env={"MCP_TOOL_TIMEOUT": "60000"},
        )
    finally:
        fake.mcp_input = None
    assert run.rc == 0, run.stdout[-800:] + run.stderr[-800:]
    reqs = fake.requests(run.json()["session_id"])
    calls = [b["id"] for e in reqs if e.kind == "ordinary" for b in [e.answer["block"]] if b.get("name") == TOOL]
    result = cc_fake.tool_results(reqs[-1].body)[calls[0]]
    pruned = json.loads(result)["pruned_summary"]
    assert line + " \ufffd" in pruned.splitlines(), pruned
    assert not [k for k in cc_fake.INVENTED_KEYS if k in pruned]


def first_request(fake: FakeClaudeAPI, run: Run) -> str:
    """What Claude Code told the model in the first request of a run (the prompt's markers left out)."""
    first = next(e for e in fake.requests(run.json()["session_id"]) if e.kind == "ordinary")
    return cc_fake.MARKER.sub("", cc_fake.request_text(first.body))


def test_a_server_still_connecting_is_found_through_tool_search(tmp_path: Path, fake: FakeClaudeAPI) -> None:
    """What a server slower than Claude Code's first-request wait gets: a server that takes 4 s to answer
    (sjc-mcp loads the MCP SDK before it answers: 0.5-1 s, up to 3 s on a loaded machine) is named in the
    first request as still connecting, with the note to search for its tools. A ``ToolSearch`` naming the
    server waits for it and loads ``prune_summary``, which the model calls in that same turn, after as many
    model steps as when the server was there from the start. The limit of that wait: a search whose words
    match a tool already there ("prune summary" matches the built-in ``SendMessage``) is answered at once,
    without the connecting server's tools."""
    user = User(tmp_path / "home", fake.url)
    work = tmp_path / "work"
    work.mkdir()
    slow = tmp_path / "slow.py"
    slow.write_text("import os, sys, time\ntime.sleep(4)\nos.execv(sys.argv[1], sys.argv[1:])\n")
    added = user.claude(
        work, "mcp", "add", "--scope", "user", "sjc", "--", sys.executable, str(slow), hostcli.sjc_bin("sjc-mcp")
    )
    assert added.rc == 0, added.stdout + added.stderr
    seen = {}
    for words in ("sjc", "prune summary"):
        fake.search_words = words
        try:
            run = user.claude(
                work, "-p", f"Prune it. [[mcp {TOOL}]]", "--output-format", "json", "--allowedTools", TOOL
            )
        finally:
            fake.search_words = None
        assert run.rc == 0, run.stdout[-800:] + run.stderr[-800:]
        told = first_request(fake, run)
        assert TOOL not in told and "still connecting" in told and "ToolSearch will wait" in told, told[-2000:]
        reqs = fake.requests(run.json()["session_id"])
        steps = [e.answer["block"] for e in reqs if e.kind == "ordinary"]
        assert steps[0]["name"] == "ToolSearch" and steps[0]["input"] == {"query": words}
        seen[words] = [b.get("name") or b["type"] for b in steps]
        if words == "sjc":
            entries = json.loads(cc_fake.tool_results(reqs[-1].body)[steps[1]["id"]])["entries"]
            for key in cc_fake.INVENTED_KEYS:
                assert [e["decision"] for e in entries if key in e["text"]] == ["prune"], key
    assert seen == {"sjc": ["ToolSearch", TOOL, "text"], "prune summary": ["ToolSearch", "text"]}


def test_always_load_holds_the_first_request_until_the_server_answers(tmp_path: Path, fake: FakeClaudeAPI) -> None:
    """The setting that takes the model's search out of the first turn: with ``"alwaysLoad": true`` in the
    server's entry, the same 4 s server's tools are in the first request's tool list, whole, and the model
    calls ``prune_summary`` without a ``ToolSearch``."""
    user = User(tmp_path / "home", fake.url)
    work = tmp_path / "work"
    work.mkdir()
    slow = tmp_path / "slow.py"
    slow.write_text("import os, sys, time\ntime.sleep(4)\nos.execv(sys.argv[1], sys.argv[1:])\n")
    added = user.claude(
        work, "mcp", "add", "--scope", "user", "sjc", "--", sys.executable, str(slow), hostcli.sjc_bin("sjc-mcp")
    )
    assert added.rc == 0, added.stdout + added.stderr
    config = user.home / ".claude.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["sjc"]["alwaysLoad"] = True
    config.write_text(json.dumps(data))
    run = user.claude(work, "-p", f"Prune it. [[mcp {TOOL}]]", "--output-format", "json", "--allowedTools", TOOL)
    assert run.rc == 0, run.stdout[-800:] + run.stderr[-800:]
    reqs = [e for e in fake.requests(run.json()["session_id"]) if e.kind == "ordinary"]
    assert TOOL in {t.get("name") for t in reqs[0].body.get("tools") or []}
    assert [e.answer["block"].get("name") or e.answer["block"]["type"] for e in reqs] == [TOOL, "text"]
