"""``sjc replay``: judge every compaction of recorded transcripts in shadow mode, and log it."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "judge every compaction of recorded transcripts in shadow mode, and log it"


def add_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    r.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.audit.replay import replay
    from sjc_mcp.config import load_config

    config = load_config(args.config)
    out = replay(args.paths, config)
    from sjc_mcp.terminal import clean

    for line in out["skipped"] + out["errors"]:
        print(f"sjc: {clean(line)}", file=sys.stderr)
    for line in out["warnings"]:
        print(f"sjc: warning: {clean(line)}", file=sys.stderr)
    same = out["compactions"] - out["boundaries"]
    once = f" ({same} read from more than one file, counted once)" if same else ""
    print(
        f"replayed {out['compactions']} compactions from {out['files']} files in shadow mode: "
        f"{out['would_prune']} entries would have been pruned at {out['boundaries']} boundaries{once}; "
        f"see `sjc audit` (log: {config.decision_log_path})"
    )
    if out["enforced"]:
        print(
            f"{out['enforced']} of these boundaries have an enforced decision in the log as well: sjc audit "
            "counts that decision for them, with the enforced ones"
        )
    return 0
