"""``[proxy] prefilter`` inside the real Codex CLI: a manual compaction request reaches the model with the
output of a command run again later stubbed, every call still answered; the ordinary requests reached the
model untouched.

Three ``codex exec`` turns (a first prompt, two ``resume --last``) each run the fake's shell command once,
with usage reported far below the compaction limit so nothing compacts on its own; then ``codex
app-server``'s ``thread/compact/start`` compacts (what the TUI's /compact does). Facts of the real CLI
this relies on (0.171.0): the shell call is ``exec_command`` with ``{"cmd": ...}``, its output a
``function_call_output`` item whose ``output`` is a string; a compaction request carries the whole history
as ``input`` items.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import codex_fake as fake_model
import pytest
from codex_fake import FakeModel
from codex_harness import Codex, sjc_proxy

pytestmark = pytest.mark.e2e

CONFIG = "[proxy]\nprefilter = true\n[tools]\nkeep_recent_turns = 1\nmin_reduction = 0.0\ntruncate_below = 0.0\n"


def calls_and_outputs(body: dict[str, Any]) -> tuple[dict[str, dict], dict[str, str]]:
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    calls = {str(i.get("call_id")): i for i in items if i.get("type") == "function_call"}
    outs = {}
    for i in items:
        if i.get("type") == "function_call_output":
            out = i.get("output")
            outs[str(i.get("call_id"))] = out if isinstance(out, str) else json.dumps(out)
    return calls, outs


def test_the_compressor_sees_a_command_run_again_stubbed(tmp_path: Path) -> None:
    cx = Codex(tmp_path)
    (cx.home / ".config" / "sjc").mkdir(parents=True)
    (cx.home / ".config" / "sjc" / "config.toml").write_text(CONFIG)
    with FakeModel(big_usage=500) as fake, sjc_proxy(fake.base_url, cx.env, tmp_path / "proxy.log") as proxy:
        cx.write_config(proxy + "/v1", compact_limit=20000)
        for args in (
            [fake_model.PROMPT],
            ["resume", "--last", "Check it again."],
            ["resume", "--last", "Check once more."],
        ):
            r = cx.run(*args)
            assert r.returncode == 0, r.stderr[-2000:]
        with cx.app_server() as srv:
            srv.compact(cx.thread_id())
        reqs = fake.responses()

    comp = [q for q in reqs if q["answer"]["tag"] == "compaction"]
    assert len(comp) == 1, [q["answer"]["tag"] for q in reqs]
    calls, outs = calls_and_outputs(comp[0]["body"])
    assert set(calls) == set(outs) and len(calls) == 3, "a call lost its output (or an output its call)"
    order = list(calls)
    assert all(fake_model.COMMAND in calls[c].get("arguments", "") for c in order), calls
    # the two earlier runs are stubs naming the later run of the same command; the newest arrives whole
    for c in order[:2]:
        assert outs[c].startswith(f"[superseded by the same command (`{fake_model.COMMAND}`) at turn "), outs[c]
    assert fake_model.RELEASE_NOTE in outs[order[2]]

    # the ordinary request before the compaction carried every output whole: the prefilter touched none
    before = [q for q in reqs[: reqs.index(comp[0])] if q["answer"]["tag"] != "compaction"]
    _, seen = calls_and_outputs(before[-1]["body"])
    assert all(fake_model.RELEASE_NOTE in seen[c] for c in order)

    tools = [d for d in cx.decisions() if d.get("op") == "tools" and d.get("step") == "prefilter"]
    assert tools and tools[-1]["superseded"] == 2, tools
    assert tools[-1]["api"] == "responses" and tools[-1]["surface"] == "proxy", tools[-1]
