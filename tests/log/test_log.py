from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sjc_mcp.log import chain as decision_log

WRITER = """
import sys

import pytest
from sjc_mcp.log import chain as log
for i in range(int(sys.argv[2])):
    log.append(sys.argv[1], {"writer": sys.argv[3], "i": i, "pad": "x" * 5000})
"""


@pytest.mark.slow
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
    assert decision_log.read_anchor(path) == {"v": 1, "records": 360, "hash": recs[-1]["hash"]}


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


def test_anchor_follows_every_append_and_files_are_private(tmp_path):
    path = tmp_path / "state" / "d.jsonl"
    recs = [decision_log.append(path, {"i": i}) for i in range(5)]
    anchor = decision_log.read_anchor(path)
    assert anchor is not None and anchor["records"] == 5 and anchor["hash"] == recs[-1]["hash"]
    assert path.stat().st_mode & 0o777 == 0o600
    assert decision_log.anchor_path(path).stat().st_mode & 0o777 == 0o600
    assert not list(path.parent.glob(".*.tmp"))  # the anchor is replaced by rename, no leftovers


def test_anchor_is_rebuilt_for_an_older_log_without_one(tmp_path):
    path = tmp_path / "d.jsonl"
    for i in range(3):
        decision_log.append(path, {"i": i})
    decision_log.anchor_path(path).unlink()
    last = decision_log.append(path, {"i": 3})
    assert decision_log.read_anchor(path) == {"v": 1, "records": 4, "hash": last["hash"]}


def test_a_short_write_leaves_neither_half_a_line_nor_a_moved_anchor(tmp_path, monkeypatch):
    path = tmp_path / "d.jsonl"
    decision_log.append(path, {"i": 0})
    before, anchor = path.read_bytes(), decision_log.read_anchor(path)
    real_write = os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        return real_write(fd, bytes(data)[: len(data) // 2])  # the disk fills half way through the line

    monkeypatch.setattr(decision_log.os, "write", short_write)
    with pytest.raises(OSError, match="short write"):
        decision_log.append(path, {"i": 1, "pad": "y" * 1000})
    monkeypatch.setattr(decision_log.os, "write", real_write)
    assert len(calls) == 1  # the record went out in one write call
    assert path.read_bytes() == before and decision_log.read_anchor(path) == anchor
    nxt = decision_log.append(path, {"i": 2})
    assert decision_log.read_anchor(path)["records"] == 2 and nxt["prev"] == anchor["hash"]


def test_every_record_leaves_with_a_session_and_a_boundary_id(tmp_path):
    path = tmp_path / "d.jsonl"
    entries = [{"section": "Errors", "text_sha": "ab" * 8, "text": "x"}, {"section": "Files", "text_sha": "cd" * 8}]
    judged = decision_log.append(path, {"op": "judge", "source": "summary.md", "entries": entries})
    pruned = decision_log.append(path, {"op": "prune", "source": "summary.md", "entries": entries, "pruned": 1})
    other = decision_log.append(path, {"op": "prune", "source": "summary.md", "entries": entries[:1]})
    given = decision_log.append(path, {"op": "hook", "session": "S", "boundary_id": "B", "entries": entries})
    status = decision_log.append(path, {"op": "hook", "session": "S", "status": "timeout", "entries": []})
    assert judged["boundary_id"].startswith("h:") and judged["boundary_id"] == pruned["boundary_id"]
    assert other["boundary_id"] != judged["boundary_id"]  # another summary, another boundary
    assert judged["session"] == pruned["session"] == "no-session:summary.md"
    assert (given["session"], given["boundary_id"]) == ("S", "B")
    assert status["boundary_id"].startswith("h:") and status["session"] == "S"


def test_an_anchor_that_cannot_be_written_does_not_lose_the_record(tmp_path, capsys):
    path = tmp_path / "d.jsonl"
    decision_log.append(path, {"i": 0})
    decision_log.anchor_path(path).unlink()
    decision_log.anchor_path(path).mkdir()  # a folder where the anchor should be: it cannot be replaced
    rec = decision_log.append(path, {"i": 1})
    assert json.loads(path.read_text().splitlines()[-1]) == rec
    assert "could not update the decision log's anchor" in capsys.readouterr().err
    assert not list(tmp_path.glob(".*.tmp"))
