"""The ``sjc`` command: a thin layer over the library. Heavy modules load only in the command run."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any


def _add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--summary", metavar="FILE", default="-", help="the candidate summary (default: stdin)")
    p.add_argument("--evidence", metavar="FILE", nargs="*", default=[], help="tool outputs, one file each")
    p.add_argument("--evidence-jsonl", metavar="FILE", help="evidence as JSON lines {kind, name, content}")
    p.add_argument("--previous", metavar="FILE", help="the previous committed summary")
    p.add_argument("--task", metavar="FILE", help="the fixed task prompt the host keeps (not a source)")
    p.add_argument("--host", help="force a summary format: claude-code, codex, gemini, openclaw, hermes, generic")
    p.add_argument("--threshold", type=float, help="prune below this score (default from config: 0.5)")
    p.add_argument("--config", metavar="FILE", help="config file (default $SJC_CONFIG or ~/.config/sjc/config.toml)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sjc",
        description="Source-Judged Compaction: drop the entries of a compaction summary that no tool "
        "output, user message or previous summary supports.",
    )
    from sjc_mcp import __version__

    parser.add_argument("--version", action="version", version=f"sjc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    j = sub.add_parser("judge", help="score every summary entry against the evidence")
    _add_judge_args(j)
    p = sub.add_parser("prune", help="print the summary with its unsupported entries removed")
    _add_judge_args(p)
    return parser


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
    }


def _run_judge(args: argparse.Namespace, prune: bool) -> int:
    from sjc_mcp import io
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.pipeline import judge_summary, prune_summary

    config = load_config(args.config)
    summary = io.read_text(args.summary, "summary")
    if summary is None or not summary.strip():
        raise InputError("the summary is empty")
    sources = io.evidence_files(args.evidence)
    if args.evidence_jsonl:
        sources += io.evidence_jsonl(args.evidence_jsonl)
    kwargs = dict(
        previous_summary=io.read_text(args.previous, "previous summary"),
        task=io.read_text(args.task, "task"),
        host=args.host,
        threshold=args.threshold,
        config=config,
        meta={"source": args.summary if args.summary != "-" else "stdin"},
    )
    if prune:
        r = prune_summary(summary, sources, **kwargs)  # type: ignore[arg-type]
        if args.json:
            out = {
                "pruned_summary": r.pruned_summary,
                "entries": [_entry_json(e) for e in r.entries],
                "removed": r.removed,
                "kept": r.kept,
                "chars_before": r.chars_before,
                "chars_after": r.chars_after,
                "threshold": r.threshold,
                "mode": r.mode,
                "judge": r.judge.model_dump(),
                "errors": r.errors,
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            sys.stdout.write(r.pruned_summary)
    else:
        r = judge_summary(summary, sources, **kwargs)  # type: ignore[arg-type]
        if args.json:
            out = {
                "entries": [_entry_json(e) for e in r.entries],
                "threshold": r.threshold,
                "judge": r.judge.model_dump(),
                "mode": r.mode,
                "errors": r.errors,
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            for e in r.entries:
                score = "  -  " if e.score is None else f"{e.score:.2f}"
                first = _first_line(e.text)[:100]
                print(f"{e.decision:8} {score}  [{e.section[:24]}] {first}")
    for err in r.errors:
        print(f"sjc: {err}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    from sjc_mcp.errors import SJCError

    try:
        if args.command in ("judge", "prune"):
            return _run_judge(args, prune=args.command == "prune")
        parser.error(f"unknown command {args.command}")
    except SJCError as exc:
        print(f"sjc: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("SJC_DEBUG"):
            raise
        print(f"sjc: internal error: {type(exc).__name__}: {exc} (set SJC_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
