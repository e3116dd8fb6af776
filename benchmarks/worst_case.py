"""Hostile inputs, timed: the offline judge on a summary entry of each shape its patterns could stumble over,
identifier reading on one long unbroken token, and secret redaction on hostile tool outputs.

    python benchmarks/worst_case.py [--mb 1] [--runs 3]

Every figure (the median of --runs) stands beside two references timed in the same run: the same work on
ordinary text of the same size, and the same shape at half the size. Work that grows linearly with its
input takes about twice as long at the full size as at half (a ratio near 2); quadratic work near 4. The
tests check what these inputs give; how long they take is this script's to say.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from sjc_mcp.judges.lexical import LexicalJudge, anchors
from sjc_mcp.models import Chunk, JudgeEntry, JudgeRequest, Origin, Source
from sjc_mcp.redact import redact

ENTRY_SHAPES: dict[str, Callable[[int], str]] = {
    "letters": lambda n: "a" * n,
    "camelCase": lambda n: "aB" * (n // 2),
    "digits": lambda n: "7" * n,
    "numbers and spaces": lambda n: "1 " * (n // 2),
    "comma numbers": lambda n: "1," * (n // 2),
    "dotted": lambda n: "a." * (n // 2),
    "path": lambda n: "/a" * (n // 2),
    "snake": lambda n: "a_" * (n // 2),
    "backticks": lambda n: "`a" * (n // 2),
    "plan cue": lambda n: "once " * (n // 5),
    "percentages": lambda n: "5 % of " * (n // 7),
    "done": lambda n: "✅ Added " + "x" * n,
}
TOKEN_SHAPES: dict[str, Callable[[int], str]] = {
    "one letter": lambda n: "x" * n,
    "camel tail": lambda n: "ab" * 10 + "C" + "d" * n,
}
HOSTILE_OUTPUTS: dict[str, Callable[[int], str]] = {
    "a-": lambda n: "a-" * (n // 2),
    "sk-": lambda n: "sk-" * (n // 3),
    "password=": lambda n: "password=" * (n // 9),
    "PEM headers": lambda n: "-----BEGIN PRIVATE KEY-----" * (n // 27),
}
_ORDINARY = """
the cache limiter returned 429 after the refill window so the handler retried with backoff and the
worker queue drained; config.yaml sets port 8431 and db_host db-7.internal; pytest -q: 44 passed
"""
WORDS = _ORDINARY.split()


def ordinary(n: int) -> str:
    rnd = random.Random(7)
    out: list[str] = []
    size = 0
    while size < n:
        w = rnd.choice(WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


def judge_entry(text: str) -> None:
    out = "12 passed in 0.30s\n" + "word " * 300
    src = Source(kind="tool_output", name="Bash", call='Bash: {"command": "pytest -q"}', content=out)
    chunk = Chunk(id=0, source=0, origin=Origin(kind="tool_output", name="Bash"), text=f"{src.call}\n{out}", start=0)
    LexicalJudge().judge(
        JudgeRequest(
            entries=[JudgeEntry(id=0, section="Current Work", text=text, evidence=[0])],
            evidence=[chunk],
            sources=[src, Source(kind="user_message", content="add tests")],
            assistant_prose=[text[:20_000]],
        )
    )


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


Shapes = dict[str, Callable[[int], str]]


def table(title: str, work: Callable[[str], object], shapes: Shapes, n: int, runs: int) -> None:
    base = median_ms(lambda: work(ordinary(n)), runs)
    print(f"\n{title} ({n:,} characters; ordinary text of that size: {base:.1f} ms)")
    print(f"  {'shape':<20} {'ms':>9} {'x ordinary':>11} {'full/half':>10}")
    for name, make in shapes.items():
        full, half = make(n), make(n // 2)
        ms = median_ms(lambda full=full: work(full), runs)
        half_ms = median_ms(lambda half=half: work(half), runs)
        print(f"  {name:<20} {ms:9.1f} {ms / base:11.2f} {ms / max(half_ms, 1e-6):10.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=1.0, help="input size in millions of characters (default 1)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure, the median printed (default 3)")
    a = ap.parse_args()
    n = max(1000, int(a.mb * 1_000_000))
    judge_entry("warm-up: load the judge's tables")
    table("offline judge, one summary entry", judge_entry, ENTRY_SHAPES, n, a.runs)
    table("identifiers of one unbroken token", anchors, TOKEN_SHAPES, n, a.runs)
    table("secret redaction of one tool output", redact, HOSTILE_OUTPUTS, n, a.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
