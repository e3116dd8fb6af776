"""The tools' logic as plain functions (``sjc_mcp.server.tools``) and the schemas the SDK publishes for them,
in this process. Over a real connection: ``test_server`` (stdio), ``test_server_http`` and ``test_team_mode``."""

from __future__ import annotations

import json

import anyio
import pytest

from sjc_mcp.config import Config, load_config
from sjc_mcp.errors import SJCError
from sjc_mcp.models import EvidenceItem
from sjc_mcp.server import schema, tools
from sjc_mcp.server.app import create_server
from sjc_mcp.server.users import user_id
from tests.hosts.test_hosts import small_cc

SUMMARY = "- the build passed: 48 passed\n- publish version 2.0 next"
EVIDENCE = [EvidenceItem(content="$ pytest\n48 passed in 1.2s")]


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_prune_through_the_plain_function(tmp_path):
    log = tmp_path / "log.jsonl"
    calls = tools.Calls(Config(decision_log=str(log)))
    r = tools.prune_summary(calls, tools.SummaryRequest(SUMMARY, EVIDENCE))
    answer = schema.prune_answer(r)
    assert answer["pruned_summary"] == "- the build passed: 48 passed\n" and answer["removed"] == 1
    assert [e.decision for e in answer["entries"]] == ["keep", "prune"]
    assert [rec.get("surface") for rec in _records(log)] == ["mcp"]


@pytest.mark.parametrize(
    ("req", "needle"),
    [
        (tools.SummaryRequest(), "give a summary, or a transcript_path"),
        (tools.SummaryRequest(SUMMARY, boundary=0), "boundary needs transcript_path"),
        (tools.SummaryRequest(transcript_path="/etc/hostname"), "outside the allowed roots"),
    ],
)
def test_what_the_caller_can_fix_is_one_line(tmp_path, req, needle):
    calls = tools.Calls(Config(decision_log=str(tmp_path / "log.jsonl"), allowed_roots=[str(tmp_path)]))
    with pytest.raises(SJCError, match=needle):
        tools.judge_summary(calls, req)


def test_a_bad_config_is_every_calls_error(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("threshold = 'high'\n")
    calls = tools.Calls(config_path=str(bad))
    for _ in range(2):
        with pytest.raises(SJCError, match=r"^configuration: .*threshold"):
            tools.judge_summary(calls, tools.SummaryRequest(SUMMARY))


def test_remote_callers_log_under_their_user_and_need_explicit_roots(tmp_path):
    """Over HTTP: one log per user under ``log_dir``, the user in the record; ``transcript_path`` only with
    ``allowed_roots`` written in the config file (the defaults name the server user's own folders)."""
    path = small_cc(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    calls = tools.Calls(Config(), log_dir=str(logs), remote=True)
    tools.judge_summary(calls, tools.SummaryRequest(SUMMARY, EVIDENCE), user_header="../alice")
    tools.judge_summary(calls, tools.SummaryRequest(SUMMARY, EVIDENCE), user_header="__alice")
    tools.judge_summary(calls, tools.SummaryRequest(SUMMARY, EVIDENCE))
    given = user_id("../alice", sent=b"../alice")
    assert given.startswith("_alice-") and given != user_id("__alice", sent=b"__alice")
    assert sorted(p.name for p in logs.glob("*.jsonl")) == sorted(
        f"{u}.jsonl" for u in (given, user_id("__alice", sent=b"__alice"), user_id(None))
    )
    assert _records(logs / f"{given}.jsonl")[0]["user"] == given
    # the log name the HTTP server hands over (the token's) is taken as it is
    by_token = user_id("carol", token=b"carol-token-0123456789")
    tools.judge_summary(calls, tools.SummaryRequest(SUMMARY, EVIDENCE), user_header=by_token)
    assert _records(logs / f"{by_token}.jsonl")[0]["user"] == by_token
    with pytest.raises(SJCError, match="needs allowed_roots set in the server's config file"):
        tools.judge_summary(calls, tools.SummaryRequest(transcript_path=str(path)), user_header="bob")
    cfg = tmp_path / "team.toml"
    cfg.write_text(f'allowed_roots = ["{tmp_path}"]\n')
    explicit = tools.Calls(load_config(cfg), log_dir=str(logs), remote=True)
    r = tools.judge_summary(explicit, tools.SummaryRequest(transcript_path=str(path)), user_header="bob")
    assert r.entries and _records(logs / f"{user_id('bob', sent=b'bob')}.jsonl")[0]["transcript"] == str(path)


def test_the_published_schemas():
    """Inputs as the tools always took them; outputs built by pydantic from the package's own dataclasses
    (an entry is ``models.EntryResult``), listing exactly the fields the tools answer with."""

    async def listed():
        return {t.name: t for t in await create_server().list_tools()}

    found = anyio.run(listed)
    summary_in = {"summary", "evidence", "previous_summary", "task", "host", "threshold", "transcript_path", "boundary"}
    history_in = {"messages", "transcript_path", "boundary", "task"}
    answers = {
        "judge_summary": (summary_in, schema.JudgeAnswer),
        "prune_summary": (summary_in, schema.PruneAnswer),
        "judge_tool_results": (history_in, schema.ToolsAnswer),
        "prune_tool_results": (history_in, schema.ToolsPruneAnswer),
    }
    assert set(found) == set(answers)
    for name, (inputs, answer) in answers.items():
        t = found[name]
        assert set(t.input_schema["properties"]) == inputs, name
        assert set(t.output_schema["properties"]) == set(answer.__annotations__), name
        assert set(t.output_schema["required"]) == set(answer.__annotations__), name
        assert t.annotations.read_only_hint and t.annotations.idempotent_hint and not t.annotations.open_world_hint
    entry = found["prune_summary"].output_schema["$defs"]["EntryResult"]
    assert entry["properties"]["decision"]["enum"] == ["keep", "prune", "unjudged"]
    threshold = found["prune_summary"].input_schema["properties"]["threshold"]
    assert threshold["anyOf"][0] == {"maximum": 1.0, "minimum": 0.0, "type": "number"}
