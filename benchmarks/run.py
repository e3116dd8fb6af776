"""Latency and memory of sjc at real session sizes, against the method's retrieval written plainly.

    python benchmarks/run.py [--runs 7] [--transcript-mb 100] [--keep DIR] [--span-mb 2] [--audit-records 10000]

Prints, for the offline judge on a 2 MB span of tool outputs with a 150-entry Claude Code summary:
the split, retrieve, judge and prune times (median of --runs) and peak memory; the reference
retrieval (``rank_bm25.BM25Okapi`` over 300-character passages, one ``get_scores`` per entry) timed
on the same input, the ratio, and a check that both find the same top passages; the hook end to
end on a generated 100 MB transcript with three compactions (wall time and peak RSS of the hook
process); the start-up time of ``sjc --help`` and of the hook against ``python -c pass``; and the MCP
server's spawn-to-``initialize`` and first tool call against the same server run by the MCP SDK alone.
Everything is generated here, seeded; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import generate  # noqa: E402

from sjc_mcp.config import Config  # noqa: E402
from sjc_mcp.evidence import EvidenceIndex  # noqa: E402
from sjc_mcp.judges import make_judge  # noqa: E402
from sjc_mcp.models import Source  # noqa: E402
from sjc_mcp.pipeline import _results, build_request  # noqa: E402
from sjc_mcp.summary import split_summary  # noqa: E402
from sjc_mcp.text import tokens  # noqa: E402


def median_ms(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), out


def reference_top(passages: list[str], queries: list[str], k: int = 3) -> list[list[float]]:
    """The method's retrieval the straightforward way: BM25Okapi, one get_scores call per entry."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    bm = BM25Okapi([tokens(p) for p in passages])
    out = []
    for q in queries:
        scores = bm.get_scores(tokens(q))
        cand = [i for i in np.argsort(scores)[::-1]]
        out.append(sorted((float(scores[i]) for i in cand[:k]), reverse=True))
    return out


def bench_span(runs: int, span_chars: int = 2_000_000, entries: int = 150) -> dict:
    outputs = generate.span(span_chars)
    sources = [Source(kind="tool_output", name=n, call=f"{n}: {c}", content=t) for n, c, t in outputs]
    summary = generate.summary(entries, outputs)
    config = Config()
    judge = make_judge(config)
    split_ms, parsed = median_ms(lambda: split_summary(summary), runs)
    retrieve_ms, request = median_ms(lambda: build_request(parsed, sources, config), runs)
    judge_ms, out = median_ms(lambda: judge.judge(request), runs)

    def prune():
        res = _results(parsed, out, config.threshold, config.margin)
        return parsed.render({e.id for e in res if e.decision == "prune"})

    prune_ms, pruned = median_ms(prune, runs)
    tracemalloc.start()
    request = build_request(split_summary(summary), sources, config)
    judge.judge(request)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    # our retrieval alone (index + per-entry top 3) against the reference, on the same passages
    ours_ms, index = median_ms(
        lambda: (lambda ix: (ix, [ix.top_passages(e.text, 3) for e in parsed.entries]))(
            EvidenceIndex(sources, 300, 2000)
        ),
        runs,
    )
    idx, ours = index
    passages = [idx.passage_text(i) for i in range(len(idx))]
    ref_runs = max(1, min(3, runs))
    ref_ms, ref = median_ms(lambda: reference_top(passages, [e.text for e in parsed.entries]), ref_runs)
    same = all(
        [round(s, 9) for _, s in mine] == [round(s, 9) for s in theirs][: len(mine)]
        for mine, theirs in zip(ours, ref, strict=True)
    )
    return {
        "span_chars": sum(len(t) for _, _, t in outputs),
        "outputs": len(outputs),
        "entries": len(parsed.entries),
        "passages": len(idx),
        "split_ms": split_ms,
        "retrieve_ms": retrieve_ms,
        "judge_ms": judge_ms,
        "prune_ms": prune_ms,
        "judge_plus_prune_ms": judge_ms + prune_ms,
        "total_ms": split_ms + retrieve_ms + judge_ms + prune_ms,
        "peak_mb": peak / 2**20,
        "retrieval_ms": ours_ms,
        "reference_ms": ref_ms,
        "speedup": ref_ms / ours_ms,
        "same_top_passages": same,
        "removed": len(parsed.entries) - pruned.count("\n   - ") if isinstance(pruned, str) else None,
    }


