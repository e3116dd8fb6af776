"""``sjc judge``: score every entry of a summary against the evidence, and say why."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from sjc_mcp.models import Boundary, JudgeResult, PruneResult, Source

HELP = "score every summary entry against the evidence"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--summary", metavar="FILE", help="the candidate summary (default: stdin, or the transcript's)")
    p.add_argument("--transcript", metavar="PATH", help="a host transcript: judge one of its compactions")
    p.add_argument("--boundary", type=int, metavar="N", help="which compaction of --transcript (default: newest)")
    p.add_argument("--evidence", metavar="FILE", nargs="*", action="extend", default=[], help="tool output files")
    p.add_argument("--evidence-jsonl", metavar="FILE", help="evidence as JSON lines {kind, name, content}")
    p.add_argument(
        "--no-evidence",
        action="store_true",
        help="judge against nothing but --previous (without it, a run with no evidence is refused)",
    )
    p.add_argument("--previous", metavar="FILE", help="the previous committed summary")
    p.add_argument("--task", metavar="FILE", help="the fixed task prompt the host keeps (not a source)")
    p.add_argument("--host", help="force a summary format: claude-code, codex, gemini, openclaw, hermes, generic")
    p.add_argument("--threshold", type=float, help="prune below this score (default from config: 0.5)")
    p.add_argument("--config", metavar="FILE", help="config file (default $SJC_CONFIG or ~/.config/sjc/config.toml)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _first_line(text: str) -> str:
    from sjc_mcp.summary._engine import strip_marker

    return strip_marker(text.split("\n", 1)[0]) if text else ""


def _entry_json(e: Any) -> dict[str, Any]:
    return {
        "id": e.id,
        "section": e.section,
        "text": e.text,
        "score": e.score,
        "decision": e.decision,
        "near_threshold": e.near_threshold,
        "contradicted": e.contradicted,
        "quote": e.quote,
        "origin": e.origin,
        "reason": e.reason,
    }


def _boundary(args: argparse.Namespace) -> tuple[Boundary | None, dict[str, Any]]:
    """The compaction ``--transcript`` names (None without one) and the log's meta; a run with nothing
    to judge against is refused here, before a summary is read from stdin."""
    from sjc_mcp.errors import InputError

    meta: dict[str, Any] = {}
    boundary = None
    if args.transcript:
        from sjc_mcp.hosts import read_boundary

        boundary = read_boundary(args.transcript, args.boundary)
        meta = {"transcript": args.transcript}
    elif args.boundary is not None:
        raise InputError("--boundary needs --transcript")
    if boundary is None and not (args.evidence or args.evidence_jsonl or args.no_evidence):
        raise InputError(
            "no evidence given: pass --evidence FILE..., --evidence-jsonl FILE or --transcript PATH "
            "(--no-evidence to judge against nothing: every entry without a source in --previous goes)"
        )
    return boundary, meta


def _summary(args: argparse.Namespace, boundary: Boundary | None, meta: dict[str, Any]) -> str | None:
    """The summary ``--summary`` (or stdin) gives; None to judge the boundary's own."""
    from sjc_mcp import inputs
    from sjc_mcp.errors import InputError

    if args.summary is None and boundary is not None:
        return None
    if args.summary in (None, "-") and sys.stdin.isatty():
        print("sjc: reading the summary from stdin (end it with Ctrl-D, or pass --summary FILE)", file=sys.stderr)
    summary = inputs.read_text(args.summary or "-", "summary")
    meta.setdefault("source", args.summary if args.summary not in (None, "-") else "stdin")
    if summary is None or not summary.strip():
        raise InputError("the summary is empty")
    return summary


def _evidence(args: argparse.Namespace) -> list[Source]:
    """The sources ``--evidence`` and ``--evidence-jsonl`` give; evidence given with no text is refused."""
    from sjc_mcp import inputs
    from sjc_mcp.errors import InputError

    sources = inputs.evidence_files(args.evidence)
    if args.evidence_jsonl:
        sources += inputs.evidence_jsonl(args.evidence_jsonl)
    if (args.evidence or args.evidence_jsonl) and not any(s.content.strip() for s in sources) and not args.no_evidence:
        raise InputError("the evidence given is empty: every --evidence file and --evidence-jsonl item has no text")
    return sources


def _print_pruned(r: PruneResult, as_json: bool) -> None:
    """The pruned summary (or its JSON) on stdout, what was removed on stderr."""
    from sjc_mcp.audit.view import removal_lines

    if as_json:
        out = {
            "pruned_summary": r.pruned_summary,
            "entries": [_entry_json(e) for e in r.entries],
            "removed": r.removed,
            "kept": r.kept,
            "chars_before": r.chars_before,
            "chars_after": r.chars_after,
            "threshold": r.threshold,
            "mode": r.mode,
            "judge": {"name": r.judge.name, "model": r.judge.model},
            "errors": r.errors,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(r.pruned_summary)
    for line in removal_lines(r):
        print(f"sjc: {line}", file=sys.stderr)


def _print_judged(r: JudgeResult, as_json: bool) -> None:
    """Every entry's decision, score and reason (or their JSON) on stdout."""
    from sjc_mcp.terminal import clean

    if as_json:
        out = {
            "entries": [_entry_json(e) for e in r.entries],
            "threshold": r.threshold,
            "judge": {"name": r.judge.name, "model": r.judge.model},
            "mode": r.mode,
            "errors": r.errors,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    for e in r.entries:
        score = "  -  " if e.score is None else f"{e.score:.2f}"
        first = _first_line(e.text)[:100]
        print(f"{e.decision:8} {score}  [{clean(e.section[:24])}] {clean(first)}")
        if e.reason:
            print(f"{'':15}{clean(e.reason[:300])}")


def judge_or_prune(args: argparse.Namespace, prune: bool) -> int:
    from sjc_mcp import inputs
    from sjc_mcp.config import load_config
    from sjc_mcp.models import PruneResult
    from sjc_mcp.pipeline import judge_boundary, judge_summary, prune_summary
    from sjc_mcp.terminal import clean

    config = load_config(args.config)
    boundary, meta = _boundary(args)
    summary = _summary(args, boundary, meta)
    sources = _evidence(args)
    previous = inputs.read_text(args.previous, "previous summary")
    task = inputs.read_text(args.task, "task")
    common = {"host": args.host, "threshold": args.threshold, "config": config, "meta": meta}
    if boundary is not None:
        r = judge_boundary(
            boundary,
            prune=prune,
            summary=summary,
            evidence=sources,
            previous_summary=previous,
            task=task,
            log=True,
            **common,
        )
        if r.note:
            print(f"sjc: nothing to judge at boundary {boundary.index}: {clean(r.note)}", file=sys.stderr)
            return 0
    else:
        fn = prune_summary if prune else judge_summary
        assert summary is not None
        r = fn(summary, sources, previous_summary=previous, task=task, log=True, **common)
    for warning in r.warnings:
        print(f"sjc: {clean(warning)}", file=sys.stderr)
    if isinstance(r, PruneResult):
        _print_pruned(r, args.json)
    else:
        _print_judged(r, args.json)
    for err in r.errors:
        print(f"sjc: {clean(err)}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    return judge_or_prune(args, prune=False)
