"""``sjc-mcp`` as an MCP server of the real Gemini CLI, registered with the block of ``docs/hosts/gemini.md`` as is.

Facts of Gemini CLI 0.61.0 these tests rely on, each seen in their runs:

- ``settings.json`` ``"mcpServers": {"sjc": {"command", "args", …}}``: the tools reach the model as
  ``mcp_sjc_prune_summary``, ``mcp_sjc_judge_summary``, … (``mcp_<server>_<tool>``).
- ``gemini -p`` waits for the MCP servers before its first request.
- A stdio server gets the CLI's environment with variables that look like secrets taken out, plus the
  block's ``env``; it runs only in a trusted folder ("uses stdio transport but current folder is not
  trusted").
- A tool result reaches the model as ``{"output": "<untrusted_context>\\n{json}\\n</untrusted_context>"}``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import gemini_fake as gf
import hostcli
import pytest
from gemini_fake import FakeGemini, pruned
from gemini_harness import Gemini

from tests.conftest import ROOT

PLACEHOLDER = "/path/to/sjc-mcp/.venv/bin/sjc-mcp"
# the block of docs/hosts/gemini.md, verified here as written (only the command path is filled in)
DOCS_BLOCK = f"""\
{{
  "mcpServers": {{
    "sjc": {{
      "command": "{PLACEHOLDER}",
      "args": [],
      "timeout": 60000
    }}
  }}
}}
"""
INLINE = "Prune the canned snapshot. [[mcp prune_summary canned]]"


def mcp_settings(command: str | None = None, args: list[str] | None = None) -> dict[str, Any]:
    block = json.loads(DOCS_BLOCK.replace(PLACEHOLDER, command or hostcli.sjc_bin("sjc-mcp")))
    if args is not None:
        block["mcpServers"]["sjc"]["args"] = args
    return dict(block)


def tool_results(fake: FakeGemini) -> list[dict[str, Any]]:
    """What each ``prune_summary`` call answered, as the model got it back (the JSON inside Gemini CLI's
    ``<untrusted_context>`` wrapper, or ``{"error": …}``), one per distinct result."""
    out: dict[str, dict[str, Any]] = {}
    for r in fake.answered():
        for fr in gf.function_responses(r["body"]):
            if not str(fr.get("name", "")).endswith("prune_summary"):
                continue
            resp = fr.get("response") or {}
            if isinstance(resp.get("output"), str):
                inner = re.sub(r"^\s*<untrusted_context>\s*|\s*</untrusted_context>\s*$", "", resp["output"])
                res = json.loads(inner)
            else:
                res = {"error": json.dumps(resp)}
            out[json.dumps(res, sort_keys=True)] = res
    return list(out.values())


@pytest.fixture()
def g(tmp_path: Path) -> Gemini:
    return Gemini(tmp_path)


def test_the_tools_reach_the_model_and_prune_inline(g: Gemini) -> None:
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, mcp_settings())
        r = g.run(INLINE)
        assert r.returncode == 0, r.stderr[-2000:]
        first = fake.answered()[0]
        names = gf.tool_names(first["body"])
        assert "mcp_sjc_prune_summary" in names and "mcp_sjc_judge_summary" in names
        assert fake.tags()[:2] == ["mcp", "after-tool"]
        (res,) = tool_results(fake)
    assert res["removed"] == 3, res
    assert res["pruned_summary"] == pruned(gf.SNAPSHOT)
    # the CLI's environment reaches the server: the record is in SJC_DECISION_LOG
    assert [d.get("pruned") for d in g.decisions() if d.get("surface") == "mcp"] == [3]


def test_kill_switch_set_for_gemini_reaches_the_server(g: Gemini) -> None:
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, mcp_settings())
        r = g.run(INLINE, env={"SJC_DISABLE": "1"})
        assert r.returncode == 0, r.stderr[-2000:]
        (res,) = tool_results(fake)
    assert res["removed"] == 0 and res["pruned_summary"] == gf.SNAPSHOT
    assert [d.get("status") for d in g.decisions() if d.get("surface") == "mcp"] == ["disabled"]


def test_headless_waits_for_a_slow_server(g: Gemini, tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text("import os, sys, time\ntime.sleep(3)\nos.execv(sys.argv[1], sys.argv[1:])\n")
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, mcp_settings(sys.executable, [str(slow), hostcli.sjc_bin("sjc-mcp")]))
        r = g.run(INLINE)
        assert r.returncode == 0, r.stderr[-2000:]
        assert fake.tags()[0] == "mcp"


def test_docs_show_the_verified_block() -> None:
    docs = ROOT / "docs" / "hosts" / "gemini.md"
    assert docs.exists(), "docs/hosts/gemini.md is missing"
    assert DOCS_BLOCK in docs.read_text(), "the docs' mcpServers block differs from the one verified here"
