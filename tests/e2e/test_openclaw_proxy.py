"""``sjc proxy`` inside the real OpenClaw: every summarising request of a compaction is pruned in-band.

OpenClaw (pinned in ``openclaw_harness``) talks to ``sjc proxy`` through a custom provider whose
``baseUrl`` is the proxy; the proxy forwards to the scripted model. Facts of OpenClaw 2026.9.6 these
tests rely on, each observed in their runs:

- Safeguard is the effective compaction mode whenever ``agents.defaults`` exists. A compaction is one or
  more ordinary model requests to the session's provider (``POST /v1/messages``; ``/v1/chat/completions``
  for ``api: "openai-completions"``) whose system prompt starts "You are a context summarization
  assistant." and whose one user text is ``<conversation>\\n`` + the history serialised as text
  (``[User]:``, ``[Assistant]:``, ``[Assistant tool calls]:``, ``[Tool result]:``) + ``</conversation>``
  + the prompt. No tools, no session id. When the cut point falls inside a turn, a second request
  summarises the turn's prefix ("This is the PREFIX of a turn …").
- Three triggers, each seen here: the usage-based preflight before a turn (the last answer reported
  more input tokens than the window minus the reserve), overflow recovery (the provider answered a
  context-overflow 400: compact, then retry the turn), and ``openclaw sessions compact KEY`` (a Gateway
  RPC; the same requests as an automatic compaction).
- ``recentTurnsPreserve`` (default 3) keeps the last turns verbatim ("## Recent turns preserved verbatim")
  and takes them out of what the model summarises; with histories as short as these nothing would be left
  (OpenClaw writes its fallback body, "No prior history." and "None." under the five headings, without
  asking the model), so these sessions set it to 0 and ``keepRecentTokens`` to 200.
- The safeguard answer must keep its five headings in order and reflect the latest user ask, or OpenClaw
  asks again ("Quality check feedback") and then cancels the compaction; a pruned answer passes.
- OpenClaw stores the answer inside a compaction entry of its SQLite transcript, with its own sections
  around it (``## Latest user request context``, ``**Turn Context (split turn):**`` holding the
  turn-prefix answer with its ``##`` headings demoted to ``###``, ``<read-files>``), and sends it to the
  model at the start of the next request ("The conversation history before this point was compacted
  into the following summary: <summary>…</summary>").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openclaw_fake as F
import pytest
from codex_harness import sjc_proxy
from openclaw_fake import FakeModel, compaction_groups, has_headings_in_order, invented_in, without
from openclaw_harness import OpenClaw

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


class Run:
    oc: OpenClaw
    requests: list[F.Exchange]
    groups: list[list[F.Exchange]]
    stored: list[dict[str, Any]]
    replies: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    proxy_log: str


def _session(
    root: Path,
    *,
    api: str = "anthropic",
    compaction: dict[str, Any] | None = None,
    proxy: bool = True,
    proxy_env: dict[str, str] | None = None,
    triggers: tuple[str, ...] = ("threshold", "overflow", "manual"),
    window: int = 32000,
    big_read: bool = False,
) -> Run:
    """One session: three tool turns, then each trigger in ``triggers`` followed by a turn."""
    oc = OpenClaw(root, api=api)
    run = Run()
    run.oc = oc
    log = root / "proxy.log"
    log.touch()
    with FakeModel() as fake:
        env = {**oc.env, **(proxy_env or {})}
        with sjc_proxy(fake.origin, env, log) if proxy else _direct(fake.origin) as origin:
            cfg = oc.config(origin, {"keepRecentTokens": 200, "recentTurnsPreserve": 0, **(compaction or {})})
            cfg["models"]["providers"]["fake"]["models"][0]["contextWindow"] = window
            oc.write_config(cfg)
            replies = []
            with oc.gateway():
                if big_read:
                    oc.turn(F.PROMPT_LOG)
                replies.append(oc.turn(F.PROMPT_BUILD))
                replies.append(oc.turn(F.PROMPT_PORT))
                if big_read:  # the cut falls inside this turn: the large read is in the summarised history
                    oc.turn(F.PROMPT_CHANGELOG)
                if "threshold" in triggers:
                    fake.report_usage(window, 2)  # both answers of the next turn: the last one counts
                replies.append(oc.turn(F.PROMPT_TESTS))
                if "threshold" in triggers:  # OpenClaw compacts after the turn, in the background
                    assert oc.wait_for_compactions(1), "no compaction after the threshold"
                replies.append(oc.turn(F.PROMPT_BACKOFF))
                if "overflow" in triggers:
                    oc.turn(F.PROMPT_PORT)  # something new to compact
                    fake.fail_overflow(1)
                    replies.append(oc.turn(F.PROMPT_AGAIN))  # overflow: compacts, then retries
                if "manual" in triggers:
                    result = oc.compact()
                    assert result.get("ok") and result.get("compacted"), result
                    replies.append(oc.turn(F.PROMPT_AGAIN))
        run.requests = fake.requests()
    run.groups = compaction_groups(run.requests)
    run.stored = oc.compactions()
    run.replies = replies
    run.decisions = [d for d in oc.decisions() if d.get("surface") == "proxy" or d.get("op") == "proxy"]
    run.proxy_log = log.read_text()
    return run


class _direct:
    def __init__(self, origin: str) -> None:
        self.origin = origin

    def __enter__(self) -> str:
        return self.origin

    def __exit__(self, *exc: Any) -> None:
        pass


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _session(tmp_path_factory.mktemp("openclaw-proxy"))


def _stored_checks(run: Run) -> None:
    """Each stored compaction entry holds its answers pruned of exactly the invented entries."""
    assert len(run.stored) == len(run.groups), (len(run.stored), [[e.answer["format"] for e in g] for g in run.groups])
    for entry, group in zip(run.stored, run.groups, strict=True):
        summary = entry["summary"]
        assert not invented_in(summary), invented_in(summary)
        history = [e for e in group if e.answer["format"] != "turn-prefix"][-1]
        # every byte the model wrote but the invented lines, in one piece
        assert without(history.answer["text"], history.answer["invented"]) in summary
        prefix = [e for e in group if e.answer["format"] == "turn-prefix"][-1:]
        for e in [history, *prefix]:  # the answers OpenClaw keeps (earlier chunks feed the later ones)
            for line in e.answer["supported"]:
                assert line in summary.splitlines(), line


def test_openclaw_compacts_by_threshold_overflow_and_manual(run: Run) -> None:
    kinds = [e.kind for e in run.requests]
    # overflow: the turn's request failed, a compaction followed, then the same turn again
    at = kinds.index("overflow")
    assert kinds[at + 1] == "compaction" and "ordinary" in kinds[at + 1 :]
    assert len(run.groups) == 3, [[e.answer["format"] for e in g] for g in run.groups]
    for group in run.groups:
        assert group[0].answer["format"] == "safeguard"
        assert {e.answer["format"] for e in group} <= {"safeguard", "turn-prefix"}
        for e in group:
            assert e.path == "/v1/messages" and "tools" not in e.body
            assert e.prompt.startswith("<conversation>\n")
            assert "Quality check feedback" not in e.prompt  # OpenClaw's audit passed the first time
    assert any(e.answer["format"] == "turn-prefix" for g in run.groups for e in g)


def test_every_summarising_request_is_recognised_and_judged(run: Run) -> None:
    judged = [d for d in run.decisions if d.get("status") == "judged"]
    requests = [e for g in run.groups for e in g]
    assert len(judged) == len(requests), [d.get("status") for d in run.decisions]
    for d, e in zip(judged, requests, strict=True):
        assert d["host"] == "openclaw"
        pruned = [x["text"] for x in d["entries"] if x["decision"] == "prune"]
        kept = [x["text"] for x in d["entries"] if x["decision"] == "keep"]
        assert pruned == e.answer["invented"], e.answer["format"]
        assert all(s in kept for s in e.answer["supported"]), e.answer["format"]
    assert "Traceback" not in run.proxy_log


def test_openclaw_stores_the_pruned_summary_with_its_headings(run: Run) -> None:
    _stored_checks(run)
    for entry in run.stored:
        assert has_headings_in_order(entry["summary"])
        assert entry["fromHook"] is True  # written by OpenClaw's safeguard


def test_the_next_request_carries_the_pruned_summary(run: Run) -> None:
    for entry, group in zip(run.stored, run.groups, strict=True):
        after = [e for e in run.requests if e.time > group[-1].time and e.kind == "ordinary"]
        assert after, "no request after the compaction"
        sent = after[0]
        texts = F.user_texts(sent.body)
        wrapped = [t for t in texts if t.startswith(F.SUMMARY_WRAPPER)]
        assert wrapped and entry["summary"] in wrapped[0]
        assert not invented_in(sent.raw())


def test_ordinary_traffic_is_untouched(run: Run) -> None:
    """What the model answered reaches the agent as it was (the turns' replies quote the tool results)."""
    texts = [r["result"]["payloads"][0]["text"] for r in run.replies]
    assert texts[:3] == [
        "Done. The last tool result begins: build ok",
        "Done. The last tool result begins: service: ledger-api",
        "Done. The last tool result begins: 3 passed",
    ]
    assert texts[3] == "The summary says retry_backoff_ms is 250."
    ordinary = [d for d in run.decisions if d.get("status") not in ("judged",)]
    assert not ordinary, ordinary


def test_without_sjc_openclaw_stores_the_invented_entries(tmp_path: Path) -> None:
    """The control: the same session straight to the model keeps every invented entry."""
    run = _session(tmp_path, proxy=False, triggers=("threshold",))
    assert len(run.stored) == 1
    assert len(invented_in(run.stored[0]["summary"])) == 4  # three in the history answer, one in the prefix


def test_kill_switch_lets_the_summary_through(tmp_path: Path) -> None:
    run = _session(tmp_path, proxy_env={"SJC_DISABLE": "1"}, triggers=("threshold",))
    assert len(invented_in(run.stored[0]["summary"])) == 4
    assert {d.get("status") for d in run.decisions} == {"disabled"}


def test_default_mode_and_its_update_prompt(tmp_path: Path) -> None:
    """``compaction.mode: "default"``: the pi-style checkpoint prompt, then its UPDATE variant with the
    previous summary in ``<previous-summary>``; both pruned, headings kept."""
    run = _session(tmp_path, compaction={"mode": "default"}, triggers=("threshold", "manual"))
    formats = [[e.answer["format"] for e in g] for g in run.groups]
    assert [f[0] for f in formats] == ["default", "default-update"], formats
    assert "<previous-summary>" in run.groups[1][0].prompt
    _stored_checks(run)
    for entry in run.stored:
        assert has_headings_in_order(
            entry["summary"], ["## Goal", "## Progress", "## Next Steps", "## Critical Context"]
        )


def test_chat_completions_provider(tmp_path: Path) -> None:
    run = _session(tmp_path, api="chat", triggers=("threshold", "overflow"))
    assert all(e.path == "/v1/chat/completions" for g in run.groups for e in g)
    assert all(F.system_text("chat", e.body).startswith(F.SUMMARY_SYSTEM) for g in run.groups for e in g)
    _stored_checks(run)
    judged = [d for d in run.decisions if d.get("status") == "judged"]
    assert len(judged) == sum(len(g) for g in run.groups)


def test_a_large_history_is_summarised_in_chunks_and_merged(tmp_path: Path) -> None:
    """A history larger than a chunk (a 31 KB log read into a 12,000-token window): OpenClaw splits it in
    two stages, summarises each in chunks (later chunks with the running summary in
    ``<previous-summary>``: "Update the previous summary …"), then merges the partial summaries ("Merge
    these partial summaries into a single cohesive summary.", the partial summaries as ``[User]:`` items).
    Every one of these requests is pruned, and so is the split-turn prefix."""
    run = _session(tmp_path, triggers=("manual",), window=12000, big_read=True)
    assert len(run.groups) == 1
    group = run.groups[0]
    formats = [e.answer["format"] for e in group]
    assert formats.count("safeguard") >= 2 and "merge" in formats, formats
    assert any("<previous-summary>" in e.prompt for e in group if e.answer["format"] == "safeguard"), formats
    judged = [d for d in run.decisions if d.get("status") == "judged"]
    assert len(judged) == len(formats)
    for d, e in zip(judged, group, strict=True):
        assert [x["text"] for x in d["entries"] if x["decision"] == "prune"] == e.answer["invented"], e.answer["format"]
    _stored_checks(run)


def _dump(run: Run) -> str:  # for a failing assertion's message
    return json.dumps([[e.answer.get("format") for e in g] for g in run.groups])
