"""Never lose a summary: what the splitter cannot tell apart comes back byte for byte, with a warning
on stderr and a log record; a judgment that would cut more than ``max_prune_share`` of the entries
keeps the summary whole. Through the CLI and the MCP tool, as a user or a host drives them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from sjc_mcp.log import chain as decision_log
from tests.conftest import ROOT, sjc_exe

EX = ROOT / "examples"
OUTPUTS = sorted((EX / "outputs").glob("*.txt"))
PROSE = b"The agent fixed the parser and then decided to deploy the release to all the customers next week.\n"
NUL = b"\x00\x01\x02abc\x00" * 100
SHAPES = {"prose": PROSE, "nul-bytes": NUL, "crlf-prose": PROSE.replace(b"\n", b"\r\n"), "one-item": b"- ship it\n"}
# three plans under one heading, nothing in the evidence behind any of them: the judge prunes them all
INVENTED = (
    "## Pending Tasks\n"
    "- Publish version 2.0 of the package to PyPI.\n"
    "- Email the changelog to every user on the mailing list.\n"
    "- Write a blog post announcing twice as fast parsing.\n"
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HOME": str(tmp_path), "SJC_DECISION_LOG": str(tmp_path / "log.jsonl"), **extra})
    env.pop("SJC_DISABLE", None)
    return env


def sjc(tmp_path: Path, *args: str, summary: bytes | None = None, **extra: str) -> subprocess.CompletedProcess:
    argv = [sjc_exe(), *args]
    if summary is not None:
        f = tmp_path / "summary.md"
        f.write_bytes(summary)
        argv[2:2] = ["--summary", str(f)]
    return subprocess.run(argv, capture_output=True, timeout=60, env=_env(tmp_path, **extra))


def records(tmp_path: Path) -> list[dict]:
    return [rec for _, rec, _ in decision_log.read(tmp_path / "log.jsonl")]


def evidence() -> list[str]:
    return ["--evidence", *map(str, OUTPUTS)]


@pytest.mark.slow
def test_cli_prune_returns_what_it_cannot_read_byte_for_byte(tmp_path):
    for name, data in SHAPES.items():
        r = sjc(tmp_path, "prune", *evidence(), summary=data)
        assert r.returncode == 0, r.stderr
        assert r.stdout == data, name
        err = r.stderr.decode()
        assert "sjc: unstructured: nothing judged" in err and "Traceback" not in err, name
        rec = records(tmp_path)[-1]
        assert rec["status"] == "unstructured" and rec["entries"] == [] and rec["pruned"] == 0
        assert rec["chars_after"] == rec["chars_before"] and rec["note"].startswith("nothing judged")
        assert rec["warnings"][0].startswith("unstructured: nothing judged")
    why = [r["note"] for r in records(tmp_path)]
    assert "no structure" in why[0] and "not text" in why[1]


def test_cli_json_and_judge_on_an_unstructured_summary(tmp_path):
    r = sjc(tmp_path, "prune", *evidence(), "--json", summary=PROSE)
    out = json.loads(r.stdout)
    assert out["pruned_summary"] == PROSE.decode() and out["entries"] == [] and out["removed"] == 0
    j = sjc(tmp_path, "judge", *evidence(), summary=PROSE)
    assert j.returncode == 0 and j.stdout == b"" and b"unstructured: nothing judged" in j.stderr
    assert records(tmp_path)[-1]["op"] == "judge" and records(tmp_path)[-1]["status"] == "unstructured"


def test_cli_refuses_bytes_that_are_not_utf8_in_one_line(tmp_path):
    """Bytes that are not UTF-8 never reach the splitter: the CLI says so and exits 2, printing no summary
    (nothing is passed on as if it had been judged)."""
    r = sjc(tmp_path, "prune", "--no-evidence", summary=b"\x89PNG\r\n\x1a\n\xff\xfe binary")
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().count("\n") == 1 and "not UTF-8" in r.stderr.decode()


def test_the_guard_keeps_a_summary_whole(tmp_path):
    r = sjc(tmp_path, "prune", *evidence(), summary=INVENTED.encode())
    assert r.returncode == 0, r.stderr
    assert r.stdout == INVENTED.encode()
    assert "guard: pruning would remove 3 of 3 entries" in r.stderr.decode()
    rec = records(tmp_path)[-1]
    assert rec["status"] == "judged" and rec["pruned"] == 0 and rec["guard"]["max_prune_share"] == 0.6
    assert all(e["decision"] == "keep" and "max_prune_share" in e["reason"] for e in rec["entries"])
    # the user lowers the guard: then the judge's decisions stand
    cfg = tmp_path / "sjc.toml"
    cfg.write_text("max_prune_share = 1.0\n")
    r = sjc(tmp_path, "prune", *evidence(), "--config", str(cfg), summary=INVENTED.encode())
    assert r.stdout == b"## Pending Tasks\n" and "guard" not in r.stderr.decode()
    assert records(tmp_path)[-1]["pruned"] == 3
    # under the share, nothing is held back
    cfg.write_text("max_prune_share = 0.0\n")
    r = sjc(tmp_path, "prune", *evidence(), "--config", str(cfg), "--summary", str(EX / "summary.md"))
    assert r.stdout == (EX / "summary.md").read_bytes() and "guard" in r.stderr.decode()


def test_a_bad_guard_value_is_a_one_line_config_error(tmp_path):
    cfg = tmp_path / "sjc.toml"
    cfg.write_text("max_prune_share = 1.5\n")
    r = sjc(tmp_path, "prune", "--config", str(cfg), summary=INVENTED.encode())
    assert r.returncode == 2 and "max_prune_share" in r.stderr.decode() and "Traceback" not in r.stderr.decode()


async def _mcp(tmp_path: Path, calls: list[tuple[str, dict]], errlog) -> list:
    params = StdioServerParameters(command=sjc_exe("sjc-mcp"), args=[], env=_env(tmp_path))
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return [await s.call_tool(name, args) for name, args in calls]


@pytest.mark.slow
def test_mcp_tools_return_what_they_cannot_read_unchanged(tmp_path):
    ev = [{"kind": "tool_output", "name": p.name, "content": p.read_text()} for p in OUTPUTS]
    texts = [PROSE.decode(), NUL.decode(), INVENTED]
    calls = [("prune_summary", {"summary": t, "evidence": ev}) for t in texts]
    calls.append(("judge_summary", {"summary": PROSE.decode(), "evidence": ev}))
    with (tmp_path / "server.err").open("w") as errlog:
        out = anyio.run(lambda: _mcp(tmp_path, calls, errlog))
    assert not any(r.is_error for r in out)
    for r, text in zip(out[:3], texts, strict=True):
        assert r.structured_content["pruned_summary"] == text
        assert r.structured_content["removed"] == 0
    assert out[0].structured_content["entries"] == [] and out[3].structured_content["entries"] == []
    assert len(out[2].structured_content["entries"]) == 3  # judged, and kept whole by the guard
    # the caller is told in the result
    assert out[0].structured_content["unstructured"] is True and out[3].structured_content["unstructured"] is True
    assert out[2].structured_content["guarded"] is True and not out[2].structured_content["unstructured"]
    assert any("unstructured" in w for w in out[0].structured_content["warnings"])
    assert any("guard: pruning would remove 3 of 3" in w for w in out[2].structured_content["warnings"])
    statuses = [(r["op"], r["status"]) for r in records(tmp_path)]
    assert statuses == [
        ("prune", "unstructured"),
        ("prune", "unstructured"),
        ("prune", "judged"),
        ("judge", "unstructured"),
    ]
