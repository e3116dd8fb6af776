"""Fault suite, secrets: every planted kind is redacted, whole, before any byte leaves the machine."""

from __future__ import annotations

import base64
import dataclasses
import json
import random

import pytest

from sjc_mcp.redact import redact

_rng = random.Random(7)


def _b64(n: int) -> str:
    return base64.b64encode(bytes(_rng.randrange(256) for _ in range(n))).decode()


def _pem(kind: str, n: int, end: bool = True) -> tuple[str, str]:
    body = _b64(n)
    rows = [body[i : i + 64] for i in range(0, len(body), 64)]
    text = f"-----BEGIN {kind}-----\n" + "\n".join(rows) + "\n" + (f"-----END {kind}-----\n" if end else "")
    return text, rows[-2]  # near the end: past the first 2,000-character chunk of a long key


RSA_4096, RSA_4096_SECRET = _pem("RSA PRIVATE KEY", 2350)
ED25519, ED25519_SECRET = _pem("OPENSSH PRIVATE KEY", 400)
PGP, PGP_SECRET = _pem("PGP PRIVATE KEY BLOCK", 900)
NO_END, NO_END_SECRET = _pem("PRIVATE KEY", 600, end=False)
GCP_KEY = _b64(1200)
GCP = json.dumps(
    {
        "type": "service_account",
        "project_id": "orders-prod",
        "private_key_id": "3f1c9a0b7e6d5c4b3a29180706f5e4d3c2b1a098",
        "private_key": "-----BEGIN PRIVATE KEY-----\n" + GCP_KEY + "\n-----END PRIVATE KEY-----\n",
        "client_email": "ci@orders-prod.iam.gserviceaccount.com",
    },
    indent=2,
)

