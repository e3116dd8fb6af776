"""``sjc-mcp`` as an MCP server of the real Codex CLI, registered with the block of docs/hosts/codex.md as is.

Facts of Codex 0.171.0 these tests rely on, each observed in its runs:

- MCP tools reach the model as one ``{"type": "namespace", "name": "mcp__sjc", "tools": [...]}`` tool;
  the model calls ``{"type": "function_call", "namespace": "mcp__sjc", "name": "prune_summary"}``.
- ``required = true`` makes ``codex exec`` wait for the server before the first request (up to
  ``startup_timeout_sec``); without it Codex waits only a short grace period and then starts the turn
  without the server's tools.
- Codex starts an MCP server with only ``HOME``, ``LANG``, ``PATH`` and ``TERM`` of its environment, plus
  what ``env`` sets and the variables ``env_vars`` names (a name that is unset is left out, no error).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import codex_fake as fake_model
import hostcli
import pytest
from codex_fake import SUPPORTED, FakeModel, pruned
from codex_harness import Codex

from tests.conftest import ROOT

PLACEHOLDER = "/home/you/.local/bin/sjc-mcp"
# these runs are about the tools, not compaction: Codex counts the tool result into its token estimate, so
# a limit near the fake's reported usage would compact after a long tool result
NO_COMPACTION = 150_000
# The Codex block of docs/hosts/codex.md, verified here as written (only the command path is filled in).
README_BLOCK = f"""\
[mcp_servers.sjc]
command = "{PLACEHOLDER}"
args = []
required = true
startup_timeout_sec = 20
tool_timeout_sec = 60
env_vars = ["SJC_CONFIG", "SJC_DECISION_LOG", "SJC_DISABLE", "SJC_JUDGE", "SJC_MODE", "SJC_THRESHOLD",
            "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"]
"""


def block(text: str = README_BLOCK) -> str:
    return "\n" + text.replace(PLACEHOLDER, hostcli.sjc_bin("sjc-mcp"))


def tool_results(fake: FakeModel) -> list[dict[str, Any]]:
    """The prune_summary results the model got back, parsed (Codex prefixes the JSON with a wall time)."""
    out = []
    for r in fake.responses():
        for it in r["body"].get("input") or []:
            if it.get("type") == "function_call_output" and '"pruned_summary"' in str(it.get("output")):
                text = str(it["output"])
                out.append(json.loads(text[text.index("{") :]))
    return list({json.dumps(o, sort_keys=True): o for o in out}.values())


def offered(req: dict[str, Any]) -> list[str]:
    return [f"{ns}/{n}" for n, ns in fake_model.tools(req["body"]) if ns]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One compacted session to point ``transcript_path`` at, in a CODEX_HOME outside HOME."""
    root = tmp_path_factory.mktemp("codex-mcp")
    cx = Codex(root, codex_home=root / "codex-home")
    with FakeModel() as fake:
        cx.write_config(fake.base_url + "/v1")
        r = cx.run(fake_model.PROMPT)
        assert r.returncode == 0, r.stderr[-2000:]
        assert len(cx.compacted()) == 1
        answer = fake.compactions()[0][1]["answer"]
        return {"cx": cx, "rollout": cx.rollouts()[-1], "stored": cx.compacted()[0]["message"], "answer": answer}


def test_readme_block_gives_the_model_the_sjc_tools_on_its_first_turn(session: dict[str, Any]) -> None:
    cx: Codex = session["cx"]
    cx.decision_log.unlink(missing_ok=True)
    with FakeModel(big_usage=300) as fake:
        cx.write_config(fake.base_url + "/v1", extra=block(), compact_limit=NO_COMPACTION)
        r = cx.run(f"{fake_model.MCP_TRIGGER} inline")
        assert r.returncode == 0, r.stderr[-2000:]
        first = fake.responses()[0]
        assert "mcp__sjc/prune_summary" in offered(first) and "mcp__sjc/judge_summary" in offered(first)
        assert fake.tags() == ["mcp-call", "after-tool"]
        (res,) = tool_results(fake)
    assert res["removed"] == 3 and res["kept"] == 2
    assert res["pruned_summary"] == pruned(fake_model.SUMMARY, fake_model.INVENTED)
    # the decision log is where the Codex process's SJC_DECISION_LOG says (forwarded by env_vars)
    recs = [d for d in cx.decisions() if d.get("surface") == "mcp"]
    assert len(recs) == 1 and recs[0]["pruned"] == 3


