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
    c.add_argument(
        "--replace-shipped",
        action="store_true",
        help="allow FILE to be inside the installed sjc package (replaces the weights every sjc there uses)",
    )
    c.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import sjc_mcp
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.eval.judge import calibrate

    out = Path(args.output)
    package = Path(sjc_mcp.__file__).resolve().parent
    if package in out.resolve().parents and not args.replace_shipped:
        raise InputError(
            f"{out} is inside the installed sjc package ({package}): write the weights elsewhere and set "
            "[lexical] weights in the config to use them (or pass --replace-shipped)"
        )
    weights = calibrate(args.paths, load_config(args.config), policy=args.policy)
    tmp = out.with_name(f".{out.name}.tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(weights, indent=2, sort_keys=True) + "\n")
    tmp.replace(out)
    print(f"wrote {out}: fitted on {len(weights['fitted_on'])} cases, {weights['entries']} labelled entries")
    return 0
