"""``sjc replay``: judge every compaction of recorded transcripts after the fact, in shadow mode,
logging each as the hook would, so ``sjc audit`` shows what pruning would have done.

What it reports is counted as the audit counts it, by the audit's own function over the records this run
wrote (``summary.summarise``): each compaction once (the same compaction read from two files, as a session
continued in a new file carries its earlier records, is one boundary), its latest record standing for it.
Each file is read once, however often the paths given name it. A warning of a judgment (a span that starts
mid-session, the guard) names the file and boundary it is about.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError, SJCError


def transcript_files(paths: Sequence[str]) -> list[Path]:
    """The transcript files the paths name (folders searched), each once, in the order given."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            found = p.rglob("*")
            out += sorted(f for f in found if (f.suffix in (".jsonl", ".json") or f.name == "state.db") and f.is_file())
            out += sorted(p.rglob("openclaw-agent.sqlite"))  # OpenClaw's transcripts, a database per agent
        elif p.is_file():
            out.append(p)
        elif p.exists():
            raise InputError(f"transcript {p} is not a regular file (a FIFO, socket or device)")
        else:
            raise InputError(f"no such transcript file or folder: {p}")
    seen: set[Path] = set()
    unique = []
    for f in out:  # a folder and a file or folder in it, or one path twice: each file read once
        real = f.resolve()
        if real not in seen:
            seen.add(real)
            unique.append(f)
    return unique


def _plan(files: list[Path]) -> tuple[list[tuple[Path, int]], list[str]]:
    from sjc_mcp.hosts import boundary_count

    plan: list[tuple[Path, int]] = []
    skipped: list[str] = []
    for f in files:
        try:
            n = boundary_count(f)
        except SJCError as exc:
            skipped.append(f"{f}: {exc}")
            continue
        if n == 0:
            skipped.append(f"{f}: no compaction")
        plan += [(f, i) for i in range(n)]
    return plan, skipped


def _lines(path: Path) -> int:
    """How many lines the log has now (0 when there is none yet): this run's records come after them."""
    try:
        with path.open("rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return 0


def _counted(log: Path, after: int, files: list[Path]) -> tuple[dict[str, Any], int] | None:
    """This run's records in the log (after line ``after``, written by replay for these files), as the
    audit counts them, and how many of their boundaries the log holds an enforced decision for (which the
    audit counts instead); None when the log cannot be read back."""
    from sjc_mcp.audit.summary import boundary_keys, kind, read_log, summarise

    names = {str(f) for f in files}
    try:
        records, _ = read_log(log)
    except SJCError:
        return None
    keys = boundary_keys(records)
    ours = [i for i, r in enumerate(records) if r["_line"] > after and r.get("op") == "replay"]
    ours = [i for i in ours if records[i].get("transcript") in names]
    enforced = {k for k, r in zip(keys, records, strict=True) if kind(r) == "enforced"}
    return summarise([records[i] for i in ours], []), len({keys[i] for i in ours} & enforced)


def replay(paths: Sequence[str], config: Config, progress: bool = True) -> dict[str, Any]:
    from sjc_mcp.hosts import read_boundary
    from sjc_mcp.pipeline import judge_boundary

    shadow = config.replace(mode="shadow")
    files = transcript_files(paths)
    plan, skipped = _plan(files)
    log = config.decision_log_path
    before = _lines(log)
    done = pruned = 0
    errors: list[str] = []
    warnings: list[str] = []
    bar = None
    if progress and sys.stderr.isatty() and plan:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("replaying compactions", total=len(plan))
    try:
        for f, i in plan:
            try:
                b = read_boundary(f, i)
                meta = {"op": "replay", "surface": "replay", "transcript": str(f)}
                r = judge_boundary(b, config=shadow, meta=meta, log=True)
                pruned += sum(e.decision == "prune" for e in r.entries)
                warnings += [f"{f} boundary {i}: {w}" for w in r.warnings]
                done += 1
            except SJCError as exc:
                errors.append(f"{f} boundary {i}: {exc}")
            if bar is not None:
                bar.advance(task)
    finally:
        if bar is not None:
            bar.stop()
    out = {"files": len(files), "compactions": done, "boundaries": done, "would_prune": pruned, "enforced": 0}
    counted = _counted(log, before, files)
    if counted is not None and counted[0]["totals"]["records"] == done:  # all logged: count as the audit does
        report, out["enforced"] = counted
        out["boundaries"] = report["totals"]["boundaries"]
        out["would_prune"] = report["totals"]["shadow"]["would_prune"]
    return {**out, "skipped": skipped, "errors": errors, "warnings": warnings}
