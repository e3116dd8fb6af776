"""``sjc eval``: measure the judge on labelled provenance cases (or tool-result pruning on transcripts)."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "measure the judge on labelled provenance cases"


def add_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    e.add_argument(
        "--policy",
        choices=["sjc", "paper"],
        default="sjc",
        help="paper: user messages are not a source (as in the paper)",
    )
    e.add_argument(
        "--loo",
        action="store_true",
        help="leave-one-case-out: score each case with lexical weights fitted on the others",
    )
    e.add_argument(
        "--lopo",
        action="store_true",
        help="leave-one-project-out: score each case with lexical weights fitted on the other projects' cases",
    )
    e.add_argument("--threshold", type=float, help="decision threshold (default from config)")
    e.add_argument(
        "--halves",
        type=int,
        default=0,
        metavar="N",
        help="with --mode tools: choose the threshold on half the transcripts and measure on the other half, N times",
    )
    e.add_argument("--config", metavar="FILE")
    e.add_argument("--json", action="store_true")
    e.add_argument(
        "--mode",
        choices=["summary", "tools"],
        default="summary",
        help="tools: identifier retention of relevance pruning on transcripts (PATH = transcripts)",
    )


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.eval.judge import evaluate
    from sjc_mcp.eval.report import render_text

    config = load_config(args.config)
    if args.threshold is not None:
        if not 0 <= args.threshold <= 1:
            raise InputError(f"threshold must be between 0 and 1, got {args.threshold}")
        config = config.replace(threshold=args.threshold)
    if args.mode == "tools":
        from sjc_mcp.eval.tools import identifier_retention
        from sjc_mcp.eval.tools import render_text as render_tools

        out = identifier_retention(args.paths, config, halvings=args.halves)
        print(json.dumps(out, indent=2) if args.json else render_tools(out))
        return 0
    report = evaluate(args.paths, config, policy=args.policy, loo=args.loo, lopo=args.lopo)
    print(json.dumps(report, indent=2) if args.json else render_text(report))
    return 0
