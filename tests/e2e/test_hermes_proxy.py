"""``sjc proxy`` in front of the real Hermes Agent (hermes-agent 0.19.0, offline): Hermes' compaction request
recognised by its shape and judged against the history Hermes writes into its prompt.

Facts of hermes-agent 0.19.0 these tests rely on, observed in their runs: with ``model.base_url`` at the
proxy, every request (turns, the compaction, the title) goes through it on the Chat Completions wire; the
compaction is one user message (the summarization prompt with the turns serialised in it, no tools, not
streamed) and carries no session id; Hermes keeps the answer it gets (here the pruned one) as its summary
and as the next compaction's PREVIOUS SUMMARY. Before it writes the prompt Hermes replaces all but the
newest of identical tool outputs with "[Duplicate tool output — same content as a more recent call]" (the
newest may be in the kept tail, outside the prompt): in-band, a call whose output the prompt does not show
still ran, but supports nothing; the scripted model's calls here each print something of their own.
"""

from __future__ import annotations

import pytest
from codex_harness import sjc_proxy
from hermes_fake import NOTICE, PROMPTS, WORKSPACE, FakeHermesModel, invented, summary_message
from hermes_harness import Hermes, config_yaml
from test_hermes_plugin import body_from_goal, expected


class Run:
    pass


@pytest.fixture(scope="module")
def via_proxy(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Hermes -> sjc proxy -> the scripted model: three turns (the third compacts), a fourth, a manual
    ``/compress``, a fifth. No plugin."""
    hm = Hermes(tmp_path_factory.mktemp("hermes-proxy"), WORKSPACE)
    out = Run()
    with (
        FakeHermesModel(vary=True) as fake,
        sjc_proxy(f"http://127.0.0.1:{fake.port}", hm.env, hm.root / "proxy.log") as url,
    ):
        hm.config.write_text(config_yaml(url + "/v1"))
        sid = hm.turn(PROMPTS[0]).session
        for p in PROMPTS[1:4]:
            hm.turn(p, sid)
        with hm.gateway() as gw:
            out.compress = gw.compress(sid, focus="the gateway service")
        hm.turn(PROMPTS[4], sid)
        out.after = [fake.after_compaction(n) for n in range(2)]
        out.prompts = [r["body"]["messages"][0]["content"] for r in fake.compaction_requests()]
        out.stored = hm.active_summaries(sid)
    out.decisions = hm.decisions()
    out.proxy_log = (hm.root / "proxy.log").read_text()
    return out


@pytest.mark.parametrize("n", [0, 1], ids=["automatic", "manual"])
def test_the_proxy_prunes_hermes_compaction(via_proxy: Run, n: int) -> None:
    req = via_proxy.after[n]
    assert req is not None, via_proxy.proxy_log[-2000:]
    text = summary_message(req["body"])
    assert text is not None and NOTICE in text
    assert [e for e in invented(n) if e in text] == []
    assert body_from_goal(text) == expected(n)


def test_the_next_compaction_updates_the_pruned_summary(via_proxy: Run) -> None:
    assert len(via_proxy.prompts) == 2 and "PREVIOUS SUMMARY:" in via_proxy.prompts[1]
    assert [e for e in invented(0) if e in via_proxy.prompts[1]] == []
    assert len(via_proxy.stored) == 1 and body_from_goal(via_proxy.stored[0]) == expected(1)


def test_each_compaction_is_logged_as_hermes(via_proxy: Run) -> None:
    judged = [d for d in via_proxy.decisions if d.get("host") == "hermes" and d.get("surface") == "proxy"]
    assert [d.get("pruned") for d in judged] == [len(invented(0)), len(invented(1))], via_proxy.decisions
