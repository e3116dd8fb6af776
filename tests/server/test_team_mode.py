"""Team mode: one ``sjc-mcp`` over streamable HTTP for several users, its judge a model behind an
OpenAI-compatible server on the team's machines (here a fake chat-completions server on 127.0.0.1), each
user's decisions in their own log under ``--log-dir``. Driven through the MCP SDK's streamable-HTTP client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession

from tests.conftest import sjc_exe
from tests.fakes import FakeAPI
from tests.server.test_server import EX, _evidence
from tests.server.test_server_http import TOKEN, _env, _http_session, http_server

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


def _log_of(logs: Path, user: str) -> Path:
    """The one log of a user (named ``<user>-<12 hex digits>.jsonl``)."""
    (found,) = logs.glob(f"{user}-" + "[0-9a-f]" * 12 + ".jsonl")
    return found


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


@pytest.mark.slow
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
    # one log per user, under the folder, the name made safe (and told apart by a hash of it as sent); the
    # config's own decision_log untouched
    names = {p.name.rsplit("-", 1)[0]: p for p in logs.iterdir() if p.suffix == ".jsonl"}
    assert sorted(names) == ["_.._etc_passwd", "alice", "bob"]
    assert all(p.parent == logs for p in names.values())
    assert not (tmp_path / "log.jsonl").exists()
    alice, bob = _records(names["alice"]), _records(names["bob"])
    assert [r["op"] for r in alice] == ["prune", "judge"] and [r["op"] for r in bob] == ["prune"]
    assert {r["user"] for r in alice} == {names["alice"].stem} and {r["user"] for r in bob} == {names["bob"].stem}
    assert {r["judge"]["model"] for r in alice + bob} == {"team-judge-8b"}
    for name in ("alice", "bob"):
        v = _verify(names[name], tmp_path)
        assert v.returncode == 0 and "chain intact" in v.stdout, v.stdout + v.stderr


@pytest.mark.slow
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
    assert [r["op"] for r in _records(_log_of(logs, "bob"))] == ["prune"]
    assert [r["op"] for r in _records(_log_of(logs, "alice"))] == ["judge"]
    assert _verify(_log_of(logs, "bob"), tmp_path).returncode == 0


# --- the real hosts as team clients (offline: scripted models on 127.0.0.1) -------------------------------

E2E = Path(__file__).resolve().parents[1] / "e2e"


def _e2e_path() -> None:
    if str(E2E) not in sys.path:
        sys.path.insert(0, str(E2E))


PRUNE_TOOL = "mcp__sjc__prune_summary"


def _sjc_line(listed) -> str:
    """The line ``claude mcp list`` prints for the sjc server (empty when there is none)."""
    return next((x for x in listed.stdout.splitlines() if x.startswith("sjc:")), "")


def _claude_user_of(tmp_path, model_url: str, url: str):
    """A Claude Code user (throw-away HOME) with the team server added by the README's command, as user
    alice; and the folder it works in."""
    _e2e_path()
    from cc_host import User

    user = User(tmp_path / "home", model_url)
    work = tmp_path / "work"
    work.mkdir()
    added = user.claude(
        work,
        *("mcp", "add", "--scope", "user", "--transport", "http", "sjc", url),
        *("--header", "Authorization: Bearer ${SJC_MCP_TOKEN}", "--header", "X-SJC-User: alice"),
    )
    assert added.rc == 0, added.stdout + added.stderr
    return user, work


def _claude_prunes(user, work, env: dict[str, str]):
    """One ``claude -p`` turn in which the scripted model calls the team server's prune_summary."""
    return user.claude(
        work,
        *("-p", f"Prune this compaction summary. [[mcp {PRUNE_TOOL}]]", "--output-format", "json"),
        *("--allowedTools", PRUNE_TOOL),
        env=env,
    )


def _codex_calls(cx, url: str, env: dict[str, str]) -> tuple[int, list[str], str]:
    """One ``codex exec`` with the README's block pointing at ``url``, in which the scripted model calls the
    team server: (exit code, what the model was asked, the end of stderr)."""
    _e2e_path()
    import codex_fake
    from codex_fake import FakeModel

    with FakeModel(big_usage=300) as fake:
        cx.write_config(fake.base_url + "/v1", extra="\n" + CODEX_BLOCK.replace(CODEX_URL, url), compact_limit=150_000)
        r = cx.run(f"{codex_fake.MCP_TRIGGER} inline", env=env)
        return r.returncode, fake.tags(), r.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.e2e
def test_claude_code_over_http_with_the_readme_command(tmp_path):
    """Claude Code 2.1.332, added with ``claude mcp add --transport http … --header …`` (the README's command):
    ``claude mcp list`` shows it connected, a wrong token shows the 401, and the model's call lands in the
    user's own log.

    Facts of the real CLI: the headers are kept in ~/.claude.json as given; ``${VAR}`` in a header value is
    expanded from Claude Code's environment when it connects (a wrong token then reads "Server rejected the
    configured Authorization header (HTTP 401)"; OAuth is not tried when headers.Authorization is set)."""
    _e2e_path()
    from cc_fake import FakeClaudeAPI

    logs = tmp_path / "logs"
    fake = FakeClaudeAPI()
    try:
        with http_server(tmp_path, "--log-dir", str(logs)) as (_, url, _err):
            user, work = _claude_user_of(tmp_path, fake.url, url)
            listed = user.claude(work, "mcp", "list", env={"SJC_MCP_TOKEN": TOKEN})
            refused = user.claude(work, "mcp", "list", env={"SJC_MCP_TOKEN": "not-the-team-token"})
            run = _claude_prunes(user, work, {"SJC_MCP_TOKEN": TOKEN})
    finally:
        fake.close()
    assert "Connected" in _sjc_line(listed), listed.stdout + listed.stderr
    assert "401" in _sjc_line(refused), refused.stdout + refused.stderr
    assert run.rc == 0, run.stdout[-800:] + run.stderr[-800:]
    log = _log_of(logs, "alice")
    recs = _records(log)
    assert [r["op"] for r in recs] == ["prune"] and recs[0]["user"] == log.stem and recs[0]["pruned"] >= 1
    assert list(logs.glob("*.jsonl")) == [log]
    assert _verify(log, tmp_path).returncode == 0