# (kind, text planted in a tool output, the secret that must not leave)
PLANTED = [
    (
        "anthropic",
        "ANTHROPIC=sk-ant-api03-Zx81kQmP0vR7sT2uW4yA6cE8gI0kM2oQ",
        "sk-ant-api03-Zx81kQmP0vR7sT2uW4yA6cE8gI0kM2oQ",
    ),
    ("openai", "using key sk-proj-Q2w3E4r5T6y7U8i9O0pLkJhGfDsA", "sk-proj-Q2w3E4r5T6y7U8i9O0pLkJhGfDsA"),
    ("github", "remote: ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12", "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12"),
    ("gitlab", "CI_TOKEN used glpat-x8Yv2Qw9Er3Ty6Ui1Op4", "glpat-x8Yv2Qw9Er3Ty6Ui1Op4"),
    ("slack-token", "bot xoxb-2048-1024-Ab3De6Gh9Jk2", "xoxb-2048-1024-Ab3De6Gh9Jk2"),
    (
        "slack-webhook",
        "posting to https://hooks.slack.com/services/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",
        "q7Rr9Ww2Ee4Tt6Yy8Uu0Ii1O",
    ),
    ("aws", "aws_access_key_id AKIAQ7W2E5R8T1Y4U7I0 region eu-west-1", "AKIAQ7W2E5R8T1Y4U7I0"),
    ("aws-secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9vR2sT5u", "wJalrXUtnFEMI/K7MDENG"),
    ("google", "maps key AIzaSyD4x7Qm2Vb9Nc1Lk8Jh5Gf3Ds6Aa0Pp1Oo", "AIzaSyD4x7Qm2Vb9Nc1Lk8Jh5Gf3Ds6Aa0Pp1Oo"),
    ("stripe", "STRIPE sk_live_51Hq8Zr2eZvKYlo2C0a1b2c3d4", "sk_live_51Hq8Zr2eZvKYlo2C0a1b2c3d4"),
    (
        "huggingface",
        "huggingface-cli login --token hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789",
        "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789",
    ),
    (
        "npm",
        "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    ),
    (
        "azure",
        "DefaultEndpointsProtocol=https;AccountName=ordersblob;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg==",
    ),
    ("mysql", "$ mysql -u root -pS3cr3tDbPass orders < dump.sql", "S3cr3tDbPass"),
    ("password-flag", "psql --password=Tr0ub4dor-and-3 -h db", "Tr0ub4dor-and-3"),
    ("x-api-key", "curl -H 'x-api-key: kq83hd72jd92kd82hd7' https://api.internal", "kq83hd72jd92kd82hd7"),
    ("python-dict", "settings = {'user': 'svc', 'password': 'pa55w0rd-prod'}", "pa55w0rd-prod"),
    ("python-kwarg", "connect(host='db', password=\"kwarg-secret-77\")", "kwarg-secret-77"),
    ("env-line", "export DATABASE_PASSWORD=correct-horse-battery", "correct-horse-battery"),
    ("json", '{"client_secret": "cs-9f8e7d6c5b4a"}', "cs-9f8e7d6c5b4a"),
    ("yaml", "  api_token: yt-5d4c3b2a1f0e", "yt-5d4c3b2a1f0e"),
    ("url-password", "DATABASE_URL: postgres://orders:hunter2-prod@db:5432/orders", "hunter2-prod"),
    ("bearer", "Authorization: Bearer abcDEF123456ghiJKL789012mnoPQR", "abcDEF123456ghiJKL789012mnoPQR"),
    ("basic", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw=="),
    (
        "jwt",
        "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    (
        "sendgrid",
        "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",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc",
    ),
    ("rsa-4096", RSA_4096, RSA_4096_SECRET),
    ("openssh-ed25519", ED25519, ED25519_SECRET),
    ("pgp", PGP, PGP_SECRET),
    ("pem-without-end", NO_END, NO_END_SECRET),
    ("gcp-service-account", GCP, GCP_KEY[300:360]),
]


@pytest.mark.parametrize(("kind", "text", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_every_planted_kind_is_redacted(kind, text, secret):
    out, n = redact(f"$ some command\n{text}\nexit 0\n")
    assert secret not in out, out
    assert n >= 1 and "[REDACTED" in out
    assert "$ some command" in out and "exit 0" in out  # the rest of the output stays


def test_ordinary_output_is_left_alone():
    text = (
        "48 passed in 0.61s\nport = 5432\nTOKENS_PER_SECOND is a metric\nsk-short\n"
        "git push origin main -> a1b2c3d\nmysql -u root orders\nThe password field is required.\n"
    )
    assert redact(text) == (text, 0)


def test_hostile_input_is_redacted_to_the_end():
    """Long runs of what secrets start with (how long they take, against ordinary text and against half the
    input: benchmarks/worst_case.py): a run that is no secret comes back whole, a run that reads as one is
    replaced, and what comes back has nothing left to redact."""
    assert redact("a-" * 500_000) == ("a-" * 500_000, 0)
    for text in ("sk-" * 300_000, "password=" * 100_000, "-----BEGIN PRIVATE KEY-----" * 20_000):
        out, n = redact(text)
        assert n >= 1 and "[REDACTED" in out and len(out) < len(text), text[:20]
        assert redact(out) == (out, 0), text[:20]


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.5.0.1/v1", True),
        ("http://[::1]:11434/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://judge.localhost/v1", False),
        ("http://localhost.example.com/v1", False),
        ("http://10.0.0.5/v1", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_only_loopback_literals_and_localhost_itself_count_as_local(url, loopback):
    from sjc_mcp.judges._remote import is_loopback

    assert is_loopback(url) is loopback


def test_a_judge_at_a_localhost_subdomain_needs_the_remote_opt_in():
    from sjc_mcp.config import Config
    from sjc_mcp.errors import ConfigError
    from sjc_mcp.judges import make_judge

    with pytest.raises(ConfigError, match="allow_remote"):
        make_judge(Config.of(judge="openai", openai={"base_url": "http://judge.localhost/v1"}))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["chat", "messages", "systemone"])
def test_no_planted_secret_reaches_a_loopback_judge(kind, tmp_path, monkeypatch):
    """Every kind planted in tool output, a call, the previous summary and the task; the long keys span
    more than one 2,000-character chunk. The recorded request bodies hold none of them."""
    from sjc_mcp import prune_summary
    from sjc_mcp.config import Config
    from tests.fakes import FakeAPI
    from tests.judges.test_remote_judges import example

    judge = {"chat": "openai", "messages": "anthropic", "systemone": "jev"}[kind]
    api = FakeAPI(kind)
    try:
        summary, evidence = example()
        planted = "\n".join(text for _, text, _ in PLANTED)
        evidence.append({"kind": "tool_output", "name": "Bash", "content": f"$ cat secrets.txt\n{planted}\n"})
        evidence.append({"kind": "tool_output", "name": "Read", "content": GCP, "call": "Read: service-account.json"})
        config = Config.of(
            judge=judge,
            decision_log=str(tmp_path / "log.jsonl"),
            kill_switch=str(tmp_path / "off"),
            **{judge: {"base_url": api.url, "max_retries": 0, "total_timeout_s": 20}},
        )
        # the entries ask about the secrets, so retrieval pulls the passages that hold them; one entry
        # shares words with the tail of the 4096-bit key, which lies in the key's second chunk
        summary = summary.replace(
            "2. Key Technical Concepts:\n",
            "2. Key Technical Concepts:\n   - secrets.txt holds the private key, tokens, AccountKey, mysql password\n"
            f"   - END RSA PRIVATE KEY line after {RSA_4096.splitlines()[-2]}\n",
        )
        prune_summary(
            summary, evidence, config=config, previous_summary=f"Earlier: {PLANTED[0][1]}", task=PLANTED[1][1], log=True
        )
        bodies = json.dumps([r["body"] for r in api.requests])
        assert api.requests and "[REDACTED" in bodies
        leaked = [k for k, _, secret in PLANTED if secret in bodies or json.dumps(secret)[1:-1] in bodies]
        assert leaked == []
    finally:
        api.close()


@pytest.mark.slow
def test_no_planted_secret_reaches_a_loopback_relevance_judge(tmp_path):
    from sjc_mcp.config import Config
    from sjc_mcp.hosts.base import Item
    from sjc_mcp.tools import relevance
    from tests.fakes import FakeAPI

    api = FakeAPI("chat")
    try:
        items = [Item(role="user", content="rotate the credentials")]
        for n, (_, text, _) in enumerate(PLANTED):
            items += [
                Item(role="tool_call", name="Bash", call_id=f"c{n}", content=json.dumps({"command": f"cat f{n}"})),
                Item(role="tool_output", call_id=f"c{n}", content="x" * 2500 + "\n" + text),  # past judge_chars
            ]
        items.append(Item(role="user", content="done?"))
        config = Config.of(
            judge="openai",
            decision_log=str(tmp_path / "log.jsonl"),
            kill_switch=str(tmp_path / "off"),
            openai={"base_url": api.url, "max_retries": 0, "total_timeout_s": 20},
        )
        config = config.replace(tools=dataclasses.replace(config.tools, judge_chars=100_000))
        r = relevance.judge_tool_results(items, config=config)
        bodies = json.dumps([q["body"] for q in api.requests])
        assert api.requests and r.results
        assert [k for k, _, secret in PLANTED if secret in bodies or json.dumps(secret)[1:-1] in bodies] == []
        assert any(PLANTED[0][1] in it.content for it in r.messages)  # the history itself is not altered
    finally:
        api.close()


def test_the_html_report_is_private_and_redacted(tmp_path):
    import stat

    from sjc_mcp.audit.html import write_html
    from sjc_mcp.audit.summary import read_log, summarise
    from sjc_mcp.log import chain as decision_log

    log = tmp_path / "log.jsonl"
    token = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12"
    decision_log.append(
        log,
        {
            "op": "prune",
            "status": "judged",
            "mode": "enforce",
            "session": "s1",
            "boundary_id": "b1",
            "threshold": 0.5,
            "margin": 0.05,
            "entries": [
                {"id": 0, "section": "Pending Tasks", "text": f"- push with {token}", "score": 0.1, "decision": "prune"}
            ],
            "removed": 1,
            "kept": 0,
        },
    )
    out = write_html(summarise(*read_log(log)), str(log), tmp_path / "r.html")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    page = out.read_text()
    assert token not in page and "REDACTED" in page


def test_the_decision_log_keeps_no_secret_of_an_entry_or_its_quote(tmp_path):
    import stat

    from sjc_mcp import prune_summary
    from sjc_mcp.config import Config

    token = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12"
    summary = f"## Current Work\n- Configured the remote with token {token}\n- Publish version 2.0\n"
    evidence = [f"$ git remote set-url origin https://x:{token}@github.com/acme/app.git\nok"]
    log = tmp_path / "log.jsonl"
    config = Config.of(decision_log=str(log), kill_switch=str(tmp_path / "off"))
    prune_summary(summary, evidence, config=config, log=True)
    text = log.read_text()
    assert token not in text and "REDACTED" in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def _transcript_with_keys(tmp_path):
    """A Claude Code transcript whose tool results are a GCP service-account file and a 4096-bit RSA key
    (3.2 KB: past the first chunk of its passage), compacted by a summary whose entries ask about both."""
    from tests.hosts.test_hosts import _write, cc_record

    summary = (
        "This session is being continued from a previous conversation.\n\nSummary:\n"
        "1. Primary Request and Intent:\n   - rotate the orders-prod service account key and the deploy key\n\n"
        "2. Key Technical Concepts:\n   - service-account.json holds private_key for ci@orders-prod.iam.gserviceaccount.com\n"
        "   - cat ~/.ssh/deploy_rsa printed the BEGIN RSA PRIVATE KEY block through END RSA PRIVATE KEY\n\n"
        "7. Pending Tasks:\n   - Publish the new key to every customer\n"
    )
    records = [
        cc_record("u1", None, "user", "rotate the service account key and the deploy key", ts="2026-01-01T00:00:01Z"),
        cc_record(
            "a1",
            "u1",
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "service-account.json"}}],
        ),
        cc_record("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": GCP}]),
        cc_record(
            "a2",
            "r1",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cat ~/.ssh/deploy_rsa"}}],
        ),
        cc_record("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": RSA_4096}]),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "B0",
            "parentUuid": None,
            "logicalParentUuid": "r2",
            "sessionId": "S",
            "timestamp": "2026-01-01T00:01:00Z",
        },
        cc_record("S0", "B0", "user", summary, isCompactSummary=True),
    ]
    return _write(tmp_path / "session.jsonl", records)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["chat", "messages", "systemone"])
