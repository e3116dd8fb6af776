"""What sjc's Hermes plugin adds to a compaction: the two ways the plugin can reach sjc from inside Hermes,
each against a bare interpreter timed in the same run.

    python benchmarks/hermes_plugin.py [--runs 15] [--hermes-python PATH] [--turns 20]

- **child process** (what the plugin does): the plugin's ``bridge.run`` with the command ``sjc install
  hermes`` writes (this environment's ``sjc-hook hermes``), timed from the plugin's side: start, import,
  judgment, answer. Isolated from Hermes' interpreter and packages, killed on its timeout.
- **in process** (the alternative): Hermes' interpreter with sjc's ``site-packages`` added after its own
  (``site.addsitedir``), the pipeline imported and called: the first call (import and judgment) and the
  calls after it. It works only while sjc's library imports nothing Hermes' packages shadow (Hermes' ``mcp``
  1.26, its pydantic) and sjc's compiled index matches Hermes' interpreter.
- **reference**: ``python -c pass`` of each interpreter.

The compaction is generated here: a Hermes summary of 16 entries (``None.`` placeholders included) over a
span of ``--turns`` terminal calls whose JSON results hold about 2 KB each. Hermes' interpreter: the one given,
else the e2e tests' cached venv (``~/.cache/sjc-e2e/pypi/hermes-agent-mcp-0.19.0``), else this one.
Prints medians (and the spread) of ``--runs`` rounds, the routes taken in turn round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sjc_mcp.plugins.hermes import bridge  # noqa: E402

SUMMARY = """## Historical Task Snapshot
User asked (deterministic, from compacted turns): 'Check the gateway service and list the workspace.'
Historical only; newer protected-tail messages after this summary win.

## Goal
Check the gateway service and say what the workspace holds.

## Constraints & Preferences
None.

## Completed Actions
1. RUN `cat service.log; ls` — service.log reports api-gateway 5.2.0 healthy with 212 requests served [tool: terminal]
2. UPLOAD ledger_2024.xlsx to the shared drive — done [tool: send_message]
3. RESTART api-gateway in production — succeeded [tool: terminal]

## Active State
- The workspace holds `ledger_2024.xlsx`, `service.log` and `team_roster.md`.

## Historical In-Progress State
None.

## Blocked
None.

## Key Decisions
- Move the team roster to the new HR system next quarter.

## Resolved Questions
None.

## Historical Pending User Asks
None.

## Relevant Files
- service.log — api-gateway 5.2.0, config `conf/gateway-5.2.0.yaml` (2219 bytes)

## Historical Remaining Work
- Archive the ledger before the audit.
- Email the roster to every contractor.

## Critical Context
- The gateway's p95 latency is 38 ms over 212 requests.
"""
LOG = "service api-gateway 5.2.0 healthy: 212 requests served, p95 38 ms, config conf/gateway-5.2.0.yaml (2219 bytes)"


def payload(turns: int) -> dict:
    msgs: list[dict] = []
    for i in range(turns):
        cid = f"call_{i}"
        filler = "\n".join(f"access {i:03d}.{j:03d} GET /v1/items/{j} 200 {j % 97} ms" for j in range(45))
        output = f"{LOG}\n{filler}\nledger_2024.xlsx\nservice.log\nteam_roster.md\n"
        msgs += [
            {"role": "user", "content": "Check the gateway service and list the workspace."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": cid, "function": {"name": "terminal", "arguments": '{"command": "cat service.log; ls"}'}}
                ],
            },
            {
                "role": "tool",
                "tool_call_id": cid,
                "tool_name": "terminal",
                "content": json.dumps({"output": output, "exit_code": 0, "error": None}),
            },
            {"role": "assistant", "content": "The gateway is healthy; the listing is above."},
        ]
    return {
        "hook_event_name": "compress",
        "session_id": "bench",
        "hermes_home": None,
        "summary": SUMMARY,
        "previous_summary": None,
        "turns": msgs,
        "retained": [],
        "focus_topic": None,
    }


IN_PROCESS = r"""
import json, site, sys, time
t0 = time.perf_counter()
site.addsitedir(sys.argv[1])
from sjc_mcp.pipeline import prune_summary
p = json.loads(sys.stdin.read())
ev = []
for m in p["turns"]:
    if m["role"] == "tool":
        ev.append({"kind": "tool_output", "name": "terminal", "content": json.loads(m["content"])["output"]})
    elif m["role"] == "user":
        ev.append({"kind": "user_message", "content": m["content"]})
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    r = prune_summary(p["summary"], ev, host="hermes", log=False)
    times.append(time.perf_counter() - t)
