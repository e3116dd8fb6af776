"""``sjc proxy`` inside the real Gemini CLI: both of its compression passes are pruned in-band.

Gemini CLI (pinned in ``gemini_harness``) talks to ``sjc proxy`` (``GOOGLE_GEMINI_BASE_URL``), which forwards
to the scripted model on 127.0.0.1. One headless session (``gemini -p``, resumed with ``-r latest``)
compresses automatically in the middle of a turn; one interactive session (tmux) compresses with
``/compress``.

Facts of Gemini CLI 0.61.0 these tests rely on, each seen in their runs:

- Ordinary turns are ``POST /v1beta/models/M:streamGenerateContent?alt=sse``. A compression is two
  ``POST /v1beta/models/M:generateContent`` requests, not streamed, with no ``tools`` and
  ``generationConfig: {}``: the first pass (system instruction "You are a specialized system component
  responsible for distilling chat history into a structured XML <state_snapshot>.", the history, then a
  user turn "Generate a new <state_snapshot>…") and the verification pass (the same, then answer 1 as a
  model turn and a user turn "Critically evaluate the <state_snapshot>…"). The CLI keeps answer 2, whole.
- Automatic compression: when the last answer reported ``usageMetadata.promptTokenCount`` of at least half
  the model's window (1,048,576 tokens for every Gemini model), checked before each main-loop request, so
  it happens mid-turn, after a tool call and before its result goes back. ``gemini -p "/compress"`` does
  not compress (the text goes to the model); the interactive ``/compress`` does.
- The interactive UI also sends a session-title request (``gemini-3.5-flash-lite:generateContent``, no
  system instruction, no tools) that quotes the conversation, snapshot included.
- The new history is ``[user: <session_context> text + snapshot text, model: "Got it. Thanks for the
  additional context!", …the turns kept verbatim]``; the chat file holds the snapshot only in a
  ``{"$set": {"messages": [...]}}`` record. No request carries a session id (no header, no field).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gemini_fake as gf
import pytest
from codex_harness import sjc_proxy
from gemini_fake import ACK, INVENTED_KEYS, SUPPORTED, FakeGemini, invented_in, pruned
from gemini_harness import GEMINI_CLI_VERSION, Gemini, need_tmux

HEADLESS = [gf.PROMPT_SMOKE, gf.PROMPT_QUEUE, gf.PROMPT_CHANGELOG, gf.PROMPT_LAST]
INTERACTIVE = [gf.PROMPT_SMOKE, gf.PROMPT_QUEUE, "/compress", gf.PROMPT_LAST, "/quit"]


def headless_session(g: Gemini, fake: FakeGemini, env: dict[str, str] | None = None) -> None:
    """Four prompts, one run each; the answer to the third prompt's tool call reports a huge prompt, so the
    CLI compresses before it sends the tool result back."""
    for i, prompt in enumerate(HEADLESS):
        if prompt == gf.PROMPT_CHANGELOG:
            fake.big_next = 1
        r = g.run(prompt, resume=i > 0, env=env)
        assert r.returncode == 0, f"gemini -p ({prompt[:30]}…) exited {r.returncode}: {r.stderr[-2000:]}"


class Run:
    def __init__(self, g: Gemini, fake: FakeGemini, proxy_log: Path) -> None:
        self.g = g
        self.requests = fake.answered()
        self.compressions = fake.compressions()
        self.decisions = [d for d in g.decisions() if d.get("surface") == "proxy" or d.get("op") == "proxy"]
        self.stored = g.stored_snapshots()
        self.model_texts = g.model_texts()
        self.proxy_log = proxy_log.read_text()
        self.sessions = {
            json.loads(f.read_text().splitlines()[0]).get("sessionId") for f in g.chat_files() if f.stat().st_size
        }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    need_tmux()
    root = tmp_path_factory.mktemp("gemini-proxy")
    g = Gemini(root)
    log = root / "proxy.log"
    with FakeGemini() as fake, sjc_proxy(fake.base_url, g.env, log) as proxy:
        g.write_settings(proxy)
        headless_session(g, fake)
        g.tui(INTERACTIVE)
        return Run(g, fake, log)


def judged(run: Run) -> list[dict[str, Any]]:
    return [d for d in run.decisions if d.get("status") == "judged"]


def test_gemini_compresses_in_two_passes_headless_and_interactive(run: Run) -> None:
    assert len(run.compressions) == 2, [r["answer"]["tag"] for r in run.requests]
    for c in run.compressions:
        assert c["verify"] is not None and c["next"] is not None
        for r in (c["first"], c["verify"]):
            assert r["path"].endswith(":generateContent"), r["path"]
            assert not r["body"].get("tools") and r["body"].get("generationConfig") == {}
            assert gf.system_text(r["body"]).startswith(gf.COMPRESS_SYSTEM)
        assert gf.last_user_text(c["first"]["body"]).startswith(gf.FIRST_PROMPTS)
        assert gf.last_user_text(c["verify"]["body"]).startswith(gf.VERIFY_PROMPT)
        assert c["next"]["path"].endswith(":streamGenerateContent?alt=sse")
    title = [r for r in run.requests if r["answer"]["tag"] == "side"]
    assert title and all(not gf.system_text(r["body"]) for r in title)


def test_each_pass_is_judged_and_its_invented_entries_pruned(run: Run) -> None:
    """Both passes: answer 2 is what the CLI keeps; answer 1 is what the verification pass shows the model."""
    records = judged(run)
    assert len(records) == 2 * len(run.compressions), [(d.get("status"), d.get("host")) for d in run.decisions]
    for d in records:
        assert d["host"] == "gemini"
        gone = [e["text"] for e in d["entries"] if e["decision"] == "prune"]
        assert len(gone) == 3 and all(invented_in(t) for t in gone), gone
        kept = "\n".join(e["text"] for e in d["entries"] if e["decision"] != "prune")
        assert all(e.strip() in kept for e, _ in SUPPORTED)
    assert "Traceback" not in run.proxy_log


def test_the_verification_pass_never_sees_the_invented_entries(run: Run) -> None:
    for c in run.compressions:
        body = c["verify"]["body"]
        answer1 = gf.parts_text(gf.contents(body)[-2])
        assert answer1 == pruned(c["first"]["answer"]["text"]), "answer 1 as the CLI sent it back"
        assert not invented_in(json.dumps(body))


def test_gemini_stores_the_pruned_snapshot(run: Run) -> None:
    """Exactly the invented lines are gone; every other byte (placeholders, supported entries, tags) is the
    model's."""
    assert len(run.stored) == len(run.compressions)
    for stored, c in zip(run.stored, run.compressions, strict=True):
        assert stored == pruned(c["verify"]["answer"]["text"])
        for entry in c["verify"]["answer"]["supported"]:
            assert entry + "\n" in stored
        assert all(f"<{t}>" in stored for t in gf.TAGS)


