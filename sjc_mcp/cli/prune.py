"""``sjc prune``: print the summary with its unsupported entries removed (the arguments of ``sjc judge``)."""

from __future__ import annotations

from sjc_mcp.cli.judge import add_arguments, judge_or_prune

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "print the summary with its unsupported entries removed"


__all__ = ["add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    return judge_or_prune(args, prune=True)
