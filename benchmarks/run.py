"""Latency and memory of sjc at real session sizes, each figure against a reference timed in the same run.

    python benchmarks/run.py [--runs 7] [--transcript-mb 100] [--keep DIR] [--span-mb 2] [--audit-records 10000]
    python benchmarks/run.py --scaling [--runs 3]
    python benchmarks/run.py --only-mcp [--runs 7] [--mcp-against OTHER_SJC_MCP]
    (either with --in-place to time the sjc installed here as it is)

Every process timed is this checkout installed as a user installs it (``pip install .`` into a throw-away venv
using this environment's dependencies; an editable install starts slower), with one throw-away user cache
folder. The reference retrieval, ours and ``sjc prune`` as a
process are taken in turn, round by round: this machine's speed moves from minute to minute.

Prints, for the offline judge on a 2 MB span of tool outputs with a 150-entry Claude Code summary: the
split, retrieve, judge and prune times (median of --runs) and peak memory; the reference retrieval
(``rank_bm25.BM25Okapi`` over 300-character passages, one ``get_scores`` per entry) on the same input,
the ratio, and a check that both find the same top passages; ``sjc prune --json`` as a whole process
(inputs from files, as a user runs it) against that reference, and the judge stage against the
retrieval stage. Then every hook event as the host runs it (``sjc hook HOST``, the payload on stdin)
against a bare ``python -c pass``: Claude Code's PreCompact, PostToolBatch, UserPromptSubmit, PostCompact
and the judgment PostCompact starts in a process of its own (on a real transcript from
../shared/fixtures when present, then on each real Claude Code transcript there: the range), Codex's
SessionStart, UserPromptSubmit and PostCompact (on a real rollout), and an event each host sends that sjc
ignores; that judgment on a generated 100 MB transcript
with three compactions (wall time and peak RSS); proxy pass-through; ``sjc audit --json`` and
``--verify`` on a log of 10,000 boundaries written with sjc's own encoder (the chain and anchor must
verify); start-up of ``sjc --help``; and the MCP server's spawn-to-``initialize`` and first tool call
against an MCP SDK server with one trivial tool (``mcp_startup``; ``--only-mcp`` prints only these, with
``--mcp-against OTHER_SJC_MCP`` timed in the same rounds). ``--scaling`` prints only how cost grows: 0.5, 2, 8 and
32 MB of span with 50 to 600 entries, each stage's time and the peak RSS of the process that ran them,
``sjc prune --json`` as a process where the span is within its 20 MB evidence limit, and the growth
exponent between points (1 is linear, 2 quadratic). Everything is generated here, seeded; nothing is
downloaded. Processes are timed with their own peak RSS (see ``run_child``).
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
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import generate  # noqa: E402
import mcp_startup  # noqa: E402

from sjc_mcp.config import Config  # noqa: E402
from sjc_mcp.evidence import EvidenceIndex  # noqa: E402
from sjc_mcp.judges import make_judge  # noqa: E402
from sjc_mcp.models import Source  # noqa: E402
from sjc_mcp.pipeline import build_request, entry_results  # noqa: E402
from sjc_mcp.summary import split_summary  # noqa: E402
from sjc_mcp.text import tokens  # noqa: E402


def median_ms(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), out


def alternating(rounds: int, **fns: Callable[[], object]) -> dict[str, float]:
    """Each function's median wall time in ms, the functions run in turn (a, b, c, a, b, c, ...) for
    ``rounds`` rounds: a slow minute slows each of them alike, so their ratios hold."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(ts) for name, ts in times.items()}


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


