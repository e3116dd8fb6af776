"""``sjc tools judge|prune``: relevance pruning of tool results."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

HELP = "relevance pruning of tool results: judge or prune them"


def add_arguments(t: argparse.ArgumentParser) -> None:
    tsub = t.add_subparsers(dest="tools_command", metavar="judge|prune")
    for name, text in (
        ("judge", "score every candidate tool result: still needed for the task?"),
        ("prune", "drop or truncate the tool results no longer needed; print the history"),
    ):
        tp = tsub.add_parser(name, help=text)
        tp.add_argument("--transcript", metavar="PATH", help="a host transcript: the span of one compaction")
        tp.add_argument("--boundary", type=int, metavar="N", help="which compaction (default: newest)")
        tp.add_argument("--messages", metavar="FILE", help="a JSON list of {role, content, name?, call_id?}")
        tp.add_argument("--task", metavar="FILE", help="the task (default: the first user message)")
        tp.add_argument("--config", metavar="FILE")
        tp.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp import inputs
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.models import as_dict
    from sjc_mcp.terminal import clean
    from sjc_mcp.tools import relevance

    if args.tools_command not in ("judge", "prune"):
        raise InputError("say `sjc tools judge` or `sjc tools prune`")
    config = load_config(args.config)
    meta: dict[str, Any] = {"surface": "cli"}
    if args.transcript:
        from sjc_mcp.hosts import read_boundary

        b = read_boundary(args.transcript, args.boundary)
        items = b.span
        meta.update(session=b.session_id, boundary=b.index, boundary_id=b.boundary_id, transcript=args.transcript)
    elif args.messages:
        text = inputs.read_text(args.messages, "messages")
        try:
            data = json.loads(text or "")
        except ValueError:
            raise InputError(f"{args.messages} is not JSON") from None
        items = relevance.messages_from_json(data)
    else:
        raise InputError("give --transcript PATH or --messages FILE")
    task = inputs.read_text(args.task, "task")
    fn = relevance.prune_tool_results if args.tools_command == "prune" else relevance.judge_tool_results
    r = fn(items, config=config, task=task, meta=meta)
    if args.json:
        print(
            json.dumps(
                {
                    "results": [as_dict(v) for v in r.results],
                    "chars_before": r.chars_before,
                    "chars_after": r.chars_after,
                    "tokens_before": r.tokens_before,
                    "tokens_after": r.tokens_after,
                    "tokens_estimated": True,
                    "status": r.status,
                    "judge": r.judge,
                    "errors": r.errors,
                },
                indent=2,
            )
        )
    elif args.tools_command == "prune":
        print(json.dumps([as_dict(m, exclude_none=True) for m in r.messages], indent=1, ensure_ascii=False))
    else:
        for v in r.results:
            score = "-" if v.score is None else f"{v.score:.2f}"
            note = f"  {clean(v.note)}" if v.note else ""
            sizes = f"{v.chars_before:>8} -> {v.chars_after:>8} chars"
            print(f"{v.decision:9} {score:>5}  {clean(v.tool or '?'):12} {sizes}{note}")
        print(f"{r.status}: tool-result characters {r.chars_before} -> {r.chars_after}", file=sys.stderr)
    for err in r.errors:
        print(f"sjc: {clean(err)}", file=sys.stderr)
    return 0
