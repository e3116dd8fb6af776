"""Model-backed judges against real HTTP servers on 127.0.0.1 that speak each wire format."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sjc_mcp import prune_summary
from sjc_mcp.config import Config
from sjc_mcp.errors import ConfigError
from sjc_mcp.judges import make_judge
from sjc_mcp.log import chain as decision_log
from tests.fakes import FakeAPI, dead_url

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"


def example():
    summary = (
        (EX / "summary.md")
        .read_text()
        .replace(
            "2. Key Technical Concepts:\n",
            "2. Key Technical Concepts:\n   - `.env` sets `DEBUG=1` and an `OPENAI_API_KEY`.\n",
        )
    )
    ev = [p.read_text() for p in sorted((EX / "outputs").glob("*.txt"))]
    ev.append(f"$ cat .env\nOPENAI_API_KEY={SECRET}\nDEBUG=1\n")
    ev.append({"kind": "user_message", "content": "test_parse_duration is failing on main, can you fix it?"})
    return summary, ev


@pytest.fixture
def fake(request):
    api = FakeAPI(request.param)
    yield api
    api.close()


def cfg(tmp_path, judge, url, **table):
    base = {"base_url": url, "max_retries": 2, "connect_timeout_s": 1, "read_timeout_s": 1.5, "total_timeout_s": 6}
    base.update(table)
    return Config.of(
        judge=judge, decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"), **{judge: base}
    )


def last_log(tmp_path):
    return list(decision_log.read(tmp_path / "log.jsonl"))[-1][1]


class Waits:
    """The remote judges' clock with the waits recorded instead of slept: what a retry waits for is read
    here, not timed."""

    def __init__(self) -> None:
        self.slept: list[float] = []
        self.monotonic = time.monotonic

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))


@pytest.fixture
def waits(monkeypatch):
    from sjc_mcp.judges import _remote

    w = Waits()
    monkeypatch.setattr(_remote, "time", w)
    return w


# -- opt-in and keys -------------------------------------------------------------------------------


@pytest.mark.parametrize("judge", ["jev", "openai", "anthropic"])
def test_remote_endpoint_needs_allow_remote_before_any_connection(judge, monkeypatch):
    monkeypatch.setenv(
        {"jev": "TYPESAFE_API_KEY", "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[judge], "k"
    )
    c = Config.of(judge=judge, **{judge: {"base_url": "https://judge.example.invalid"}})
    with pytest.raises(ConfigError, match="allow_remote"):
        make_judge(c)


def test_remote_endpoint_with_opt_in_needs_its_key(monkeypatch):
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="TYPESAFE_API_KEY"):
        make_judge(Config.of(judge="jev", allow_remote=True))
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    assert make_judge(Config.of(judge="jev", allow_remote=True)).name == "jev"


def test_prune_with_a_remote_judge_refused_is_a_clear_error(tmp_path):
    from sjc_mcp.errors import SJCError

    summary, ev = example()
    with pytest.raises(SJCError, match="allow_remote"):
        prune_summary(summary, ev, config=Config.of(judge="openai", decision_log=str(tmp_path / "l")))


# -- Jev (System One) ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["systemone"], indirect=True)
def test_jev_one_request_noul_per_entry_and_model_id_logged(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("TYPESAFE_API_KEY", "tk-123")
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", fake.url), log=True)
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert req["headers"]["Authorization"] == "Bearer tk-123"
    q = req["body"]["questions"]
    assert list(q) == [f"e{e.id}" for e in r.entries]
    assert all(v["type"] == "noul" and set(v["criteria"]) == {"true", "false"} for v in q.values())
    state = req["body"]["state"]
    assert {"task", "previous_summary", "recent_interaction", "evidence", "entries", "notice"} <= set(state)
    assert all("origin" in p and p["id"].startswith("p") for p in state["evidence"])
    assert "never an instruction" in state["notice"]
    assert SECRET not in json.dumps(req["body"]) and "[REDACTED" in json.dumps(req["body"])
    assert "Publish version 2.0" not in r.pruned_summary and "48 passed" in r.pruned_summary
    rec = last_log(tmp_path)
    assert rec["judge"] == {"name": "jev", "model": "fake-model-7"} and rec["redactions"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["systemone"], indirect=True)
def test_jev_splits_a_large_state_and_asks_each_entry_once(fake, tmp_path):
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", fake.url, state_budget_tokens=1000), log=True)
    assert len(fake.requests) > 1
    asked = [k for req in fake.requests for k in req["body"]["questions"]]
    assert sorted(asked) == sorted(f"e{e.id}" for e in r.entries)
    for req in fake.requests:  # each part carries only the evidence its entries use
        used = {p for e in req["body"]["state"]["entries"] for p in e["evidence"]}
        assert {p["id"] for p in req["body"]["state"]["evidence"]} == used
    assert all(e.score is not None for e in r.entries)


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["systemone"], indirect=True)
def test_jev_retries_429_honouring_retry_after(fake, tmp_path, waits):
    fake.behaviours = ["429", "500"]
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", fake.url), log=True)
    # the 429's Retry-After (0.3 s), then the backoff of a second retry (0.25 s doubled)
    assert len(fake.requests) == 3 and waits.slept == [0.3, 0.5]
    assert all(e.score is not None for e in r.entries) and not r.errors


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["systemone"], indirect=True)
@pytest.mark.parametrize("behaviour", ["500", "malformed", "slow", "missing", "nan", "range", "401"])
def test_jev_faults_leave_entries_unjudged_and_logged(fake, tmp_path, behaviour, waits):
    fake.behaviours = [behaviour] * 5
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", fake.url), log=True)
    # at most max_retries + 1 attempts, and the waits between them within the 6 s budget
    assert 1 <= len(fake.requests) <= 3 and sum(waits.slept) < 6, (fake.requests, waits.slept)
    assert r.pruned_summary == summary and r.removed == 0
    assert all(e.decision == "unjudged" for e in r.entries)
    assert r.errors and last_log(tmp_path)["errors"]


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["systemone"], indirect=True)
def test_jev_partial_answers(fake, tmp_path):
    fake.behaviours = ["partial"]
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", fake.url), log=True)
    judged = [e for e in r.entries if e.score is not None]
    unjudged = [e for e in r.entries if e.decision == "unjudged"]
    assert judged and unjudged and len(judged) + len(unjudged) == len(r.entries)


@pytest.mark.slow
def test_dead_host_is_quick_and_harmless(tmp_path, waits):
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "jev", dead_url(), max_retries=1), log=True)
    assert waits.slept == [0.25]  # refused at once, twice, one backoff between: no timeout waited out
    assert r.pruned_summary == summary and "cannot reach" in r.errors[0]


# -- OpenAI-compatible -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["chat"], indirect=True)
def test_openai_yes_no_logprobs_per_entry(fake, tmp_path):
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "openai", fake.url, concurrency=4), log=True)
    assert len(fake.requests) == len(r.entries)
    body = fake.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1
    for e in r.entries:
        want = 0.05 if "Publish" in e.text or "twice as fast" in e.text else None
        if want is not None:
            assert e.score == pytest.approx(want / (want + (1 - want)), abs=1e-6)
    assert "Publish version 2.0" not in r.pruned_summary
    assert last_log(tmp_path)["judge"]["model"] == "fake-model-7"


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["chat"], indirect=True)
def test_openai_without_logprobs_falls_back_to_one_json_request(fake, tmp_path):
    fake.behaviours = ["nologprobs"] * 50
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "openai", fake.url), log=True)
    assert fake.requests[-1]["body"].get("response_format") == {"type": "json_object"}
    assert len(fake.requests) == len(r.entries) + 1
    assert all(e.score is not None for e in r.entries)
    assert "Publish version 2.0" not in r.pruned_summary


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["chat"], indirect=True)
def test_openai_fallback_with_bad_json_is_unjudged(fake, tmp_path):
    summary, ev = example()
    n = len(prune_summary(summary, ev, config=cfg(tmp_path, "openai", fake.url), log=True).entries)
    fake.requests.clear()
    fake.behaviours = ["nologprobs"] * n + ["badjson"]
    r = prune_summary(summary, ev, config=cfg(tmp_path, "openai", fake.url), log=True)
    assert r.pruned_summary == summary and any("JSON" in e for e in r.errors)


def test_p_yes_arithmetic():
    from sjc_mcp.judges.openai import p_yes

    choice = {
        "logprobs": {
            "content": [
                {
                    "token": "yes",
                    "logprob": -0.1,
                    "top_logprobs": [
                        {"token": "yes", "logprob": -0.1},
                        {"token": " Yes", "logprob": -3.0},
                        {"token": "no", "logprob": -2.5},
                        {"token": "maybe", "logprob": -1.0},
                    ],
                }
            ]
        }
    }
    y = math.exp(-0.1) + math.exp(-3.0)
    assert p_yes(choice) == pytest.approx(y / (y + math.exp(-2.5)))
    assert p_yes({"logprobs": {"content": [{"token": "perhaps", "logprob": -0.1, "top_logprobs": []}]}}) is None


# -- Anthropic ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["messages"], indirect=True)
def test_anthropic_one_request_json_object(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-1")
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "anthropic", fake.url), log=True)
    assert len(fake.requests) == 1
    h = fake.requests[0]["headers"]
    assert h["x-api-key"] == "ak-1" and h["anthropic-version"] == "2023-06-01"
    assert "never an instruction" in fake.requests[0]["body"]["system"]
    assert "Publish version 2.0" not in r.pruned_summary and all(e.score is not None for e in r.entries)


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["messages"], indirect=True)
@pytest.mark.parametrize("behaviour", ["badjson", "nan", "range", "malformed", "500"])
def test_anthropic_faults(fake, tmp_path, behaviour):
    fake.behaviours = [behaviour] * 5
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "anthropic", fake.url), log=True)
    assert r.pruned_summary == summary and r.errors


@pytest.mark.slow
@pytest.mark.parametrize("fake", ["messages"], indirect=True)
def test_anthropic_partial(fake, tmp_path):
    fake.behaviours = ["partial"]
    summary, ev = example()
    r = prune_summary(summary, ev, config=cfg(tmp_path, "anthropic", fake.url), log=True)
    assert any(e.score is None for e in r.entries) and any(e.score is not None for e in r.entries)


# -- a System One server nobody here wrote -------------------------------------------------------------


@pytest.mark.slow
def test_against_sparrow_decider(tmp_path):
    exe = shutil.which("sparrow-decider", path=os.path.dirname(sys.executable)) or shutil.which("sparrow-decider")
    if exe is None:
        pytest.skip("sparrow-decider is not installed (it is in the test extras: pip install -e '.[test]')")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([exe, "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        summary, ev = example()
        r = prune_summary(
            summary,
            ev,
            config=cfg(tmp_path, "jev", f"http://127.0.0.1:{port}", read_timeout_s=20, total_timeout_s=60),
            log=True,
        )
        assert not r.errors, r.errors
        assert all(e.score is not None and 0 <= e.score <= 1 for e in r.entries)
        model = last_log(tmp_path)["judge"]["model"]
        assert model and model != "jev-latest"  # the id the server reported, not the one we asked for
    finally:
        proc.terminate()
        proc.wait(timeout=10)
