"""``sjc replay``: judge every compaction of recorded transcripts after the fact, in shadow mode,
logging each as the hook would, so ``sjc audit`` shows what pruning would have done."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError, SJCError


def transcript_files(paths: Sequence[str]) -> list[Path]:
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
    return out


def replay(paths: Sequence[str], config: Config, progress: bool = True) -> dict[str, Any]:
    from sjc_mcp.hosts import boundary_count, read_boundary
    from sjc_mcp.pipeline import judge_boundary

    shadow = config.replace(mode="shadow")
    files = transcript_files(paths)
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
    done = pruned = 0
    errors: list[str] = []
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
                done += 1
            except SJCError as exc:
                errors.append(f"{f} boundary {i}: {exc}")
            if bar is not None:
                bar.advance(task)
    finally:
        if bar is not None:
            bar.stop()
    return {"files": len(files), "boundaries": done, "would_prune": pruned, "skipped": skipped, "errors": errors}