@pytest.mark.slow
@pytest.mark.e2e
def test_codex_over_http_with_the_readme_block(tmp_path):
    """Codex 0.171.0 with the README's ``[mcp_servers.sjc]`` HTTP block: the model's call lands in the log of
    the user Codex names in ``X-SJC-User``.

    Facts of the real CLI: ``codex mcp add sjc --url URL --bearer-token-env-var SJC_MCP_TOKEN`` writes
    ``url`` and ``bearer_token_env_var``; ``env_http_headers`` (header -> variable name) is read from
    config.toml and sends the variable's value; with ``required = true`` a 401 at start-up ends ``codex exec``
    with exit 1 before any model request ("required MCP servers failed to initialize: sjc: … Auth required")."""
    _e2e_path()
    from codex_harness import Codex

    logs = tmp_path / "logs"
    seen = {}
    with http_server(tmp_path, "--log-dir", str(logs)) as (_, url, _err):
        cx = Codex(tmp_path / "cx")
        for token in (TOKEN, "not-the-team-token"):
            seen[token] = _codex_calls(cx, url, {"SJC_MCP_TOKEN": token, "SJC_USER": "bob"})
    rc, tags, err = seen[TOKEN]
    assert rc == 0 and tags == ["mcp-call", "after-tool"], err
    log = _log_of(logs, "bob")
    recs = _records(log)
    assert [r["op"] for r in recs] == ["prune"] and recs[0]["user"] == log.stem and recs[0]["pruned"] == 3
    assert _verify(log, tmp_path).returncode == 0
    # a wrong token with required = true: codex exec stops before asking the model anything
    rc, tags, err = seen["not-the-team-token"]
    assert rc == 1 and tags == [] and "required MCP servers failed to initialize" in err and "Auth required" in err
    assert len(_records(_log_of(logs, "bob"))) == 1


CODEX_URL = "http://sjc-team.example:8765/mcp"
# The README's Codex block for a team server, verified above (only the URL is changed).
CODEX_BLOCK = f"""\
[mcp_servers.sjc]
url = "{CODEX_URL}"
bearer_token_env_var = "SJC_MCP_TOKEN"
env_http_headers = {{ "X-SJC-User" = "SJC_USER" }}
required = true
startup_timeout_sec = 20
tool_timeout_sec = 60
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_real_hosts_over_https_trust_the_team_certificate_only_when_told(tmp_path):
    """The team server on https (``--tls-cert``/``--tls-key``, a certificate signed by a CA of the team's own):
    Claude Code 2.1.332 connects when ``NODE_EXTRA_CA_CERTS`` names that CA, and Codex 0.171.0 when
    ``CODEX_CA_CERTIFICATE`` does; without it each refuses the unknown certificate. The model's calls land in
    each user's log."""
    from tests.server.test_server_http import _certificate

    _e2e_path()
    from cc_fake import FakeClaudeAPI
    from codex_harness import Codex

    ca, cert, key = _certificate(tmp_path)
    logs = tmp_path / "logs"
    fake = FakeClaudeAPI()
    seen: dict[str, object] = {}
    tls = ("--tls-cert", str(cert), "--tls-key", str(key))
    try:
        with http_server(tmp_path, "--log-dir", str(logs), *tls) as (_, url, _err):
            https = url.replace("http://", "https://")
            user, work = _claude_user_of(tmp_path, fake.url, https)
            trusted = {"SJC_MCP_TOKEN": TOKEN, "NODE_EXTRA_CA_CERTS": str(ca)}
            seen["cc_untrusted"] = user.claude(work, "mcp", "list", env={"SJC_MCP_TOKEN": TOKEN})
            seen["cc_trusted"] = user.claude(work, "mcp", "list", env=trusted)
            seen["cc_run"] = _claude_prunes(user, work, trusted)
            cx = Codex(tmp_path / "cx")
            for name, extra in (("cx_untrusted", {}), ("cx_trusted", {"CODEX_CA_CERTIFICATE": str(ca)})):
                seen[name] = _codex_calls(cx, https, {"SJC_MCP_TOKEN": TOKEN, "SJC_USER": "bob", **extra})
    finally:
        fake.close()
    assert "Connected" not in _sjc_line(seen["cc_untrusted"]), seen["cc_untrusted"].stdout
    assert "Connected" in _sjc_line(seen["cc_trusted"]), seen["cc_trusted"].stdout + seen["cc_trusted"].stderr
    assert seen["cc_run"].rc == 0, seen["cc_run"].stdout[-800:] + seen["cc_run"].stderr[-800:]
    rc, tags, err = seen["cx_trusted"]
    assert rc == 0 and tags == ["mcp-call", "after-tool"], err
    rc, tags, err = seen["cx_untrusted"]
    assert rc == 1 and tags == [] and "required MCP servers failed to initialize" in err, err
    assert [r["op"] for r in _records(_log_of(logs, "alice"))] == ["prune"]
    assert [r["op"] for r in _records(_log_of(logs, "bob"))] == ["prune"]
