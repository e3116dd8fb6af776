from __future__ import annotations

import json
import subprocess
import sys

from sjc_mcp import log as decision_log

WRITER = """
import sys
from sjc_mcp import log
for i in range(int(sys.argv[2])):
    log.append(sys.argv[1], {"writer": sys.argv[3], "i": i, "pad": "x" * 5000})
"""


def test_parallel_appends_never_interleave_or_lose_a_line(tmp_path):
    path = tmp_path / "d.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), "60", str(w)]) for w in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = path.read_text().splitlines()
    assert len(lines) == 360
    recs = [json.loads(line) for line in lines]  # every line is whole JSON
    prev = decision_log.GENESIS
    for rec in recs:  # and the chain is unbroken, in file order
        assert rec["prev"] == prev and rec["hash"] == decision_log.record_hash(rec)
        prev = rec["hash"]
    for w in range(6):
        assert [r["i"] for r in recs if r["writer"] == str(w)] == list(range(60))


def test_chain_continues_past_a_corrupt_last_line(tmp_path):
    path = tmp_path / "d.jsonl"
    first = decision_log.append(path, {"a": 1})
    with path.open("a") as fh:
        fh.write('{"half": ')
        fh.write("\n")
    second = decision_log.append(path, {"a": 2})
    assert second["prev"] == first["hash"]
    rows = list(decision_log.read(path))
    assert [r[1] is None for r in rows] == [False, True, False]
