"""Team mode: one ``sjc-mcp`` over streamable HTTP for several users, its judge a model behind an
OpenAI-compatible server on the team's machines (here a fake chat-completions server on 127.0.0.1), each
user's decisions in their own log under ``--log-dir``. Driven through the MCP SDK's streamable-HTTP client."""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from mcp import ClientSession

from tests.conftest import sjc_exe
from tests.fakes import FakeAPI
from tests.test_server import EX, _evidence
from tests.test_server_http import TOKEN, _env, _http_session, http_server

SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


@pytest.fixture
def judge_api():
    api = FakeAPI("chat", model="team-judge-8b")
    yield api
    api.close()


def _team_config(tmp_path, api: FakeAPI):
    cfg = tmp_path / "team.toml"
    cfg.write_text(
        'judge = "openai"\n'
        "[openai]\n"
        f'base_url = "{api.url}"\n'
        'model = "team-judge-8b"\n'
        'api_key_env = "SJC_TEAM_JUDGE_KEY"\n'
    )
    return cfg


def _evidence_with_secret():
    return [*_evidence(), {"kind": "tool_output", "name": "env", "content": f"$ cat .env\nOPENAI_API_KEY={SECRET}\n"}]


def _call(url: str, user_headers: dict[str, str], tool: str = "prune_summary"):
    summary = (EX / "summary.md").read_text()

    async def go(s: ClientSession):
        return await s.call_tool(tool, {"summary": summary, "evidence": _evidence_with_secret()})

    return anyio.run(lambda: _http_session(url, go, user_headers))


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verify(path, tmp_path):
    return subprocess.run(
        [sjc_exe("sjc"), "audit", "--log", str(path), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
    )


def test_two_users_two_logs_judged_by_the_team_model(tmp_path, judge_api):
    logs = tmp_path / "logs"
    cfg = _team_config(tmp_path, judge_api)
    env = _env(tmp_path, SJC_MCP_TOKEN=TOKEN, SJC_TEAM_JUDGE_KEY="local-key")
    with http_server(tmp_path, "--config", str(cfg), "--log-dir", str(logs), env=env) as (_, url, _err):
        a1 = _call(url, {"X-SJC-User": "alice"})
        a2 = _call(url, {"X-SJC-User": "alice"}, "judge_summary")
        b1 = _call(url, {"X-SJC-User": "bob"})
        evil = _call(url, {"X-SJC-User": "../../etc/passwd"}, "judge_summary")
    for r in (a1, a2, b1, evil):
        assert not r.is_error, r.content
    assert a1.structured_content["judge"]["name"] == "openai"
    assert "Publish version 2.0" not in a1.structured_content["pruned_summary"]
    # the judge is the team's model: every entry went to it, and no secret of the evidence did
    assert judge_api.requests and all(r["path"].endswith("/chat/completions") for r in judge_api.requests)
    assert SECRET not in json.dumps([r["body"] for r in judge_api.requests])
    # one log per user, under the folder, the name made safe; the config's own decision_log untouched
    assert sorted(p.name for p in logs.iterdir() if p.suffix == ".jsonl") == [
        "_.._etc_passwd.jsonl",
        "alice.jsonl",
        "bob.jsonl",
    ]
    assert not (tmp_path / "log.jsonl").exists()
    alice, bob = _records(logs / "alice.jsonl"), _records(logs / "bob.jsonl")
    assert [r["op"] for r in alice] == ["prune", "judge"] and [r["op"] for r in bob] == ["prune"]
    assert {r["user"] for r in alice} == {"alice"} and {r["user"] for r in bob} == {"bob"}
    assert {r["judge"]["model"] for r in alice + bob} == {"team-judge-8b"}
    for name in ("alice", "bob"):
        v = _verify(logs / f"{name}.jsonl", tmp_path)
        assert v.returncode == 0 and "chain intact" in v.stdout, v.stdout + v.stderr


def test_per_user_tokens_decide_the_user(tmp_path, judge_api):
    """With --tokens, the token names the user: a header claiming another user is replaced, and a token not
    in the file gets 401."""
    import httpx

    logs = tmp_path / "logs"
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# team tokens\nalice {ALICE}\n\nbob {BOB}\n")
    cfg = _team_config(tmp_path, judge_api)
    env = _env(tmp_path, SJC_TEAM_JUDGE_KEY="local-key")
    args = ("--host", "127.0.0.1", "--config", str(cfg), "--log-dir", str(logs), "--tokens", str(tokens))
    with http_server(tmp_path, *args, env=env) as (_, url, _err):
        spoof = _call(url, {"Authorization": f"Bearer {BOB}", "X-SJC-User": "alice"})
        own = _call(url, {"Authorization": f"Bearer {ALICE}"}, "judge_summary")
        shared = httpx.post(url, json={}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert not spoof.is_error and not own.is_error
    assert shared.status_code == 401
    assert [r["op"] for r in _records(logs / "bob.jsonl")] == ["prune"]
    assert [r["op"] for r in _records(logs / "alice.jsonl")] == ["judge"]
    assert _verify(logs / "bob.jsonl", tmp_path).returncode == 0