def test_transcript_path_in_codex_home_is_allowed(session: dict[str, Any]) -> None:
    """allowed_roots follow CODEX_HOME (here outside HOME), which reaches the server through env_vars."""
    cx: Codex = session["cx"]
    with FakeModel(big_usage=300) as fake:
        cx.write_config(fake.base_url + "/v1", extra=block(), compact_limit=NO_COMPACTION)
        r = cx.run(f"{fake_model.MCP_TRIGGER} transcript_path={session['rollout']}")
        assert r.returncode == 0, r.stderr[-2000:]
        (res,) = tool_results(fake)
    assert res["removed"] == 3 and res["kept"] == 2
    # the summary as Codex stored it (its handoff prefix line, then the model's summary), invented lines gone
    assert res["pruned_summary"] == pruned(session["stored"], session["answer"]["invented"])
    assert all(s in res["pruned_summary"] for s in SUPPORTED)


def test_kill_switch_set_for_codex_reaches_the_server(session: dict[str, Any]) -> None:
    cx: Codex = session["cx"]
    cx.decision_log.unlink(missing_ok=True)
    with FakeModel(big_usage=300) as fake:
        cx.write_config(fake.base_url + "/v1", extra=block(), compact_limit=NO_COMPACTION)
        r = cx.run(f"{fake_model.MCP_TRIGGER} inline", env={"SJC_DISABLE": "1"})
        assert r.returncode == 0, r.stderr[-2000:]
        (res,) = tool_results(fake)
    assert res["removed"] == 0 and res["pruned_summary"] == fake_model.SUMMARY
    assert [d.get("status") for d in cx.decisions() if d.get("surface") == "mcp"] == ["disabled"]


def test_without_env_vars_the_server_sees_none_of_codex_environment(session: dict[str, Any]) -> None:
    """The reason for ``env_vars``: without it SJC_DECISION_LOG (and SJC_DISABLE, CODEX_HOME, …) of the
    Codex process never reach sjc-mcp; the record lands in the default log under HOME."""
    cx: Codex = session["cx"]
    cx.decision_log.unlink(missing_ok=True)
    bare = "\n".join(ln for ln in README_BLOCK.splitlines() if not ln.startswith(("env_vars", " ")))
    with FakeModel(big_usage=300) as fake:
        cx.write_config(fake.base_url + "/v1", extra=block(bare + "\n"), compact_limit=NO_COMPACTION)
        r = cx.run(f"{fake_model.MCP_TRIGGER} inline", env={"SJC_DISABLE": "1"})
        assert r.returncode == 0, r.stderr[-2000:]
        (res,) = tool_results(fake)
    assert res["removed"] == 3  # SJC_DISABLE=1 was set for Codex, not seen by the server
    assert cx.decisions() == []
    default_log = cx.home / ".local" / "state" / "sjc" / "decisions.jsonl"
    assert [d.get("surface") for d in cx.decisions(default_log)][-1:] == ["mcp"]


def test_required_makes_codex_wait_for_a_slow_server(session: dict[str, Any], tmp_path: Path) -> None:
    """Why the block says ``required = true``: a server that takes a second to start (a loaded machine, a
    cold disk) misses the first turn of ``codex exec`` without it. sjc-mcp loads the MCP SDK before it answers
    ``initialize`` (0.5-1 s on a quiet machine, 1.5-3 s on a loaded one): without ``required`` it missed the
    first turn in 3 of 3 runs on a loaded 2-core machine, with it it was there in 3 of 3."""
    cx: Codex = session["cx"]
    slow = tmp_path / "slow.py"
    slow.write_text("import os, sys, time\ntime.sleep(1.5)\nos.execv(sys.argv[1], sys.argv[1:])\n")
    sjc_mcp = hostcli.sjc_bin("sjc-mcp")
    seen = {}
    for required in (False, True):
        text = README_BLOCK.replace(
            f'command = "{PLACEHOLDER}"\nargs = []', f'command = "{sys.executable}"\nargs = ["{slow}", "{sjc_mcp}"]'
        )
        if not required:
            text = text.replace("required = true\n", "")
        with FakeModel(big_usage=300) as fake:
            cx.write_config(fake.base_url + "/v1", extra="\n" + text, compact_limit=NO_COMPACTION)
            r = cx.run(f"{fake_model.MCP_TRIGGER} inline")
            assert r.returncode == 0, r.stderr[-2000:]
            seen[required] = fake.tags()[0]
    assert seen == {False: "mcp-missing", True: "mcp-call"}


def test_the_docs_show_the_verified_block() -> None:
    page = (ROOT / "docs" / "hosts" / "codex.md").read_text()
    assert README_BLOCK in page, "docs/hosts/codex.md's [mcp_servers.sjc] block differs from the one verified here"