def retrieval_uncompiled(sources: list[Source], entries: list) -> list[list[tuple[int, float]]]:
    """Index and top 3 per entry with ``sjc_mcp._bm25`` hidden: as an install without a C compiler runs."""
    from sjc_mcp import evidence

    compiled, evidence._bm25 = evidence._bm25, None
    try:
        ix = EvidenceIndex(sources, 300, 2000)
        return [ix.top_passages(e.text, 3) for e in entries]
    finally:
        evidence._bm25 = compiled


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
        res = entry_results(parsed, out, config.threshold, config.margin)
        return parsed.render({e.id for e in res if e.decision == "prune"})

    prune_ms, pruned = median_ms(prune, runs)
    tracemalloc.start()
    request = build_request(split_summary(summary), sources, config)
    judge.judge(request)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    # Our retrieval alone (index + per-entry top 3), the same where the compiled index is not built, the
    # reference on the same passages, and ``sjc prune --json`` as a whole process: taken in turn, round by
    # round, so a slow minute of this noisy machine slows each of them alike (the ratios are what count).
    idx = EvidenceIndex(sources, 300, 2000)
    passages = [idx.passage_text(i) for i in range(len(idx))]
    queries = [e.text for e in parsed.entries]
    got: dict[str, Any] = {}

    def ours() -> None:
        ix = EvidenceIndex(sources, 300, 2000)
        got["ours"] = [ix.top_passages(q, 3) for q in queries]

    def fallback() -> None:
        got["fallback"] = retrieval_uncompiled(sources, parsed.entries)

    def reference() -> None:
        got["ref"] = reference_top(passages, queries)

    with tempfile.TemporaryDirectory() as tmp:
        cmd, env = prune_command(Path(tmp), span_chars, entries)
        procs: list[tuple[float, float, int, str]] = []

        def process() -> None:  # twice a round: the process is the figure with the most spread
            procs.extend(run_child(cmd, env) for _ in range(2))

        timed = alternating(max(1, min(5, runs)), ours=ours, fallback=fallback, reference=reference, process=process)
    ours_top, ref, fallback_top = got["ours"], got["ref"], got["fallback"]
    same = all(
        [round(s, 9) for _, s in mine] == [round(s, 9) for s in theirs][: len(mine)]
        for mine, theirs in zip(ours_top, ref, strict=True)
    )
    ours_ms, fallback_ms, ref_ms = timed["ours"], timed["fallback"], timed["reference"]
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
        "index": idx.backend,
        "retrieval_ms": ours_ms,
        "uncompiled_ms": fallback_ms,
        "uncompiled_same": fallback_top == ours_top,
        "reference_ms": ref_ms,
        "speedup": ref_ms / ours_ms,
        "same_top_passages": same,
        **process_figures(procs),
        "rounds": max(1, min(5, runs)),
        "removed": len(parsed.entries) - pruned.count("\n   - ") if isinstance(pruned, str) else None,
    }


def write_inputs(folder: Path, span_chars: int, entries: int) -> tuple[Path, Path]:
    """The span as ``--evidence-jsonl`` and the summary as a file, for ``sjc prune`` as a process."""
    outputs = generate.span(span_chars)
    ev, summ = folder / f"evidence-{span_chars}.jsonl", folder / f"summary-{span_chars}-{entries}.md"
    with ev.open("w") as fh:
        for n, c, t in outputs:
            fh.write(json.dumps({"kind": "tool_output", "name": n, "call": f"{n}: {c}", "content": t}) + "\n")
    summ.write_text(generate.summary(entries, outputs))
    return ev, summ


# Runs one command and writes its wall time and peak RSS to a file. A child's ru_maxrss on Linux counts
# the memory of the process it was forked from (kept across exec), so the command is started from this
# small interpreter (no site packages), not from the benchmark's own large process.
_LAUNCHER = """
import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
wall = (time.perf_counter() - t0) * 1000
with open(sys.argv[1], "w") as fh:
    fh.write(f"{wall} {usage.ru_maxrss / 1024} {os.waitstatus_to_exitcode(status)}")
"""


def run_child(cmd: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, float, int, str]:
    """Wall ms and peak RSS MB of that one process, its exit code and stdout (stderr's tail is kept in
    ``LAST_STDERR`` for the error message of a failed run)."""
    global LAST_STDERR
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r", suffix=".usage") as usage:
        p = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, usage.name, *cmd],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
            text=True,
        )
        out, _ = p.communicate(stdin)
        err.seek(0)
        LAST_STDERR = err.read()[-2000:].decode(errors="replace")
        wall, peak, code = usage.read().split()
    return float(wall), float(peak), int(code), out


LAST_STDERR = ""


def numpy_import_ms(runs: int) -> float:
    """What importing numpy adds to a new process (``python -c 'import numpy'`` less ``python -c pass``)."""
    env = dict(os.environ)
    with_np = statistics.median(run_child([PYTHON, "-c", "import numpy"], env)[0] for _ in range(runs))
    bare = statistics.median(run_child([PYTHON, "-c", "pass"], env)[0] for _ in range(runs))
    return with_np - bare


def prune_command(folder: Path, span_chars: int, entries: int) -> tuple[list[str], dict[str, str]]:
    """``sjc prune --json`` as a user runs it (inputs from files written to ``folder``, JSON out), and its
    environment."""
    ev, summ = write_inputs(folder, span_chars, entries)
    cmd = [sjc_bin(), "prune", "--json", "--summary", str(summ), "--evidence-jsonl", str(ev)]
    return cmd, dict(os.environ, HOME=str(folder))


def process_figures(rounds: list[tuple[float, float, int, str]]) -> dict:
    """The median wall time and the largest peak RSS of ``run_child`` rounds of ``sjc prune``."""
    if any(r[2] != 0 for r in rounds):
        raise RuntimeError(f"sjc prune failed (exit {rounds[0][2]}): {LAST_STDERR}")
    return {
        "process_ms": statistics.median(r[0] for r in rounds),  # as the process itself took (see ``run_child``)
        "process_peak_mb": max(r[1] for r in rounds),
    }


