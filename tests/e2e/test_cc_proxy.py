"""``sjc proxy`` inside the real Claude Code CLI: the summary Claude Code stores and carries on with is the
pruned one, for a manual ``/compact``, a proactive auto-compaction and a reactive one.

Claude Code talks to ``sjc proxy`` (``ANTHROPIC_BASE_URL``), which forwards to the scripted model
(``cc_fake``). Facts of the real CLI this relies on (2.1.332): ``claude -p "/compact" --continue``
compacts the newest session of the working directory; with ``CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000``
an answer reporting 95,000 input tokens makes it compact before its next request (without the variable
the 1M-context default model does not compact ahead of time); a 400 "prompt is too long" makes it
compact and send the request again. Requests carry the session id in ``x-claude-code-session-id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cc_fake
import pytest
from cc_fake import FakeClaudeAPI
from cc_host import ANSWER, User, after, sections, sjc_proxy

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cc-proxy")


@pytest.fixture(scope="module")
def user(root: Path, fake: FakeClaudeAPI) -> Iterator[User]:
    home = root / "home"
    with sjc_proxy(home, fake.url) as url:
        yield User(home, url)


def compact_manually(user: User, fake: FakeClaudeAPI, work: Path) -> str:
    sid = user.session(work)
    user.compact(work)
    user.ask(work, ANSWER)
    return sid


def compact_ahead(user: User, fake: FakeClaudeAPI, work: Path) -> str:
    sid = user.session(work)
    fake.report_input_tokens(sid, 95_000)
    user.ask(work, ANSWER, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"})
    return sid


def compact_on_overflow(user: User, fake: FakeClaudeAPI, work: Path) -> str:
    sid = user.session(work)
    fake.fail_prompt_too_long(sid)
    user.ask(work, ANSWER)
    return sid


SCENARIOS = {"manual": compact_manually, "auto": compact_ahead, "reactive": compact_on_overflow}
# the trigger Claude Code records for each (a reactive compaction is recorded as "auto")
TRIGGER = {"manual": "manual", "auto": "auto", "reactive": "auto"}
SESSIONS: dict[str, str] = {}  # scenario -> session id, for the checks across scenarios


def proxy_record(user: User, sid: str, asked_at: float) -> dict:
    """The proxy's decision log record of the compaction the model answered at ``asked_at``."""
    recs = [r for r in user.decisions() if r.get("op") == "proxy" and r.get("status") == "judged"]
    mine = [r for r in recs if r.get("session") == sid]
    if mine:
        return mine[-1]
    # records without a session id: the one written right after the answer
    from datetime import datetime

    def t(r: dict) -> float:
        return datetime.fromisoformat(str(r.get("time")).replace("Z", "+00:00")).timestamp()

    near = [r for r in recs if asked_at - 1 <= t(r) <= asked_at + 30]
    assert near, f"no judged proxy record after the compaction at {asked_at} in {user.decision_log}"
    return min(near, key=t)


@pytest.mark.parametrize("how", list(SCENARIOS))
def test_claude_code_stores_and_uses_the_pruned_summary(user: User, fake: FakeClaudeAPI, root: Path, how: str) -> None:
    sid = SESSIONS[how] = SCENARIOS[how](user, fake, root / f"work-{how}")
    stored = user.compactions(sid)
    assert [c.trigger for c in stored] == [TRIGGER[how]], f"{how}: compactions in the transcript: {stored}"
    asked = [e for e in fake.requests(sid) if e.kind == "compaction"]
    assert len(asked) == 1, f"{how}: the model was asked for {len(asked)} summaries"
    overflowed = [e for e in fake.requests(sid) if e.kind == "too_long"]
    assert len(overflowed) == (how == "reactive"), f"{how}: {len(overflowed)} 'prompt is too long' answers"
    answer = asked[0].answer
    assert all(x in answer["text"] for x in cc_fake.INVENTED) and answer["supported"], "the fake wrote no test case"

    # the proxy judged this compaction: every invented entry pruned, no supported one
    rec = proxy_record(user, sid, asked[0].time)
    assert rec.get("host") == "claude-code" and rec.get("mode") == "enforce", rec
    pruned = [e.get("text", "") for e in rec.get("entries", []) if e.get("decision") == "prune"]
    for key in cc_fake.INVENTED_KEYS:
        assert any(key in p for p in pruned), f"{how}: {key!r} not pruned: {pruned}"
    assert not [p for p in pruned if p.strip() in {s.strip() for s in answer["supported"]}], pruned

    # what Claude Code stored: invented entries gone, supported ones byte for byte, every heading
    summary = stored[0].summary
    lines = summary.splitlines()
    assert not [k for k in cc_fake.INVENTED_KEYS if k in summary], f"{how}: invented entries stored:\n{summary}"
    assert all(s in lines for s in answer["supported"]), f"{how}: a supported entry changed:\n{summary}"
    assert all(h in lines for h in cc_fake.HEADINGS), f"{how}: a heading is missing:\n{summary}"

    # and what it carries on with: the next ordinary request holds that summary, not the invented entries
    nxt = after(fake.requests(sid), asked[0])
    assert nxt, f"{how}: no request after the compaction"
    assert sections(summary) in nxt[0].text, f"{how}: the next request does not carry the stored summary"
    assert not [k for k in cc_fake.INVENTED_KEYS if k in nxt[0].text]


def test_without_pruning_the_invented_entries_reach_claude_code(root: Path, fake: FakeClaudeAPI) -> None:
    """The control: with the proxy in shadow mode the same session stores every invented entry, so the
    checks above see sjc's work, not the scenario's."""
    home = root / "shadow-home"
    with sjc_proxy(home, fake.url, SJC_MODE="shadow") as url:
        user = User(home, url)
        sid = compact_manually(user, fake, root / "work-shadow")
    summary = user.compactions(sid)[0].summary
    assert all(k in summary for k in cc_fake.INVENTED_KEYS), summary
    recs = [r for r in user.decisions() if r.get("op") == "proxy" and r.get("status") == "judged"]
    assert recs and recs[-1].get("mode") == "shadow"


def test_proxy_records_name_the_session(user: User, fake: FakeClaudeAPI, root: Path) -> None:
    """Each proxy record names the Claude Code session (``x-claude-code-session-id``), so ``sjc audit
    --session`` finds it."""
    sid = SESSIONS.get("manual") or compact_manually(user, fake, root / "work-session-id")
    recs = [r for r in user.decisions() if r.get("op") == "proxy" and r.get("status") == "judged"]
    assert recs
    if not any(r.get("session") == sid for r in recs):
        pytest.xfail(f"proxy records carry no session id yet (session {recs[-1].get('session')!r}, expected {sid})")
