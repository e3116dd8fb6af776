"""``sjc calibrate``: fit the offline judge's weights on labelled cases."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "fit the offline judge's weights on labelled cases"


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    c.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write weights.json")
    c.add_argument("--policy", choices=["sjc", "paper"], default="sjc")
    c.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sjc_mcp.config import load_config
    from sjc_mcp.eval.judge import calibrate

    weights = calibrate(args.paths, load_config(args.config), policy=args.policy)
    out = Path(args.output)
    tmp = out.with_name(f".{out.name}.tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(weights, indent=2, sort_keys=True) + "\n")
    tmp.replace(out)
    print(f"wrote {out}: fitted on {len(weights['fitted_on'])} cases, {weights['entries']} labelled entries")
    return 0
