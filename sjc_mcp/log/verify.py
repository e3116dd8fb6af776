"""``sjc audit --verify``: whether the decision log is whole and unedited. Each record carries the hash of
the one before it (``log.append`` writes the chain) and an anchor file beside the log keeps the last hash
and the count, so a record altered, removed, reordered or cut from the end is found and named by line."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError
from sjc_mcp.log import chain as decision_log


def _records(n: int) -> str:
    return "1 record was" if n == 1 else f"{n} records were"


def _hash_matches(rec: dict[str, Any], raw: str) -> bool:
    """Whether a record is the one its hash was made of. A line as the log writes it is the canonical
    JSON itself, so its bytes less the hash field are hashed as they are (no re-encoding); any other
    line (written by hand, re-formatted) is re-encoded canonically first."""
    h = rec["hash"]
    body = raw.replace(f',"hash":"{h}"', "", 1)
    if body != raw and hashlib.sha256(body.encode()).hexdigest() == h:
        return True
    return decision_log.record_hash(rec) == h


def verify(path: Path) -> tuple[int, list[str], list[str]]:
    """Check the hash chain and the anchor: every record unaltered, none removed, none reordered, none
    cut from the end. ``(records, problems, notes)``; notes do not make the log incomplete."""
    problem = decision_log.regular_file_problem(path)
    if problem is not None:
        raise InputError(problem)
    # the anchor before the log: a writer appends the line, then moves the anchor, so every record an
    # anchor read now names is already in the file (one appended meanwhile is reported as a note)
    anchor = decision_log.read_anchor(path)
    problems: list[str] = []
    notes: list[str] = []
    position: dict[str, int] = {}  # hash -> record number
    lines: dict[int, int] = {}  # record number -> line
    pending: list[tuple[int, int, str]] = []  # (line, record number, its prev) where the chain broke
    prev: str | None = decision_log.GENESIS
    count = 0
    for n, rec, raw in decision_log.read(path):
        if rec is None:
            problems.append(f"line {n}: corrupt (not JSON): {raw[:50]!r}")
            continue
        if not isinstance(rec.get("hash"), str) or "prev" not in rec:
            problems.append(f"line {n}: no hash chain fields")
            prev = None
            continue
        count += 1
        position.setdefault(rec["hash"], count)
        lines[count] = n
        if not _hash_matches(rec, raw):
            problems.append(f"line {n}: altered (its content does not match its hash)")
        if prev is not None and rec["prev"] != prev:
            pending.append((n, count, str(rec["prev"])))
        prev = rec["hash"]
    for n, number, want in pending:
        where = position.get(want)
        if want == decision_log.GENESIS:
            problems.append(f"line {n}: out of order (it was the first record)")
        elif where is not None and where > number:
            problems.append(f"line {n}: out of order (its predecessor is line {lines[where]})")
        elif where is not None:
            problems.append(f"line {n}: out of order or a record was removed (its predecessor is line {lines[where]})")
        else:
            problems.append(f"line {n}: the record before it was removed or altered (chain broken)")
    anchor_file = decision_log.anchor_path(path)
    if anchor is None:
        if count:
            state = "unreadable" if anchor_file.exists() else "missing"
            problems.append(
                f"the anchor {anchor_file} is {state}: records cut from the end of the log cannot be ruled out"
            )
    else:
        at = position.get(anchor["hash"])
        if at is None:
            if count < anchor["records"]:
                problems.append(
                    f"the log ends early: the anchor counts {anchor['records']} records, the log has {count}; "
                    f"{_records(anchor['records'] - count)} cut from the end (or its last record was altered)"
                )
            else:
                problems.append(
                    f"the anchor's last record (hash {anchor['hash'][:12]}…) is not in the log: the end of the log "
                    "was cut or its last record altered"
                )
        else:
            if at != anchor["records"]:
                problems.append(
                    f"the anchor counts {anchor['records']} records up to line {lines[at]}, the log has {at}: "
                    f"records were {'removed' if at < anchor['records'] else 'added'} before it"
                )
            if count > at:
                notes.append(
                    f"{count - at} record(s) after the anchor's last: a writer stopped between the log and the "
                    "anchor (the next append updates it)"
                )
    return count, problems, notes
