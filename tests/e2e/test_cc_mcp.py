"""``sjc-mcp`` inside the real Claude Code CLI: added with ``claude mcp add``, listed as connected, and
called by the model in a ``claude -p`` turn; the tool result Claude Code hands back is checked.

Facts of the real CLI (2.1.332): MCP tools are deferred: the first request lists ``mcp__sjc__*`` by name
only (a system message), and the model fetches a tool's schema with ``ToolSearch``
(``select:mcp__sjc__prune_summary``) before calling it, after which the tool is in the request's tool
list; the scripted model does just that. The result comes back as the tool's JSON text.
"""

from __future__ import annotations

import json

import cc_fake
import hostcli
import pytest
from cc_fake import FakeClaudeAPI
from cc_host import User

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
