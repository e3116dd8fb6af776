"""The chat file as the real Gemini CLI writes it, read by ``sjc judge|prune --transcript``, ``sjc replay``
and the MCP tools' ``transcript_path`` (Gemini CLI talks to the scripted model directly: no sjc in the loop).

Facts of Gemini CLI 0.61.0 these tests rely on, each seen in their runs:

- The chat file is ``~/.gemini/tmp/<project name>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl``: a metadata
  line ``{sessionId, projectHash, startTime, lastUpdated, kind}`` (again at every resume), message
  records ``{id, timestamp, type: "user" | "gemini" | "info", content, …}`` appended and appended again
  under the same ``id`` as they change (a ``gemini`` record first with ``content: ""``, then with
  ``toolCalls: [{id, name, args, result: [functionResponse parts], status, …}]``), function responses
  also as records of their own (``type: "user"``, ``content: [{functionResponse}]``), and
  ``{"$set": {…}}`` updates: ``lastUpdated``, ``sessionId``, and ``messages`` (the whole history as the
  client holds it, in API form: ``content`` a list of parts).
- The snapshot is written only inside a ``$set.messages`` record, as a ``user`` message whose content is
  ``[{text: snapshot}]``, between the ``<session_context>`` message and the model's "Got it. Thanks for the
  additional context!"; the turns kept after it get new ids. No other file holds it.
- A resumed session (``-r latest``) appends to the same file (and leaves an empty one of its own).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gemini_fake as gf
import pytest
from gemini_fake import FakeGemini, invented_in, pruned
from gemini_harness import Gemini, need_tmux
from test_gemini_mcp import mcp_settings, tool_results
from test_gemini_proxy import INTERACTIVE, headless_session


class Session:
    pass


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """A headless session compressed mid-turn and an interactive one compressed with /compress, straight to
    the model; then, in the headless session, the model calls sjc-mcp's prune_summary on its own chat file."""
    need_tmux()
    root = tmp_path_factory.mktemp("gemini-transcript")
    g = Gemini(root)
    s = Session()
    s.g = g
    with FakeGemini() as fake:
        g.write_settings(fake.base_url)
        headless_session(g, fake)
        s.headless = g.session_file()
        g.tui(INTERACTIVE)
        s.interactive = g.session_file()
        s.compressions = fake.compressions()
    assert s.headless != s.interactive
    s.stored = {f: g.stored_snapshots(f) for f in (s.headless, s.interactive)}
    return s


def judge(g: Gemini, path: Path, *args: str) -> dict[str, Any]:
    r = g.sjc("judge", "--transcript", str(path), "--json", *args)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def test_without_sjc_gemini_keeps_the_invented_entries(session: Session) -> None:
    """The control: straight to the model, the CLI stores answer 2 as it came."""
    for f, c in zip((session.headless, session.interactive), session.compressions, strict=True):
        assert session.stored[f] == [c["verify"]["answer"]["text"]]
        assert len(invented_in(session.stored[f][0])) == 3


@pytest.mark.parametrize("which", ["headless", "interactive"])
def test_judge_transcript_finds_the_snapshot_and_prunes_the_invented_entries(session: Session, which: str) -> None:
    path = getattr(session, which)
    out = judge(session.g, path)
    gone = [e["text"] for e in out["entries"] if e["decision"] == "prune"]
    assert len(gone) == 3 and all(invented_in(t) for t in gone), gone
    r = session.g.sjc("prune", "--transcript", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip("\n") == pruned(session.stored[path][0]).rstrip("\n")


def test_function_responses_are_tool_outputs_never_user_messages(session: Session) -> None:
    """An entry whose values only a tool printed is backed by that function response, named as the CLI named the
    tool; a quote from a "user message" is always one of the prompts typed (never a tool's output, which the
    chat file also stores as a user record, nor the CLI's <session_context>)."""
    out = judge(session.g, session.headless)
    by_text = {e["text"].strip(): e for e in out["entries"]}
    for entry, _ in gf.SUPPORTED[::2]:  # inventory.toml's values: in the read_file output alone
        assert by_text[entry.strip()]["origin"].startswith("tool_output (read_file"), by_text[entry.strip()]
    prompts = [gf.PROMPT_SMOKE, gf.PROMPT_QUEUE, gf.PROMPT_CHANGELOG, gf.PROMPT_LAST]
    for e in out["entries"]:
        if e["origin"] == "user_message":
            assert any(e["quote"] in p for p in prompts), e


def test_replay_judges_every_compaction_under_the_default_root(session: Session) -> None:
    g = session.g
    before = len(g.decisions())
    r = g.sjc("replay", str(g.home / ".gemini" / "tmp"))
    assert r.returncode == 0, r.stderr
    new = g.decisions()[before:]
    judged = [d for d in new if d.get("status") == "judged"]
    assert len(judged) == 2 and {d.get("host") for d in judged} == {"gemini"}, new
    assert all(d.get("pruned") == 3 for d in judged)
    sessions = {json.loads(f.read_text().splitlines()[0])["sessionId"] for f in (session.headless, session.interactive)}
    assert {d.get("session") for d in judged} == sessions


def test_mcp_transcript_path_on_the_real_chat_file(session: Session) -> None:
    """The model calls ``mcp_sjc_prune_summary`` with the path of its own chat file (under ``~/.gemini/tmp``,
    one of sjc-mcp's default allowed roots)."""
    g = session.g
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, mcp_settings())
        r = g.run(f"Judge the compaction. [[mcp prune_summary transcript={session.headless}]]")
        assert r.returncode == 0, r.stderr[-2000:]
        (res,) = tool_results(fake)
    assert res.get("removed") == 3, res
    assert res["pruned_summary"] == pruned(session.stored[session.headless][0])
