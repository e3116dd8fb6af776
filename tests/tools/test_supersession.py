"""Superseded tool outputs: which later calls supersede which outputs, the stubs, and what never goes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sjc_mcp.config import Config
from sjc_mcp.hosts.base import Item
from sjc_mcp.tools import relevance, supersession


def filler(tag: str) -> str:
    """Output lines no other output shows (so only the rule under test can cut them)."""
    return "".join(f"\n{tag} output line {k} that takes room" for k in range(80))


def call(cid: str, name: str, **args: object) -> Item:
    return Item(role="tool_call", name=name, call_id=cid, content=json.dumps(args))


def out(cid: str, text: str, is_error: bool = False) -> Item:
    return Item(role="tool_output", call_id=cid, content=text, is_error=is_error)


def numbered(start: int, n: int, tag: str = "v1") -> str:
    return "\n".join(f"{k:>6}→line {k} {tag}" for k in range(start, start + n))


def find(items: list[Item], cutoff: int | None = None) -> dict[int, supersession.Superseded]:
    return supersession.find(items, len(items) if cutoff is None else cutoff, [i + 1 for i in range(len(items))])


def test_same_file_read_again_is_superseded_with_a_stub_naming_the_later_read():
    items = [
        call("a", "Read", file_path="src/app.py"),
        out("a", numbered(1, 50)),
        call("b", "Read", file_path="src/app.py"),
        out("b", numbered(1, 50, "v2")),
    ]
    found = find(items)
    assert list(found) == [1]
    assert found[1].later == 3 and found[1].text == "[superseded by the read of src/app.py at turn 4]"


def test_ranged_read_covered_by_a_later_range_and_not_the_other_way_round():
    items = [
        call("a", "Read", file_path="x.go", offset=60, limit=20),
        out("a", numbered(60, 20)),
        call("b", "Read", file_path="x.go", offset=40, limit=100),
        out("b", numbered(40, 100)),
        call("c", "Read", file_path="x.go", offset=50, limit=10),
        out("c", numbered(50, 10)),
    ]
    found = find(items)
    assert 1 in found and found[1].later == 3
    # a narrower later read does not cover 40..139: only the ten lines it shows again give way, in place
    text = found[3].text
    assert found[3].relies_on == (5,) and found[3].text != found[3].stub
    assert "[lines 50-59 shown again in the read of x.go at turn 6]" in text
    assert "line 49 v1\n[lines 50-59" in text and "turn 6]\n    60→line 60 v1" in text and "line 55 v1" not in text


def test_a_full_read_loses_only_the_lines_later_outputs_show_again_and_keeps_edited_ones():
    items = [
        call("a", "Read", file_path="big.py"),
        out("a", numbered(1, 100)),
        call("b", "Read", file_path="big.py", offset=21, limit=40),
        out("b", numbered(21, 30) + "\n" + numbered(51, 10, "edited")),  # lines 51-60 were edited in between
    ]
    found = find(items)
    text = found[1].text
    assert found[1].relies_on == (3,) and found[1].later == 3
    assert found[1].stub == "[lines 21-50 shown again in the read of big.py at turn 4]"
    assert "    20→line 20 v1\n[lines 21-50 shown again in the read of big.py at turn 4]\n    51→line 51 v1" in text
    assert "line 61 v1" in text and "line 60 v1" in text  # the old text of edited lines stays
    assert not any(f"line {k} v1" in text for k in range(21, 51))


def test_repeated_lines_keep_their_newest_copy_and_short_runs_stay():
    log = "\n".join(f"worker {k} finished job {k * 7}" for k in range(12))
    items = [
        call("a", "Bash", command="tail run.log"),
        out("a", "first look\n" + log),
        call("b", "Bash", command="cat run.log | head -40"),
        out("b", "second look\n" + log + "\nworker 99 crashed with code 137"),
        call("c", "Grep", pattern="worker", path="run.log"),
        out("c", log),
        call("d", "Bash", command="echo two"),
        out("d", "worker 0 finished job 0\nworker 1 finished job 7\nsomething else entirely"),
    ]
    found = find(items)
    assert set(found) == {1, 3}  # the grep holds the newest copy; a two-line run is not worth a marker
    for i in (1, 3):
        assert found[i].relies_on == (5,)
        assert "worker 5 finished" not in found[i].text
    assert (
        found[1].text
        == "first look\n[12 lines shown again in the search Grep " + found[1].text.split("search Grep ")[1]
    )
    assert "worker 99 crashed with code 137" in found[3].text  # shown once: stays


def test_same_command_and_same_search_but_not_a_different_one():
    items = [
        call("a", "Bash", command="pytest  -q"),
        out("a", "3 failed" + filler("a1")),
        call("g", "Grep", pattern="limiter", path="internal"),
        out("g", "internal/a.go:3: limiter" + filler("b2")),
        call("b", "Bash", command="pytest -q"),
        out("b", "all passed" + filler("c3")),
        call("h", "Grep", pattern="limiter", path="cmd"),
        out("h", "cmd/x.go: limiter" + filler("d4")),
    ]
    found = find(items)
    assert set(found) == {1}
    assert found[1].text == "[superseded by the same command (`pytest -q`) at turn 6]"


def test_errors_newest_outputs_failed_later_calls_and_non_reads_are_never_superseded():
    items = [
        call("a", "Bash", command="make"),
        out("a", "error: undefined: Limiter" + filler("e5"), is_error=True),  # an error: what "Errors and fixes" cite
        call("b", "Read", file_path="y.py"),
        out("b", numbered(1, 30)),
        call("c", "Edit", file_path="y.py", old_string="a", new_string="b"),
        out("c", "The file y.py has been updated."),
        call("d", "Read", file_path="y.py"),
        out("d", "File does not exist.", is_error=True),  # the later read failed: keep the earlier one
        call("e", "Bash", command="make"),
        out("e", "ok" + filler("f6")),
        call("f", "Edit", file_path="y.py", old_string="a", new_string="b"),
        out("f", "The file y.py has been updated."),
    ]
    assert find(items) == {}


def test_codex_shell_reads_and_commands():
    def sh(cid: str, cmd: str) -> Item:
        return Item(role="tool_call", name="shell", call_id=cid, content=json.dumps({"command": ["bash", "-lc", cmd]}))

    items = [
        sh("a", "sed -n '1,200p' src/routes.py"),
        out("a", "".join(f"route {k}\n" for k in range(1, 201))),
        sh("b", "cat src/routes.py"),
        out("b", "".join(f"route {k} new\n" for k in range(1, 221))),
        sh("c", "git status"),
        out("c", "clean" + filler("g7")),
        sh("d", "git   status"),
        out("d", "clean" + filler("h8")),
    ]
    found = find(items)
    assert found[1].text == "[superseded by the read of src/routes.py at turn 4]"
    assert found[5].text.startswith("[superseded by the same command (`git status`)")


def test_protected_recent_turns_are_never_touched():
    items = [
        call("a", "Read", file_path="z.py"),
        out("a", numbered(1, 40)),
        call("b", "Read", file_path="z.py"),
        out("b", numbered(1, 40)),
    ]
    assert find(items, cutoff=1) == {}


def history() -> list[Item]:
    items = [Item(role="user", content="Fix the limiter.")]
    for turn in range(10):
        cid = f"r{turn}"
        items += [
            Item(role="assistant", content=f"step {turn}"),
            call(cid, "Read", file_path="internal/limiter.go"),
            out(cid, numbered(1, 120, f"v{turn}")),
        ]
    items.append(Item(role="user", content="now run the race detector"))
    return items


def test_the_pipeline_stubs_superseded_results_keeps_every_call_and_logs_what_superseded_what(tmp_path):
    config = Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))
    items = history()
    r = relevance.prune_tool_results(items, config=config)
    assert r.status == "judged" and r.superseded >= 3
    calls = [it for it in r.messages if it.role == "tool_call"]
    outs = [it for it in r.messages if it.role == "tool_output"]
    assert len(calls) == len(outs) == 10  # every call keeps a result
    assert outs[-1].content == items[-2].content  # the newest read stays whole
    sup = [v for v in r.results if v.decision == "supersede"]
    assert all(v.note and v.note.startswith("[superseded by the read of internal/limiter.go") for v in sup)
    assert all(v.superseded_by is not None and v.superseded_by > v.index for v in sup)
    record = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[-1])
    assert record["superseded"] == len(sup)
    assert any(row.get("superseded_by") is not None for row in record["results"])


def test_supersession_can_be_switched_off(tmp_path):
    config = Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))
    config = config.replace(tools=dataclasses.replace(config.tools, supersede=False))
    r = relevance.prune_tool_results(history(), config=config)
    assert r.superseded == 0 and all(v.decision != "supersede" for v in r.results)


def test_audit_shows_what_was_superseded_by_what(tmp_path):
    import subprocess

    from tests.conftest import sjc_exe

    log = tmp_path / "log.jsonl"
    config = Config.of(decision_log=str(log), kill_switch=str(tmp_path / "off"))
    relevance.prune_tool_results(history(), config=config, meta={"session": "s-sup", "boundary_id": "b-sup"})
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    r = subprocess.run([sjc_exe(), "audit", "--log", str(log)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "superseded " in r.stdout
    assert "[superseded by the read of internal/limiter.go" in r.stdout
    out = json.loads(
        subprocess.run(
            [sjc_exe(), "audit", "--json", "--log", str(log)], capture_output=True, text=True, env=env, timeout=60
        ).stdout
    )
    tools = out["boundaries"][0]["tools"][0]
    assert tools["superseded"] >= 3 and all("superseded by the read" in x for x in tools["superseded_by"])


@pytest.mark.slow
def test_proxy_prefilter_stubs_a_superseded_read_in_the_compaction_request(tmp_path):
    """A compaction request through ``sjc proxy`` with the prefilter on: the first read of a file read again
    later reaches the compressor as its stub, its call still there; the later read arrives whole."""
    import anthropic

    from tests.fake_upstream import FakeUpstream
    from tests.proxy.test_proxy import CC_PROMPT, CC_SUMMARY, Proxy

    upstream = FakeUpstream()
    proxy = Proxy(upstream.url, tmp_path / "home", "[proxy]\nprefilter = true\n[tools]\nkeep_recent_turns = 1\n")
    try:
        upstream.summary = CC_SUMMARY
        first = "\n".join(f"{k:>6}→OLD-CONTENT line {k}" for k in range(1, 400))
        second = "\n".join(f"{k:>6}→NEW-CONTENT line {k}" for k in range(1, 400))
        messages: list[dict] = [{"role": "user", "content": "fix test_parse_duration"}]
        for i, text in enumerate([first, "48 passed", second]):
            name, args = ("Read", {"file_path": "/w/units.py"}) if i != 1 else ("Bash", {"command": "pytest -q"})
            messages += [
                {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": text}]},
            ]
        messages.append({"role": "user", "content": CC_PROMPT})
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        client.messages.create(model="m", max_tokens=100, messages=messages)
        sent = json.loads(upstream.requests[-1]["raw"])
        results = [
            b["content"]
            for m in sent["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        assert len(results) == 3  # every call keeps a result
        assert results[0].startswith("[superseded by the read of /w/units.py at turn")
        assert "OLD-CONTENT" not in json.dumps(sent) and results[2] == second
        tools = [r for r in proxy.log() if r.get("op") == "tools"][-1]
        assert tools["superseded"] == 1
    finally:
        proxy.stop()
        upstream.close()


def test_an_output_a_marker_points_to_is_never_cut_and_a_partly_superseded_one_is_judged_on_what_remains(tmp_path):
    from sjc_mcp.models import JudgeOutput, Judgment

    class Fixed:
        name, model = "fixed", "fixed-1"

        def __init__(self, scores: dict[int, float]):
            self.scores, self.texts = scores, {}

        def relevance(self, request):
            self.texts = {r.id: r.text for r in request.results}
            return JudgeOutput(
                name=self.name,
                model=self.model,
                judgments=[Judgment(entry_id=r.id, score=self.scores[r.id]) for r in request.results],
            )

    shared = "\n".join(f"shared line {k} of the module" for k in range(30))
    items = [
        Item(role="user", content="look at the module"),
        call("a", "Bash", command="cat notes.txt"),
        out("a", "notes header\n" + shared + "\nnotes footer only here" + filler("a")),
        call("b", "Bash", command="git show HEAD:module.txt"),
        out("b", shared + filler("b")),
        Item(role="user", content="thanks"),
    ]
    tools = {"keep_recent_turns": 0, "min_reduction": 0.0, "truncate_below": 0.5, "truncate_keep_chars": 200}
    config = Config.of(decision_log=str(tmp_path / "l.jsonl"), kill_switch=str(tmp_path / "off"), tools=tools)
    # a stays (as what remains of it), b would be cut: b holds the lines a's marker names, so it stays whole
    judge = Fixed({0: 0.9, 1: 0.1})
    r = relevance.prune_tool_results(items, config=config, judge=judge)
    d = {v.index: v.decision for v in r.results}
    assert " shown again in the output of `git show HEAD:module.txt`" in judge.texts[0]  # judged on what remains
    assert d == {2: "supersede", 4: "keep"} and r.messages[4].content == items[4].content
    assert r.messages[2].content.startswith("notes header\n[30 lines shown again in the output of `git show")
    # a is cut as well: from what remained of it, so the marker survives the cut and b is no longer relied on
    r = relevance.prune_tool_results(items, config=config, judge=Fixed({0: 0.1, 1: 0.1}))
    assert {v.index: v.decision for v in r.results} == {2: "truncate", 4: "truncate"}
    assert r.messages[2].content.startswith("notes header\n[30 lines shown again in the output of `git show")
    assert "characters of this result were cut" in r.messages[2].content


def test_a_stub_longer_than_the_output_is_not_used_and_a_short_result_is_never_truncated(tmp_path):
    items = [
        Item(role="user", content="clean up"),
        call("a", "Bash", command="rm -f build/REVIEW.md"),
        out("a", "done"),
        call("b", "Bash", command="rm -f build/REVIEW.md"),
        out("b", "done"),
        Item(role="user", content="thanks"),
    ]
    assert find(items) == {}
    config = Config.of(
        decision_log=str(tmp_path / "l.jsonl"),
        kill_switch=str(tmp_path / "off"),
        tools={"keep_recent_turns": 0, "min_reduction": 0.0, "truncate_below": 1.0},
    )
    r = relevance.prune_tool_results(items, config=config)
    assert [v.decision for v in r.results] == ["keep", "keep"] and r.messages == items


def test_codex_reads_after_cd_and_with_nl_head_and_pipes():
    def sh(cmd: str) -> Item:
        return Item(role="tool_call", name="shell", call_id="x", content=json.dumps({"command": ["bash", "-lc", cmd]}))

    root = "/Users/dev/monorepo"
    t = supersession.target(sh(f"cd {root} && sed -n '1,200p' 'apps/web/src/app/(protected)/page.tsx'"))
    assert (t.kind, t.key, t.start, t.end) == ("read", f"{root}/apps/web/src/app/(protected)/page.tsx", 0, 200)
    assert t.shown == "apps/web/src/app/(protected)/page.tsx"
    t = supersession.target(sh(f"cd {root} && nl -ba apps/web/src/page.tsx"))
    assert (t.key, t.start, t.end) == (f"{root}/apps/web/src/page.tsx", 0, None)
    t = supersession.target(sh("nl -ba src/x.ts | sed -n '40,80p'"))
    assert (t.key, t.start, t.end) == ("src/x.ts", 39, 80)
    t = supersession.target(sh("head -n 30 README.md"))
    assert (t.key, t.start, t.end) == ("README.md", 0, 30)
    assert supersession.target(sh("cat -n a/../b.py")).key == "a/../b.py"
    assert supersession.target(sh(f"cd {root} && cat ../other/b.py")).key == "/Users/dev/other/b.py"
    assert supersession.target(sh(f"cd {root} && rg limiter -n")).kind == "command"
    # a full read with nl after cd covers an earlier ranged sed of the same file from the same folder
    items = [
        Item(
            role="tool_call",
            name="shell",
            call_id="a",
            content=json.dumps({"command": ["bash", "-lc", f"cd {root} && sed -n '1,50p' src/page.tsx"]}),
        ),
        out("a", "\n".join(f"line {k} of the page" for k in range(1, 51))),
        Item(
            role="tool_call",
            name="shell",
            call_id="b",
            content=json.dumps({"command": ["bash", "-lc", f"cd {root} && nl -ba src/page.tsx"]}),
        ),
        out("b", "\n".join(f"{k:>6}\tline {k} of the page, edited" for k in range(1, 81))),
    ]
    assert find(items)[1].text == "[superseded by the read of src/page.tsx at turn 4]"