@pytest.mark.parametrize("command", [("judge", "--json"), ("tools", "judge")], ids=["judge", "tools"])
def test_no_long_key_reaches_a_judge_from_a_transcript(command, kind, tmp_path):
    """As the user runs it: ``sjc judge`` / ``sjc tools judge`` on a transcript holding a GCP service-account
    file and a 3.2 KB PEM key, with a model judge on 127.0.0.1: the requests hold neither key, whole or in
    part, however the texts were cut into passages and chunks."""
    import os
    import subprocess

    from tests.conftest import sjc_exe
    from tests.fakes import FakeAPI

    judge = {"chat": "openai", "messages": "anthropic", "systemone": "jev"}[kind]
    if command[0] == "tools" and judge != "openai":
        pytest.skip("tool-result relevance is judged by the lexical or the openai judge")
    api = FakeAPI(kind)
    try:
        config = tmp_path / "c.toml"
        config.write_text(
            f'judge = "{judge}"\n[{judge}]\nbase_url = "{api.url}"\nmax_retries = 0\n'
            "[tools]\nkeep_recent_turns = 0\njudge_chars = 100000\n"  # every result a candidate, sent whole
        )
        env = {
            **os.environ,
            "HOME": str(tmp_path),
            "SJC_CONFIG": str(config),
            "SJC_DECISION_LOG": str(tmp_path / "log"),
        }
        path = _transcript_with_keys(tmp_path)
        r = subprocess.run(
            [sjc_exe(), *command, "--transcript", str(path)], capture_output=True, text=True, env=env, timeout=120
        )
        assert r.returncode == 0, r.stderr
        bodies = json.dumps([q["body"] for q in api.requests])
        assert api.requests and "[REDACTED" in bodies
        rows = [row for row in RSA_4096.splitlines() if "PRIVATE KEY" not in row and len(row) >= 40]
        key_rows = [GCP_KEY[i : i + 40] for i in range(0, len(GCP_KEY) - 40, 40)]
        leaked = [row for row in rows + key_rows if row in bodies or json.dumps(row)[1:-1] in bodies]
        assert leaked == [], f"{len(leaked)} pieces of the keys reached the judge"
    finally:
        api.close()
