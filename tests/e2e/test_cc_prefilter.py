"""``[proxy] prefilter`` inside the real Claude Code CLI: the compaction request reaches the model with the
superseded read stubbed and the lines a later read shows again cut, every call still answered; the
ordinary requests before it reached the model untouched.

The session reads one file whole, then the same file whole again, then part of another file that an
earlier whole read showed; each ``claude -p`` turn is one user message, so with ``keep_recent_turns = 1``
the reads are candidates. Facts of the real CLI this relies on (2.1.332): a ``Read`` result is the file's
lines numbered ``N<tab>text`` in the request (``     N→text`` in the transcript); a ranged ``Read`` (offset/limit) is not what the fake issues, so the part
is read with ``sed -n`` through ``Bash``, whose output is the bare lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import cc_fake
import pytest
from cc_fake import FakeClaudeAPI
from cc_host import User, sjc_proxy

pytestmark = pytest.mark.e2e

CONFIG = "[proxy]\nprefilter = true\n[tools]\nkeep_recent_turns = 1\nmin_reduction = 0.0\ntruncate_below = 0.0\n"


def tool_uses(body: dict) -> list[dict]:
    return [
        b
        for m in body.get("messages") or []
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def test_the_compressor_sees_superseded_reads_stubbed_and_ordinary_requests_untouched(
    tmp_path: Path, fake: FakeClaudeAPI
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".config" / "sjc").mkdir(parents=True)
    (home / ".config" / "sjc" / "config.toml").write_text(CONFIG)
    work.mkdir()
    limiter = work / "limiter.go"
    limiter.write_text("".join(f"// limiter line {k}: refill bucket {k * 3}\n" for k in range(1, 121)))
    routes = work / "routes.go"
    routes.write_text("".join(f"// route {k}: handler_{k} serves /v1/item/{k}\n" for k in range(1, 81)))
    with sjc_proxy(home, fake.url) as url:
        user = User(home, url)
        first = user.ask(work, f"Look at the limiter. [[read {limiter}]] [[read {routes}]]", cont=False)
        sid = str(first.json().get("session_id"))
        user.ask(work, f"Read the limiter again. [[read {limiter}]]")
        user.ask(work, f"Show routes 11 to 40. [[bash sed -n '11,40p' {routes}]]")
        user.ask(work, "One more step. [[bash echo tests pass]]")
        user.compact(work)

    reqs = fake.requests(sid)
    asked = [e for e in reqs if e.kind == "compaction"]
    assert len(asked) == 1, [e.kind for e in reqs]
    body = asked[0].body
    results = cc_fake.tool_results(body)
    uses = tool_uses(body)
    assert {u["id"] for u in uses} == set(results), "a call lost its result (or a result its call)"
    reads = [u["id"] for u in uses if u["name"] == "Read" and u["input"].get("file_path") == str(limiter)]
    assert len(reads) == 2
    # the first read of the limiter is a stub naming the later read; the later read arrives whole
    assert results[reads[0]].startswith(f"[superseded by the read of {limiter} at turn "), results[reads[0]]
    assert "limiter line 120: refill bucket 360" in results[reads[1]]
    # the routes read lost the 30 lines the later sed shows again, and kept the rest in place
    (routes_read,) = [u["id"] for u in uses if u["name"] == "Read" and u["input"].get("file_path") == str(routes)]
    shown = results[routes_read]
    # (``sed -n 'A,Bp' FILE`` counts as a read of FILE, so the marker names it so)
    assert f"\n[lines 11-40 shown again in the read of {routes} at turn " in shown, shown[:600]
    assert "route 10: handler_10" in shown and "route 41: handler_41" in shown and "route 25: handler_25" not in shown
    (sed,) = [u["id"] for u in uses if u["name"] == "Bash" and "sed -n" in u["input"].get("command", "")]
    assert "route 25: handler_25" in results[sed]

    # the ordinary requests before the compaction carried both reads whole: the prefilter touched none
    ordinary = [e for e in reqs if e.kind == "ordinary" and e.time < asked[0].time]
    last = cc_fake.tool_results(ordinary[-1].body)
    assert "limiter line 1: refill bucket 3" in last[reads[0]] and "route 25: handler_25" in last[routes_read]

    # and the decision log says what superseded what
    recs = [json.loads(x) for x in user.decision_log.read_text().splitlines() if x.strip()]
    tools = [r for r in recs if r.get("op") == "tools" and r.get("step") == "prefilter"]
    assert tools and tools[-1]["superseded"] >= 2, tools
    notes = [r.get("note", "") for r in tools[-1]["results"] if r.get("decision") == "supersede"]
    assert any(n.startswith("[superseded by the read of") for n in notes), notes
    assert any(n.startswith("[lines 11-40 shown again in the read of") for n in notes), notes