def bench_process(runs: int, span_chars: int, entries: int) -> dict:
    """``sjc prune --json`` as a whole process, ``runs`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd, env = prune_command(Path(tmp), span_chars, entries)
        return process_figures([run_child(cmd, env) for _ in range(runs)])


CLAUDE_FIXTURES = HERE.parent.parent / "shared" / "fixtures" / "claude-code"


def _claude_fixture(name: str = "entire_0f_c364a22bea_0.jsonl") -> tuple[Path, str] | None:
    """A real Claude Code transcript cut where its last compaction was written, and that summary: what
    the background judgment of ``PostCompact`` reads (../shared/fixtures, when present)."""
    path = CLAUDE_FIXTURES / name
    if not path.exists():
        return None
    raw = path.read_bytes().splitlines(keepends=True)
    cut, summary = None, None
    for i, line in enumerate(raw):
        if b'"compact_boundary"' in line:
            cut = i
        elif b'"isCompactSummary"' in line and cut is not None:
            rec = json.loads(line)
            content = rec.get("message", {}).get("content")
            if isinstance(content, str):
                summary = content
    if cut is None or summary is None:
        return None
    out = Path(tempfile.mkdtemp(prefix="sjc-bench-cc-")) / "session.jsonl"
    out.write_bytes(b"".join(raw[:cut]))
    return out, summary


def _codex_fixture() -> Path | None:
    path = (
        HERE.parent.parent
        / "shared"
        / "fixtures"
        / "codex"
        / "agent-history__compaction__session_with_compaction.jsonl"
    )
    return path if path.exists() else None


def _gemini_fixture() -> tuple[Path, dict] | None:
    """A real Gemini CLI 0.61.0 chat file (../shared/e2e/gemini/samples) and a ``BeforeModel`` payload's
    ``llm_request`` of the request after its compression: the snapshot at the end of message 0."""
    path = HERE.parent.parent / "shared" / "e2e" / "gemini" / "samples" / "chat-headless.jsonl"
    if not path.exists():
        return None
    from sjc_mcp.hosts import gemini

    env = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"
    messages = [
        {"role": "user", "content": env + gemini.read_boundary(path).summary},
        {"role": "model", "content": "Got it. Thanks for the additional context!"},
        {"role": "user", "content": "Summarise what is left."},
        {"role": "model", "content": "\n".join(text for _, _, text in generate.span(50_000))},
    ]
    return path, {"model": "gemini-2.5-flash", "messages": messages}


def bench_hook_events(runs: int) -> list[dict]:
    """Every hook event as the host runs it (``sjc hook HOST``, the payload on stdin), each against a bare
    interpreter start in the same run. A note waits for the events that hand one over (it is put back
    between runs); the judging events judge a real transcript from ../shared/fixtures when present,
    else the benchmark's generated one."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = dict(os.environ, HOME=str(home))
        env.pop("SJC_DISABLE", None)
        env.pop("SJC_CONFIG", None)
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("XDG_STATE_HOME", None)
        transcript = home / "t.jsonl"
        transcript.write_text("")
        cc = _claude_fixture()
        if cc is None:
            generate.transcript(home / "gen.jsonl", 2_000_000, compactions=1)
            cc_path, cc_summary = home / "gen.jsonl", generate.summary(40, generate.span(50_000))
        else:
            cc_path, cc_summary = cc
        cx = _codex_fixture()
        base = {"session_id": "bench", "transcript_path": str(transcript), "cwd": tmp}
        note = {"text": "sjc (source-judged compaction): 1 entry ...", "key": "k", "trigger": "auto"}
        session = {"id": "bench"}

        def put_note() -> None:
            code = (
                "import json, sys; from sjc_mcp.hook.state import SessionState; "
                "s = SessionState.of(sys.argv[3]); s.put_note(json.loads(sys.argv[1]))\n"
                "with s.update() as st: st['codex_post_compact'] = {'transcript': sys.argv[2], 'size': 0}"
            )
            args = [json.dumps(note), str(transcript), session["id"]]
            subprocess.run([PYTHON, "-c", code, *args], env=env, check=True)

        def drain() -> None:  # wait for a background judgment to end before the next run
            code = (
                "import sys, time; from sjc_mcp.hook.state import SessionState; s = SessionState.of(sys.argv[1]); "
                "t = time.monotonic()\nwhile s.judging() and time.monotonic() - t < 30: time.sleep(0.02)"
            )
            subprocess.run([PYTHON, "-c", code, session["id"]], env=env, check=True)

        calls = [
            {
                "tool_use_id": "t1",
                "tool_name": "Bash",
                "tool_input": {"command": "pytest -q"},
                "tool_response": "48 passed",
            }
        ]
        cases: list[tuple[str, str, str, dict, object, str]] = [
            ("claude-code", "Notification (ignored)", "ignored", {"hook_event_name": "Notification"}, None, ""),
            (
                "claude-code",
                "PreCompact",
                "records",
                {"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
                None,
                "",
            ),
            (
                "claude-code",
                "PostToolBatch",
                "records",
                {"hook_event_name": "PostToolBatch", "tool_calls": calls},
                None,
                "",
            ),
            (
                "claude-code",
                "UserPromptSubmit, nothing waiting",
                "records",
                {"hook_event_name": "UserPromptSubmit", "prompt": "go on"},
                None,
                "",
            ),
            (
                "claude-code",
                "UserPromptSubmit, a note handed over",
                "hands over",
                {"hook_event_name": "UserPromptSubmit", "prompt": "go on"},
                put_note,
                "additionalContext",
            ),
            (
                "claude-code",
                "PostCompact (starts the judgment, returns)",
                "hands over",
                {
                    "hook_event_name": "PostCompact",
                    "trigger": "auto",
                    "compact_summary": cc_summary,
                    "transcript_path": str(cc_path),
                },
                drain,
                "",
            ),
            (
                "claude-code",
                "PostCompact judgment (background process)",
                "judges",
                judgment_payload(cc_path, cc_summary, cc_path.stat().st_size),
                None,
                "",
            ),
            (
                "codex",
                "SessionStart, source startup (ignored)",
                "ignored",
                {"hook_event_name": "SessionStart", "source": "startup"},
                None,
                "",
            ),
            (
                "codex",
                "UserPromptSubmit, nothing waiting",
                "records",
                {"hook_event_name": "UserPromptSubmit", "prompt": "go on", "turn_id": "t2"},
                None,
                "",
            ),
            (
                "codex",
                "SessionStart, source compact (hands the note)",
                "hands over",
                {"hook_event_name": "SessionStart", "source": "compact"},
                put_note,
                "additionalContext",
            ),
        ]
        if cx is not None:
            cases.append(
                (
                    "codex",
                    "PostCompact (judges the rollout)",
                    "judges",
                    {"hook_event_name": "PostCompact", "trigger": "auto", "turn_id": "t1", "transcript_path": str(cx)},
                    None,
                    "",
                )
            )
        gm = _gemini_fixture()
        if gm is not None:  # BeforeModel before every request: no snapshot (nearly all), judged once, then rewritten
            g_path, g_request = gm
            plain = {"model": g_request["model"], "messages": g_request["messages"][2:]}
            g_base = {"hook_event_name": "BeforeModel", "transcript_path": str(g_path)}

            def judge_gemini() -> None:
                payload = {**base, **g_base, "session_id": session["id"], "llm_request": g_request}
                run_child([hook_bin(), "gemini"], env, json.dumps(payload))

            cases += [
                ("gemini", "BeforeModel, no snapshot", "ignored", {**g_base, "llm_request": plain}, None, ""),
                (
                    "gemini",
                    "BeforeModel, first after a compression",
                    "judges",
                    {**g_base, "llm_request": g_request},
                    None,
                    "llm_request",
                ),
                (
                    "gemini",
                    "BeforeModel, a judged snapshot (rewrites)",
                    "hands over",
                    {**g_base, "llm_request": g_request},
                    judge_gemini,
                    "llm_request",
                ),
            ]
        python = statistics.median(run_child([PYTHON, "-c", "pass"], env)[0] for _ in range(runs))
        for i, (host, label, kind, extra, before, expect) in enumerate(cases):
            session["id"] = f"bench-{i}"
            walls = []
            for _ in range(runs):
                if kind == "judges":  # judged once per boundary: start from an empty state each time
                    for f in home.rglob("*"):
                        if f.is_file() and "sessions" in f.parts:
                            f.unlink()
                if callable(before):
                    before()
                payload = {**base, "session_id": session["id"], **extra}
                wall, _, code, out = run_child([hook_bin(), host], env, json.dumps(payload))
                if code != 0 or (expect and expect not in out):
                    raise RuntimeError(f"hook {host} {label}: exit {code}, output {out[:200]!r}, {LAST_STDERR}")
                walls.append(wall)
            rows.append({"host": host, "event": label, "kind": kind, "ms": statistics.median(walls)})
        drain()
    return [{"python_ms": python}, *rows]


def judgment_payload(transcript: Path, summary: str, size: int) -> dict:
    """What Claude Code's PostCompact hook hands the judgment it starts in a process of its own: the
    summary, and the transcript with its size when PostCompact ran (before the compaction was written)."""
    return {
        "hook_event_name": "PostCompact",
        "trigger": "auto",
        "compact_summary": summary,
        "transcript_path": str(transcript),
        "sjc_judge_now": True,
        "sjc_transcript_size": size,
    }


def bench_real_judgments(runs: int) -> list[dict]:
    """Claude Code's judgment (``PostCompact`` in its own process, as the host starts it) on every real
    transcript in ../shared/fixtures, each cut where its last compaction was written: one row each."""
    rows = []
    for path in sorted(CLAUDE_FIXTURES.glob("*.jsonl")) if CLAUDE_FIXTURES.is_dir() else []:
        got = _claude_fixture(path.name)
        if got is None:
            continue
        transcript, summary = got
        walls = []
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(runs):
                home = Path(tmp) / f"home-{r}"  # judged once per boundary: a fresh state each run
                home.mkdir()
                env = {
                    k: v
                    for k, v in os.environ.items()
                    if not k.startswith(("SJC_", "XDG_")) or k == "XDG_CACHE_HOME"  # the private cache folder
                }
                payload = {
                    "session_id": "bench",
                    "cwd": tmp,
                    **judgment_payload(transcript, summary, transcript.stat().st_size),
                }
                wall, _, code, _ = run_child(
                    [hook_bin(), "claude-code"], dict(env, HOME=str(home)), json.dumps(payload)
                )
                if code != 0:
                    raise RuntimeError(f"judgment of {path.name}: exit {code}, {LAST_STDERR}")
                walls.append(wall)
        entries = len(split_summary(summary).entries)
        rows.append(
            {
                "name": path.name,
                "mb": transcript.stat().st_size / 1e6,
                "entries": entries,
                "ms": statistics.median(walls),
            }
        )
        transcript.unlink()
        transcript.parent.rmdir()
    return rows


# The interpreter every timed process runs: this checkout installed as a user installs it (see
# ``install_as_user``), else this environment's. ``sjc_bin`` and ``mcp_bin`` are the commands beside it.
PYTHON = sys.executable


def sjc_bin() -> str:
    exe = Path(PYTHON).parent / "sjc"
    return str(exe) if exe.exists() else "sjc"


def hook_bin() -> str:
    """``sjc-hook``, what ``sjc install`` writes into a host's hook entries."""
    exe = Path(PYTHON).parent / "sjc-hook"
    return str(exe) if exe.exists() else "sjc-hook"


def mcp_bin() -> str:
    exe = Path(PYTHON).parent / "sjc-mcp"
    return str(exe) if exe.exists() else "sjc-mcp"


def private_cache(folder: Path) -> None:
    """Every timed process shares one throw-away user cache folder (``XDG_CACHE_HOME``)."""
    os.environ["XDG_CACHE_HOME"] = str(folder)


def install_as_user(folder: Path, src: Path = HERE.parent) -> str | None:
    """This checkout (or the tree at ``src``) installed as the README installs it (``pip install .``, not
    editable) into a throw-away venv in ``folder`` whose dependencies are this environment's (a ``.pth``
    line; its own ``.pth`` files, the editable finder among them, are not run). Its interpreter, or None where the
    install fails (the run then times this environment, and says so).

    An editable install costs every process ~15 ms at start-up (``site`` imports setuptools' finder,
    with pathlib and importlib.util) and every ``sjc_mcp`` import after it; a user's install has neither."""
    import sysconfig

    venv = folder / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
        python = venv / "bin" / "python"
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(src)],
            check=True,
            capture_output=True,
        )
        site = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            cwd=folder,
            capture_output=True,
            text=True,
        ).stdout.strip()
        Path(site, "_sjc_bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run(
            [str(python), "-c", "import sjc_mcp.cli, pydantic, mcp"], check=True, capture_output=True, cwd=folder
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        err = getattr(exc, "stderr", b"") or b""
        print(f"(could not install the checkout for timing: {exc} {err.decode(errors='replace')[-300:]})")
        return None
    return str(python)


def bench_hook(mb: int, keep: Path | None) -> dict:
    """The hook runs are the first child processes of this script, so RUSAGE_CHILDREN is theirs."""
    folder = keep or Path(tempfile.mkdtemp(prefix="sjc-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    if not path.exists() or abs(path.stat().st_size - mb * 1_000_000) > mb * 100_000:
        generate.transcript(path, mb * 1_000_000, compactions=3)
    home = folder / "home"
    env = dict(os.environ, HOME=str(home), SJC_DECISION_LOG=str(home / "decisions.jsonl"))
    # the judgment PostCompact starts in a process of its own, of the newest compaction: the transcript's
    # size when PostCompact ran (just before that compaction was written) and the summary it was handed
    cut, summary, offset = 0, "", 0
    with path.open("rb") as fh:
        for line in fh:
            if b'"compact_boundary"' in line:
                cut = offset
            elif b'"isCompactSummary"' in line:
                summary = json.loads(line)["message"]["content"]
            offset += len(line)
    payload = json.dumps({"session_id": "bench", "cwd": str(folder), **judgment_payload(path, summary, cut)})
    walls, rss = [], []
    for _ in range(3):
        for f in (home / "sessions").glob("*") if (home / "sessions").exists() else []:
            f.unlink()
        state = home / ".local" / "state" / "sjc" / "sessions"
        if state.exists():
            for f in state.glob("*"):
                f.unlink()
        wall, peak, _, _ = run_child([hook_bin(), "claude-code"], env, payload)
        walls.append(wall / 1000)
        rss.append(peak)
    log = home / "decisions.jsonl"
    from sjc_mcp.log import chain as decision_log

    recs = [r for _, r, _ in decision_log.read(log)] if log.exists() else []
    last = recs[-1] if recs else {}
    return {
        "transcript_mb": path.stat().st_size / 1e6,
        "hook_s": statistics.median(walls),
        "hook_peak_mb": max(rss),
        "status": last.get("status"),
        "flagged": last.get("pruned", 0) or 0,
        "entries": len(last.get("entries") or []),
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
            lambda: subprocess.run([hook_bin(), "claude-code"], input=compact, env=env, capture_output=True, text=True),
            runs,
        )[0]
    return {
        "python_ms": run([PYTHON, "-c", "pass"]),
        "help_ms": run([sjc_bin(), "--help"]),
        "hook_noop_ms": run([hook_bin(), "claude-code"], other),
        "hook_decide_ms": disabled,
    }


def bench_audit(runs: int, records: int = 10_000) -> dict:
    """``sjc audit --json`` on a log of 10,000 judged boundaries (30 entries each), and ``--verify``."""
    from sjc_mcp.log import chain as decision_log

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decisions.jsonl"
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
        recs = [
            {
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
            }
            for i in range(records)
        ]
        # written as sjc writes it (same encoder, chain and anchor), so --verify passes
        decision_log.append_many(path, recs)
        del recs
        size = path.stat().st_size / 1e6
        env = dict(os.environ, HOME=tmp)
        audit_ms = median_ms(
            lambda: subprocess.run([sjc_bin(), "audit", "--json", "--log", str(path)], env=env, capture_output=True),
            runs,
        )[0]
        verify_ms, v = median_ms(
            lambda: subprocess.run([sjc_bin(), "audit", "--verify", "--log", str(path)], env=env, capture_output=True),
            runs,
        )
        # the least any audit does: a Python process that reads the log and parses every line
        parse_only = "import json, sys\nfor line in open(sys.argv[1], 'rb'): json.loads(line)"
        parse_ms = median_ms(lambda: subprocess.run([PYTHON, "-c", parse_only, str(path)], env=env), runs)[0]
    return {
        "log_mb": size,
        "audit_ms": audit_ms,
        "verify_ms": verify_ms,
        "verified": v.returncode == 0,
        "parse_ms": parse_ms,
    }


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


SCALING = ((0.5, 50), (2, 150), (8, 300), (32, 600))


_STAGES = """
import json, sys, time
from sjc_mcp.config import Config
from sjc_mcp.judges import make_judge
from sjc_mcp.models import Source
from sjc_mcp.pipeline import build_request
from sjc_mcp.summary import split_summary
t0 = time.perf_counter()
with open(sys.argv[1]) as fh:
    sources = [Source(**json.loads(line)) for line in fh]
summary = open(sys.argv[2]).read()
config = Config()
judge = make_judge(config)
t1 = time.perf_counter()
parsed = split_summary(summary)
t2 = time.perf_counter()
request = build_request(parsed, sources, config)
t3 = time.perf_counter()
judge.judge(request)
t4 = time.perf_counter()
print(json.dumps({"read_ms": (t1 - t0) * 1000, "split_ms": (t2 - t1) * 1000, "retrieve_ms": (t3 - t2) * 1000,
                  "judge_ms": (t4 - t3) * 1000, "entries": len(parsed.entries)}))
"""


def bench_scaling(runs: int, points: tuple[tuple[float, int], ...] = SCALING) -> list[dict]:
    """How cost grows with the span and the summary. Per point: the stages (read, split, retrieve, judge)
    timed inside a process of their own, with that process's peak RSS (the stages have no size limit);
    and ``sjc prune --json`` as a whole process where the span is within its 20 MB evidence limit.
    Median of ``runs`` (one run from 8 MB on); the peak is the largest."""
    from sjc_mcp.pipeline import MAX_EVIDENCE_BYTES

    rows = []
    for mb, entries in points:
        n = runs if mb < 8 else 1
        with tempfile.TemporaryDirectory() as tmp:
            ev, summ = write_inputs(Path(tmp), int(mb * 1_000_000), entries)
            env = dict(os.environ, HOME=tmp)
            stages, peaks = [], []
            for _ in range(n):
                _, peak, code, out = run_child([PYTHON, "-c", _STAGES, str(ev), str(summ)], env)
                if code != 0:
                    raise RuntimeError(f"stages at {mb} MB failed: {LAST_STDERR}")
                stages.append(json.loads(out))
                peaks.append(peak)
        row = {"mb": mb, "entries": stages[0]["entries"], "peak_mb": max(peaks)}
        for k in ("read_ms", "split_ms", "retrieve_ms", "judge_ms"):
            row[k] = statistics.median(st[k] for st in stages)
        row["stages_ms"] = row["split_ms"] + row["retrieve_ms"] + row["judge_ms"]
        if mb * 1_000_000 <= MAX_EVIDENCE_BYTES * 0.95:
            proc = bench_process(n, int(mb * 1_000_000), entries)
            row["process_ms"], row["process_peak_mb"] = proc["process_ms"], proc["process_peak_mb"]
        rows.append(row)
    return rows


def print_scaling(rows: list[dict]) -> None:
    import itertools
    import math

    print(
        "scaling (MB of span | entries | read sources | split | retrieve | judge | split+retrieve+judge ms | "
        "peak RSS MB | sjc prune --json ms, peak RSS MB):"
    )
    for r in rows:
        proc = (
            f"{r['process_ms']:7.0f} ms, {r['process_peak_mb']:5.0f} MB"
            if "process_ms" in r
            else "  over the CLI's 20 MB evidence limit"
        )
        print(
            f"  {r['mb']:>5g} | {r['entries']:>4} | {r['read_ms']:7.0f} | {r['split_ms']:6.1f} | "
            f"{r['retrieve_ms']:7.0f} | {r['judge_ms']:7.0f} | {r['stages_ms']:7.0f} | {r['peak_mb']:6.0f} | {proc}"
        )
    # the exponent of each step: log(cost ratio) / log(size ratio); 1 is linear, 2 quadratic
    for a, b in itertools.pairwise(rows):
        grow = math.log(b["mb"] / a["mb"])
        keys = ("retrieve_ms", "judge_ms", "stages_ms", "peak_mb", "process_ms")
        parts = [f"{k} {math.log(b[k] / a[k]) / grow:.2f}" for k in keys if a.get(k, 0) > 0 and b.get(k, 0) > 0]
        print(
            f"  {a['mb']:g} -> {b['mb']:g} MB: growth exponent "
            + ", ".join(parts).replace("_ms", "").replace("_mb", "")
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--transcript-mb", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="keep the generated transcript here (reused next time)")
    ap.add_argument("--span-mb", type=float, default=2.0, help="size of the span of tool outputs (default 2)")
    ap.add_argument("--audit-records", type=int, default=10_000, help="boundaries in the audited log")
    ap.add_argument("--proxy-requests", type=int, default=300)
    ap.add_argument(
        "--scaling",
        action="store_true",
        help="only the growth table: 0.5, 2, 8 and 32 MB of span with 50-600 entries (time and peak memory)",
    )
    ap.add_argument("--only-mcp", action="store_true", help="only the MCP server's start-up and first tool call")
    ap.add_argument(
        "--mcp-against",
        metavar="SJC_MCP",
        help="another sjc-mcp (another install or version) timed in the same rounds as this checkout's",
    )
    ap.add_argument("--scaling-points", help=argparse.SUPPRESS)  # MB:entries,… instead of the default four
    ap.add_argument(
        "--in-place",
        action="store_true",
        help="time the sjc installed in this environment as it is, an editable install too (by default this "
        "checkout is installed with pip, not editable, into a throw-away venv and timed there)",
    )
    a = ap.parse_args()
    if a.keep:
        a.keep = a.keep.resolve()
    global PYTHON
    with tempfile.TemporaryDirectory(prefix="sjc-bench-") as tmp:
        if not a.in_place:
            PYTHON = install_as_user(Path(tmp)) or sys.executable
        where = "this checkout installed as a user installs it" if sys.executable != PYTHON else "sjc as installed here"
        print(f"timing {where} ({Path(PYTHON).parent.parent}); Python {sys.version.split()[0]}")
        # a ``python -c`` child imports from its current folder first: never the checkout's source tree
        os.chdir(tmp)
        private_cache(Path(tmp) / "cache")
        return report(a)


def print_mcp(a: argparse.Namespace) -> None:
    """The MCP server's start-up and first call (``mcp_startup``), with ``--mcp-against`` in the same rounds."""
    servers = {"sjc-mcp": [mcp_bin()]}
    if a.mcp_against:
        servers[a.mcp_against] = [a.mcp_against]
    for line in mcp_startup.lines(mcp_startup.bench(servers, a.runs, PYTHON), list(servers)):
        print(line)


def report(a: argparse.Namespace) -> int:
    if a.only_mcp:
        print_mcp(a)
        return 0
    if a.scaling:
        points = SCALING
        if a.scaling_points:
            points = tuple((float(mb), int(n)) for mb, n in (p.split(":") for p in a.scaling_points.split(",")))
        print_scaling(bench_scaling(max(1, min(a.runs, 5)), points))
        return 0
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
        f"{'yes' if s['same_top_passages'] else 'NO'}; index build: {s['index']}"
    )
    print(
        f"  the same retrieval where the compiled index was not built (Python and numpy) {s['uncompiled_ms']:.1f} ms "
        f"(+ {numpy_import_ms(a.runs):.0f} ms to import numpy in a new process): "
        f"{s['reference_ms'] / s['uncompiled_ms']:.1f}x the "
        f"reference; same passages and scores: {'yes' if s['uncompiled_same'] else 'NO'}"
    )
    print(
        f"  sjc prune --json as a whole process {s['process_ms']:.0f} ms (peak RSS {s['process_peak_mb']:.0f} MB) vs "
        f"the reference rank_bm25 retrieval alone {s['reference_ms']:.0f} ms: "
        f"{s['reference_ms'] / s['process_ms']:.1f}x (target >= 6x)"
    )
    print(
        f"  (the reference, our retrieval, the uncompiled one and the process (twice) were taken in turn, "
        f"{s['rounds']} rounds: medians)"
    )
    print(
        f"  judge stage {s['judge_ms']:.1f} ms vs retrieval stage {s['retrieve_ms']:.1f} ms: "
        f"{s['judge_ms'] / s['retrieve_ms']:.2f}x"
    )
    ev = bench_hook_events(a.runs)
    py = ev[0]["python_ms"]
    limits = {"ignored": ("<= 2x python", 2 * py), "records": ("<= 120 ms", 120.0), "hands over": ("<= 120 ms", 120.0)}
    limits["judges"] = ("<= 300 ms", 300.0)
    print(f"hook events as the host runs them (stdin JSON in), median of {a.runs}; python -c pass {py:.0f} ms:")
    for r in ev[1:]:
        what, limit = limits[r["kind"]]
        print(
            f"  {r['host']:11} {r['event']:46} {r['ms']:6.0f} ms  {r['ms'] / py:4.1f}x python  "
            f"({r['kind']}, target {what}: {'ok' if r['ms'] <= limit else 'OVER'})"
        )
    real = bench_real_judgments(min(a.runs, 3))
    if real:
        ms = sorted(r["ms"] for r in real)
        worst = max(real, key=lambda r: r["ms"])
        print(
            f"Claude Code's judgment on each of the {len(real)} real transcripts in ../shared/fixtures (median of "
            f"{min(a.runs, 3)} each): {ms[0]:.0f}-{ms[-1]:.0f} ms, median {statistics.median(ms):.0f} ms "
            f"(target <= 300: {'ok' if ms[-1] <= 300 else 'OVER'}); slowest {worst['name']} ({worst['mb']:.1f} MB, "
            f"{worst['entries']} entries)"
        )
    h = bench_hook(a.transcript_mb, a.keep)
    print(
        f"hook end to end on a {h['transcript_mb']:.0f} MB transcript (3 compactions): {h['hook_s']:.2f} s "
        f"(target <= 1.5), peak RSS {h['hook_peak_mb']:.0f} MB (target <= 250); {h['status']}: {h['flagged']} of "
        f"{h['entries']} entries flagged"
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
        "(target <= 1), "
        f"--verify {au['verify_ms'] / 1000:.2f} s ({'chain and anchor intact' if au['verified'] else 'VERIFY FAILED'})"
        f"; reference: python parsing every line with json {au['parse_ms'] / 1000:.2f} s"
    )
    st = bench_startup(a.runs)
    print(
        f"start-up: python -c pass {st['python_ms']:.0f} ms | sjc --help {st['help_ms']:.0f} ms | hook on an "
        f"event it ignores {st['hook_noop_ms']:.0f} ms | hook to its first decision (config, kill switch, log) "
        f"{st['hook_decide_ms']:.0f} ms (target <= 150)"
    )
    print_mcp(a)
    return 0 if s["same_top_passages"] and s["uncompiled_same"] and au["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