def sjc_bin() -> str:
    exe = Path(sys.executable).parent / "sjc"
    return str(exe) if exe.exists() else "sjc"


def bench_hook(mb: int, keep: Path | None) -> dict:
    """The hook runs are the first child processes of this script, so RUSAGE_CHILDREN is theirs."""
    folder = keep or Path(tempfile.mkdtemp(prefix="sjc-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    if not path.exists() or abs(path.stat().st_size - mb * 1_000_000) > mb * 100_000:
        generate.transcript(path, mb * 1_000_000, compactions=3)
    home = folder / "home"
    env = dict(os.environ, HOME=str(home), SJC_DECISION_LOG=str(home / "decisions.jsonl"))
    payload = json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(path),
            "cwd": str(folder),
            "hook_event_name": "SessionStart",
            "source": "compact",
        }
    )
    walls, rss = [], []
    for _ in range(3):
        for f in (home / "sessions").glob("*") if (home / "sessions").exists() else []:
            f.unlink()
        state = home / ".local" / "state" / "sjc" / "sessions"
        if state.exists():
            for f in state.glob("*"):
                f.unlink()
        t0 = time.perf_counter()
        r = subprocess.run([sjc_bin(), "hook", "claude-code"], input=payload, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        # the largest resident set of any child so far: each hook run is measured on its own below
        rss.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    out = json.loads(r.stdout) if r.stdout.strip() else {}
    return {
        "transcript_mb": path.stat().st_size / 1e6,
        "hook_s": statistics.median(walls),
        "hook_peak_mb": max(rss),
        "flagged": len(
            [
                ln
                for ln in out.get("hookSpecificOutput", {}).get("additionalContext", "").splitlines()
                if ln.startswith("- [")
            ]
        ),
    }


def bench_startup(runs: int) -> dict:
    def run(cmd: list[str], stdin: str = "") -> float:
        return median_ms(lambda: subprocess.run(cmd, input=stdin, capture_output=True, text=True), runs)[0]

    other = json.dumps({"session_id": "x", "hook_event_name": "Notification"})
    compact = json.dumps(
        {"session_id": "x", "hook_event_name": "SessionStart", "source": "compact", "transcript_path": "/nonexistent"}
    )
    with tempfile.TemporaryDirectory() as home:
        # switched off by the kill switch: read the config, decide, append a log record, exit
        kill = Path(home) / ".config" / "sjc" / "disabled"
        kill.parent.mkdir(parents=True)
        kill.touch()
        env = dict(os.environ, HOME=home)
        disabled = median_ms(
            lambda: subprocess.run(
                [sjc_bin(), "hook", "claude-code"], input=compact, env=env, capture_output=True, text=True
            ),
            runs,
        )[0]
    return {
        "python_ms": run([sys.executable, "-c", "pass"]),
        "help_ms": run([sjc_bin(), "--help"]),
        "hook_noop_ms": run([sjc_bin(), "hook", "claude-code"], other),
        "hook_decide_ms": disabled,
    }


def bench_mcp(runs: int) -> dict:
    """Spawn to answers of ``sjc-mcp`` over stdio, as a host starts it: ``initialize`` answered, ``tools/list``
    answered, and a first ``tools/call`` answered; the same for the server run by the MCP SDK alone (what
    ``sjc-mcp`` was before its front), and a bare Python that echoes one line (the floor)."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    rest = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "judge_summary", "arguments": {"summary": "- 48 passed\n- publish version 2.0 next"}},
        },
    ]

    def one(cmd: list[str], env: dict[str, str], full: bool) -> list[float]:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert p.stdin is not None and p.stdout is not None
        marks = []
        for msg in [init, *rest] if full else [init]:
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()
            if "id" in msg:
                if not p.stdout.readline():
                    raise RuntimeError(f"{cmd[0]} ended without answering {msg.get('method')}")
                marks.append((time.perf_counter() - t0) * 1000)
        p.kill()
        p.wait()
        return marks

    def med(cmd: list[str], env: dict[str, str], full: bool = True) -> list[float]:
        rounds = [one(cmd, env, full) for _ in range(runs)]
        return [statistics.median(r[i] for r in rounds) for i in range(len(rounds[0]))]

    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, SJC_DECISION_LOG=str(Path(home) / "decisions.jsonl"))
        exe = Path(sys.executable).parent / "sjc-mcp"
        front = med([str(exe) if exe.exists() else "sjc-mcp"], env)
        sdk_only = "from sjc_mcp.server_tools import create_server; create_server().run('stdio')"
        sdk = med([sys.executable, "-c", sdk_only], env)
        echo = med(
            [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.readline()); sys.stdout.flush()"], env, False
        )
    return {
        "init_ms": front[0],
        "list_ms": front[1],
        "call_ms": front[2],
        "sdk_init_ms": sdk[0],
        "sdk_call_ms": sdk[2],
        "echo_ms": echo[0],
    }


def bench_audit(runs: int, records: int = 10_000) -> dict:
    """``sjc audit --json`` on a log of 10,000 judged boundaries (30 entries each), and ``--verify``."""
    from sjc_mcp import log as decision_log

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decisions.jsonl"
        prev = decision_log.GENESIS
        entries = [
            {
                "id": i,
                "section": "Pending Tasks",
                "text_sha": "0" * 16,
                "text": "an entry " * 15,
                "score": i / 30,
                "decision": "prune" if i < 6 else "keep",
                "quote": "a quote " * 10,
                "origin": "tool_output (Bash)",
            }
            for i in range(30)
        ]
        with path.open("w") as fh:
            for i in range(records):
                rec = {
                    "v": 1,
                    "op": "hook",
                    "session": f"s{i % 200}",
                    "boundary": i % 3,
                    "host": "claude-code",
                    "judge": {"name": "lexical", "model": "lexical-1"},
                    "threshold": 0.5,
                    "margin": 0.05,
                    "mode": "enforce",
                    "status": "judged",
                    "entries": entries,
                    "kept": 24,
                    "pruned": 6,
                    "unjudged": 0,
                    "chars_before": 12000,
                    "chars_after": 11000,
                    "tokens_before": 3000,
                    "tokens_after": 2750,
                    "duration_ms": 40.0,
                    "errors": [],
                    "time": f"2026-11-30T00:00:{i % 60:02d}Z",
                    "prev": prev,
                }
                rec["hash"] = decision_log.record_hash(rec)
                prev = rec["hash"]
                fh.write(json.dumps(rec) + "\n")
        size = path.stat().st_size / 1e6
        env = dict(os.environ, HOME=tmp)
        audit_ms = median_ms(
            lambda: subprocess.run([sjc_bin(), "audit", "--json", "--log", str(path)], env=env, capture_output=True),
            runs,
        )[0]
        verify_ms = median_ms(
            lambda: subprocess.run([sjc_bin(), "audit", "--verify", "--log", str(path)], env=env, capture_output=True),
            runs,
        )[0]
    return {"log_mb": size, "audit_ms": audit_ms, "verify_ms": verify_ms}


def bench_proxy(n: int = 300) -> dict:
    """Pass-through latency on loopback: the same small request straight to a local upstream and through
    ``sjc proxy``, alternating, ``n`` times each."""
    import socket

    import httpx

    from tests.fake_upstream import FakeUpstream

    up = FakeUpstream()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with tempfile.TemporaryDirectory() as home:
        proc = subprocess.Popen(
            [sjc_bin(), "proxy", "--listen", f"127.0.0.1:{port}", "--upstream", up.url],
            env=dict(os.environ, HOME=home),
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            body = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
            direct, via = [], []
            with httpx.Client() as c:
                for i in range(n + 20):
                    for url, out in ((up.url, direct), (f"http://127.0.0.1:{port}", via)):
                        t0 = time.perf_counter()
                        c.post(url + "/v1/messages", json=body).raise_for_status()
                        if i >= 20:  # warm-up
                            out.append((time.perf_counter() - t0) * 1000)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            up.close()

    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    return {
        "direct_p50": pct(direct, 0.5),
        "direct_p99": pct(direct, 0.99),
        "proxy_p50": pct(via, 0.5),
        "proxy_p99": pct(via, 0.99),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--transcript-mb", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="keep the generated transcript here (reused next time)")
    ap.add_argument("--span-mb", type=float, default=2.0, help="size of the span of tool outputs (default 2)")
    ap.add_argument("--audit-records", type=int, default=10_000, help="boundaries in the audited log")
    ap.add_argument("--proxy-requests", type=int, default=300)
    a = ap.parse_args()
    s = bench_span(a.runs, int(a.span_mb * 1_000_000))
    print(
        f"{a.span_mb:g} MB span: {s['span_chars']:,} characters in {s['outputs']} outputs, {s['passages']:,} passages; "
        f"{s['entries']}-entry summary"
    )
    print(
        f"  split {s['split_ms']:.1f} ms | retrieve {s['retrieve_ms']:.1f} ms | judge {s['judge_ms']:.1f} ms | "
        f"prune {s['prune_ms']:.1f} ms   (median of {a.runs})"
    )
    print(
        f"  judge + prune {s['judge_plus_prune_ms']:.1f} ms (target <= 150); all stages {s['total_ms']:.1f} ms; "
        f"peak Python memory {s['peak_mb']:.1f} MB"
    )
    print(
        f"  retrieval (index + top 3 per entry) {s['retrieval_ms']:.1f} ms vs reference rank_bm25 "
        f"{s['reference_ms']:.1f} ms: {s['speedup']:.1f}x faster (target >= 20x); same top passages: "
        f"{'yes' if s['same_top_passages'] else 'NO'}"
    )
    h = bench_hook(a.transcript_mb, a.keep)
    print(
        f"hook end to end on a {h['transcript_mb']:.0f} MB transcript (3 compactions): {h['hook_s']:.2f} s "
        f"(target <= 1.5), peak RSS {h['hook_peak_mb']:.0f} MB (target <= 250); {h['flagged']} entries flagged"
    )
    px = bench_proxy(a.proxy_requests)
    print(
        f"proxy pass-through on loopback: p50 {px['proxy_p50']:.2f} ms vs direct {px['direct_p50']:.2f} ms "
        f"(+{px['proxy_p50'] - px['direct_p50']:.2f}); p99 {px['proxy_p99']:.2f} vs {px['direct_p99']:.2f} ms "
        f"(+{px['proxy_p99'] - px['direct_p99']:.2f})"
    )
    au = bench_audit(3, a.audit_records)
    print(
        f"audit of {a.audit_records:,} boundaries ({au['log_mb']:.0f} MB log): {au['audit_ms'] / 1000:.2f} s "
        "(target < 2), "
        f"--verify {au['verify_ms'] / 1000:.2f} s"
    )
    st = bench_startup(a.runs)
    print(
        f"start-up: python -c pass {st['python_ms']:.0f} ms | sjc --help {st['help_ms']:.0f} ms | hook on an "
        f"event it ignores {st['hook_noop_ms']:.0f} ms | hook to its first decision (config, kill switch, log) "
        f"{st['hook_decide_ms']:.0f} ms (target <= 150)"
    )
    mc = bench_mcp(a.runs)
    print(
        f"MCP server start-up: spawn to initialize answered {mc['init_ms']:.0f} ms (target <= 300), tools/list "
        f"{mc['list_ms']:.0f} ms, first tools/call {mc['call_ms']:.0f} ms | the MCP SDK alone: initialize "
        f"{mc['sdk_init_ms']:.0f} ms, first tools/call {mc['sdk_call_ms']:.0f} ms | a Python that echoes one line "
        f"{mc['echo_ms']:.0f} ms"
    )
    return 0 if s["same_top_passages"] else 1


if __name__ == "__main__":
    sys.exit(main())