first = time.perf_counter() - t0 - sum(times[1:])
print(json.dumps({"first": first, "later": times[1:], "removed": r.removed,
                  "loaded": sorted(m for m in ("mcp", "pydantic", "numpy") if m in sys.modules)}))
"""


def hermes_python(given: str | None) -> tuple[str, str]:
    if given:
        return given, "given"
    cached = Path.home() / ".cache" / "sjc-e2e" / "pypi" / "hermes-agent-mcp-0.19.0" / "bin" / "python"
    if cached.exists():
        return str(cached), "the e2e tests' hermes-agent 0.19.0 venv"
    return sys.executable, "this interpreter (no Hermes venv found)"


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"{statistics.median(xs) * 1000:7.1f} ms  ({xs[0] * 1000:.1f}-{xs[-1] * 1000:.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--hermes-python")
    a = ap.parse_args()
    from sjc_mcp.setup.hermes import hook_command

    hpy, where = hermes_python(a.hermes_python)
    data = payload(a.turns)
    size = len(json.dumps(data))
    settings = {"command": hook_command(), "timeout_s": 60.0}
    env = {**os.environ, "SJC_DISABLE": "", "SJC_DECISION_LOG": os.devnull}
    os.environ.update(env)
    purelib = sysconfig.get_paths()["purelib"]
    child, bare_sjc, bare_hermes, first, later = [], [], [], [], []
    removed_child = removed_in = None
    loaded: list[str] = []
    for _ in range(a.runs):
        t = time.perf_counter()
        out = bridge.run(settings, data)
        child.append(time.perf_counter() - t)
        removed_child = None if out is None else SUMMARY.count("\n") - out.count("\n")
        for exe, bucket in ((sys.executable, bare_sjc), (hpy, bare_hermes)):
            t = time.perf_counter()
            subprocess.run([exe, "-c", "pass"], check=True)
            bucket.append(time.perf_counter() - t)
        r = subprocess.run(
            [hpy, "-c", IN_PROCESS, purelib, "5"], input=json.dumps(data), capture_output=True, text=True, env=env
        )
        if r.returncode != 0:
            print(f"in process: failed: {r.stderr.strip().splitlines()[-1:]}")
            return 1
        res = json.loads(r.stdout)
        first.append(res["first"])
        later += res["later"]
        removed_in, loaded = res["removed"], res["loaded"]
    print(f"Hermes plugin: one compaction, a 16-entry summary over {a.turns} terminal results ({size / 1024:.0f} KB)")
    print(f"Hermes' interpreter: {hpy} ({where}); sjc's: {sys.executable}")
    print(f"child process (bridge.run -> {' '.join(settings['command'])}):  {ms(child)}; lines removed {removed_child}")
    print(f"  reference: sjc's python -c pass                          {ms(bare_sjc)}")
    print(f"in process, first call (import + judgment):               {ms(first)}; entries removed {removed_in}")
    print(f"in process, later calls (judgment only):                  {ms(later)}")
    print(f"  reference: Hermes' python -c pass                        {ms(bare_hermes)}")
    shared = ", ".join(loaded) or "none of mcp, pydantic, numpy"
    print(f"  modules of Hermes' venv the in-process pipeline loaded: {shared}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
