"""``sjc hook HOST``: the hook a host runs (``sjc-hook HOST`` is the same without the CLI's parser)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "run as a host hook: the host's hook JSON on stdin (always exits 0)"


def add_arguments(h: argparse.ArgumentParser) -> None:
    h.add_argument("host", help="claude-code or codex")
    h.add_argument("--config", metavar="FILE", help="config file")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.hook import run_main

    return run_main(args.host, args.config)
