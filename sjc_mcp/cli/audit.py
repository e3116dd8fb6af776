"""``sjc audit``: what the decision log says (terminal, JSON, HTML), or whether it is whole (``--verify``)."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "what the decision log says: pruned entries, savings, warnings"


def add_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--log", metavar="PATH", help="decision log (default from config)")
    a.add_argument("--session", metavar="ID", help="only this session")
    a.add_argument("--since", metavar="DATE", help="only records from this date or time on (ISO 8601)")
    a.add_argument("--json", action="store_true", help="print JSON for scripts")
    a.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (folders are created)")
    a.add_argument("--all", action="store_true", help="terminal: list kept entries too (dim), not only pruned ones")
    a.add_argument(
        "--verify",
        action="store_true",
        help="check the hash chain and its anchor; exit 1 if a record was altered, removed, reordered or cut "
        "from the end",
    )
    a.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sjc_mcp.audit import summary as audit
    from sjc_mcp.config import load_config

    config = load_config(args.config)
    path = Path(args.log).expanduser() if args.log else config.decision_log_path
    if args.verify:
        from sjc_mcp.log.verify import verify

        count, problems, notes = verify(path)
        for line in problems + notes:
            print(line)
        verdict = "whole: chain intact, anchor matches" if not problems else f"{len(problems)} problem(s)"
        print(f"{path}: {count} records, {verdict}")
        return 1 if problems else 0
    records, corrupt = audit.read_log(path, args.session, args.since)
    for c in corrupt:
        print(f"sjc: {c}", file=sys.stderr)
    report = audit.summarise(records, corrupt, config)
    if args.html:
        from sjc_mcp.audit.html import write_html

        print(f"wrote {write_html(report, str(path), args.html)}")
        return 0
    if args.json:
        report.pop("scores", None)
        print(json.dumps(report, default=str, ensure_ascii=False))
    else:
        from sjc_mcp.audit.view import render_terminal

        render_terminal(report, show_kept=args.all)
    return 0