def test_the_next_request_carries_the_pruned_snapshot(run: Run) -> None:
    for stored, c in zip(run.stored, run.compressions, strict=True):
        body = c["next"]["body"]
        first = gf.contents(body)[0]
        assert first["role"] == "user" and gf.parts_text(first).endswith(stored)
        assert gf.parts_text(gf.contents(body)[1]) == ACK
        assert not invented_in(json.dumps(body))
    later = [r for r in run.requests if r["t"] > run.compressions[0]["next"]["t"]]
    assert not any(invented_in(json.dumps(r["body"])) for r in later)


def test_ordinary_traffic_is_untouched(run: Run) -> None:
    """Nothing but the compression passes is judged; every answer reached the CLI as the model wrote it."""
    passes = {id(c[k]) for c in run.compressions for k in ("first", "verify")}
    others = [r for r in run.requests if id(r) not in passes]
    assert len(run.decisions) == len(passes), "a record for a request that is not a compression pass"
    texts = [r["answer"]["text"] for r in others if r["answer"]["tag"] in ("after-tool", "text")]
    assert texts and all(t in run.model_texts for t in texts)
    assert all(r["key"] for r in run.requests), "the API key reached the model API"


def test_proxy_records_name_the_gemini_session(run: Run) -> None:
    """No request names the session; the proxy finds it in the chat file that holds the compressed history's
    newest function call (the proxy runs with the CLI's HOME), so both passes of a compression name the
    session that compressed, and the two sessions here are told apart."""
    records = judged(run)
    by_boundary: dict[str, set[str]] = {}
    for d in records:
        by_boundary.setdefault(d["boundary_id"], set()).add(d.get("session"))
    assert len(by_boundary) == 2 and all(len(s) == 1 for s in by_boundary.values()), by_boundary
    assert {next(iter(s)) for s in by_boundary.values()} == run.sessions


def test_kill_switch_lets_the_snapshot_through(tmp_path: Path) -> None:
    g = Gemini(tmp_path)
    with FakeGemini() as fake, sjc_proxy(fake.base_url, {**g.env, "SJC_DISABLE": "1"}, tmp_path / "proxy.log") as proxy:
        g.write_settings(proxy)
        headless_session(g, fake)
        (c,) = fake.compressions()
    assert g.stored_snapshots() == [c["verify"]["answer"]["text"]]
    assert all(k in g.stored_snapshots()[0] for k in INVENTED_KEYS)
    statuses = [d.get("status") for d in g.decisions()]
    assert statuses and set(statuses) == {"disabled"}, statuses


def test_docs_show_the_verified_setup() -> None:
    """The set-up of docs/hosts/gemini.md is what the fixture above runs: the proxy's default address as
    GOOGLE_GEMINI_BASE_URL."""
    from sjc_mcp.config import Config
    from tests.conftest import ROOT

    docs = (ROOT / "docs" / "hosts" / "gemini.md").read_text()
    listen = Config().proxy.listen
    assert f"GOOGLE_GEMINI_BASE_URL=http://{listen} gemini" in docs
    assert f"`@google/gemini-cli` **{GEMINI_CLI_VERSION}**" in docs or "SJC_E2E_GEMINI_CLI" in os.environ
