"""What reading stdin through ``sjc_mcp.server.wire.Stdin`` costs the stdio MCP server, against reading the
same lines straight from the file descriptor, alternated in one run.

    python benchmarks/mcp_stdin.py [--runs 5]

Two loads, written into a pipe by a thread as a host writes them: 20 tool calls of 4 MB (a large evidence
argument) and 20,000 small ones; and the 4 MB calls again with one lone surrogate escape each (parsed and
written again by ``wire.repair``). Each figure is the median of --runs.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import threading
import time

from sjc_mcp.server.wire import Stdin


def _call(text: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"summary":"' + text + b'"}}}\n'


LOADS = {
    "20 calls of 4 MB": (_call(b"x" * 4_000_000), 20),
    "20,000 small calls": (_call(b"- a\\n- b"), 20_000),
    "20 calls of 4 MB, a lone surrogate each": (_call(b"x" * 4_000_000 + b"\\ud83d"), 20),
}


def _read(message: bytes, count: int, wire: bool) -> float:
    r, w = os.pipe()

    def feed() -> None:
        for _ in range(count):
            os.write(w, message)
        os.close(w)

    writer = threading.Thread(target=feed)
    writer.start()
    raw: io.RawIOBase = Stdin(r) if wire else io.FileIO(r)
    lines = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")
    t0 = time.perf_counter()
    n = sum(1 for _ in lines)
    took = time.perf_counter() - t0
    writer.join()
    lines.close()
    assert n == count
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"{'load':42} {'fd (ms)':>9} {'wire.Stdin (ms)':>16} {'extra per call':>15}")
    for name, (message, count) in LOADS.items():
        plain, wire = [], []
        for _ in range(args.runs):
            plain.append(_read(message, count, wire=False))
            wire.append(_read(message, count, wire=True))
        p, w = statistics.median(plain), statistics.median(wire)
        print(f"{name:42} {p * 1e3:9.1f} {w * 1e3:16.1f} {(w - p) / count * 1e6:12.1f} µs")


if __name__ == "__main__":
    main()
