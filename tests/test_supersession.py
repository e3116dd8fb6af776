"""Superseded tool outputs: which later calls supersede which outputs, the stubs, and what never goes."""

from __future__ import annotations

import json

from sjc_mcp import relevance, supersession
from sjc_mcp.config import Config
from sjc_mcp.hosts.base import Item

FILLER = "unrelated output line that takes room\n" * 80


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
    assert 3 not in found  # a narrower later read does not cover 40..139 (and 10 lines are too few to cut)


def test_a_full_read_loses_only_the_lines_later_reads_show_again():
    items = [
        call("a", "Read", file_path="big.py"),
        out("a", numbered(1, 100)),
        call("b", "Read", file_path="big.py", offset=21, limit=40),
        out("b", numbered(21, 40, "v2")),
    ]
    found = find(items)
    text = found[1].text
    assert text.startswith("[lines 21-60 superseded by later reads of big.py, from turn 4]")
    assert "line 20 v1" in text and "line 61 v1" in text and "line 21 v1" not in text and "line 60 v1" not in text


def test_same_command_and_same_search_but_not_a_different_one():
    items = [
        call("a", "Bash", command="pytest  -q"),
        out("a", "3 failed" + FILLER),
        call("g", "Grep", pattern="limiter", path="internal"),
        out("g", "internal/a.go:3: limiter" + FILLER),
        call("b", "Bash", command="pytest -q"),
        out("b", "all passed" + FILLER),
        call("h", "Grep", pattern="limiter", path="cmd"),
        out("h", "cmd/x.go: limiter" + FILLER),
    ]
    found = find(items)
    assert set(found) == {1}
    assert found[1].text == "[superseded by the same command (`pytest -q`) at turn 6]"


def test_errors_newest_outputs_failed_later_calls_and_non_reads_are_never_superseded():
    items = [
        call("a", "Bash", command="make"),
        out("a", "error: undefined: Limiter" + FILLER, is_error=True),  # an error: what "Errors and fixes" cite
        call("b", "Read", file_path="y.py"),
        out("b", numbered(1, 30)),
        call("c", "Edit", file_path="y.py", old_string="a", new_string="b"),
        out("c", "The file y.py has been updated."),
        call("d", "Read", file_path="y.py"),
        out("d", "File does not exist.", is_error=True),  # the later read failed: keep the earlier one
        call("e", "Bash", command="make"),
        out("e", "ok" + FILLER),
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
        out("c", "clean" + FILLER),
        sh("d", "git   status"),
        out("d", "clean" + FILLER),
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
    config = Config(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))
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
    config = Config(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))
    config = config.model_copy(update={"tools": config.tools.model_copy(update={"supersede": False})})
    r = relevance.prune_tool_results(history(), config=config)
    assert r.superseded == 0 and all(v.decision != "supersede" for v in r.results)


def test_audit_shows_what_was_superseded_by_what(tmp_path):
    import subprocess

    from tests.conftest import sjc_exe

    log = tmp_path / "log.jsonl"
    config = Config(decision_log=str(log), kill_switch=str(tmp_path / "off"))
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


def test_proxy_prefilter_stubs_a_superseded_read_in_the_compaction_request(tmp_path):
    """A compaction request through ``sjc proxy`` with the prefilter on: the first read of a file read again
    later reaches the compressor as its stub, its call still there; the later read arrives whole."""
    import anthropic

    from tests.fake_upstream import FakeUpstream
    from tests.test_proxy import CC_PROMPT, CC_SUMMARY, Proxy

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
