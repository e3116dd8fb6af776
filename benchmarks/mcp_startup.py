"""The MCP server's start-up and first tool call over stdio, as a host sees them, against references taken in
the same rounds (``benchmarks/run.py`` prints these figures among the others).

    python benchmarks/mcp_startup.py [--runs 7] [--against OTHER_SJC_MCP]

For each server: spawn to ``initialize`` answered, to ``tools/list`` answered, to a first ``tools/call``
(``judge_summary``) answered when sent at once, and that call's own time when it is sent a model's turn
(``CALL_PAUSE``) after the list; and its peak memory (``VmHWM``, where ``/proc`` has it). The references: an
``MCPServer`` with one trivial tool (what the SDK itself costs to start), a Python that echoes one line (the
floor), and with ``--against`` another ``sjc-mcp`` (another install or version). The servers are taken in turn,
round by round (this machine's speed moves from minute to minute); the figures are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# seconds between the tool list and the first tool call in the "a model's turn later" measure
CALL_PAUSE = 2.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "judge_summary", "arguments": {"summary": "- 48 passed\n- publish version 2.0 next"}},
}
# the SDK's own start-up: an MCPServer with one tool of the same name, nothing of sjc imported
SDK_FLOOR = """\
from mcp.server.mcpserver import MCPServer
server = MCPServer("floor")
@server.tool()
def judge_summary(summary: str) -> str:
    return summary
server.run("stdio")
"""
ECHO = "import sys; sys.stdout.write(sys.stdin.readline()); sys.stdout.flush()"


def _peak_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def session(cmd: list[str], env: dict[str, str], pause: float = 0.0, full: bool = True) -> dict[str, float]:
    """One server, spawned and talked to as a host does: the time of each answer since the spawn (ms)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert p.stdin is not None and p.stdout is not None
    marks: dict[str, float] = {}
    try:
        for name, msg in (("init", INITIALIZE), ("", INITIALIZED), ("list", LIST), ("call", CALL)):
            if not full and name != "init":
                break
            if name == "call" and pause:
                time.sleep(pause)
            sent = time.perf_counter()
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()
            if name:
                if not p.stdout.readline():
                    raise RuntimeError(f"{cmd[0]} ended without answering {msg['method']}")
                marks[f"{name}_ms"] = (time.perf_counter() - t0) * 1000
        if full:
            marks["call_own_ms"] = (time.perf_counter() - sent) * 1000
            peak = _peak_mb(p.pid)
            if peak is not None:
                marks["peak_mb"] = peak
    finally:
        p.kill()
        p.wait()
    return marks


def bench(servers: dict[str, list[str]], runs: int, python: str) -> dict[str, dict[str, float]]:
    """Every server (and the references) ``runs`` times, in turn; each figure's median."""
    commands = {
        **{name: (cmd, 0.0, True) for name, cmd in servers.items()},
        **{f"{name} later": (cmd, CALL_PAUSE, True) for name, cmd in servers.items()},
        "sdk": ([python, "-c", SDK_FLOOR], 0.0, True),
        "echo": ([python, "-c", ECHO], 0.0, False),
    }
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, SJC_DECISION_LOG=str(Path(home) / "decisions.jsonl"))
        for _ in range(runs):
            for name, (cmd, pause, full) in commands.items():
                rounds[name].append(session(cmd, env, pause, full))
    return {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in rounds.items()}


def lines(figures: dict[str, dict[str, float]], servers: list[str]) -> list[str]:
    """The figures as ``run.py`` prints them."""
    sdk, echo = figures["sdk"], figures["echo"]
    out = []
    for name in servers:
        f, later = figures[name], figures[f"{name} later"]
        peak = f" (peak RSS {f['peak_mb']:.0f} MB)" if "peak_mb" in f else ""
        out.append(
            f"MCP server start-up, {name}: spawn to initialize answered {f['init_ms']:.0f} ms, tools/list "
            f"{f['list_ms']:.0f} ms, first tools/call sent at once {f['call_ms']:.0f} ms{peak}; the first tools/call "
            f"sent {CALL_PAUSE:g} s after the list (a model's turn later): answered in {later['call_own_ms']:.0f} ms"
        )
    out.append(
        f"  references: an MCPServer with one trivial tool (the SDK's own start-up): initialize "
        f"{sdk['init_ms']:.0f} ms, first tools/call {sdk['call_ms']:.0f} ms | a Python that echoes one line "
        f"{echo['init_ms']:.0f} ms"
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", metavar="SJC_MCP", help="another sjc-mcp to time in the same rounds")
    a = ap.parse_args()
    here = Path(sys.executable).parent / "sjc-mcp"
    servers = {"sjc-mcp": [str(here) if here.exists() else "sjc-mcp"]}
    if a.against:
        servers[a.against] = [a.against]
    for line in lines(bench(servers, a.runs, sys.executable), list(servers)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
