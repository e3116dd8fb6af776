"""``sjc doctor``: check the set-up per host; each problem with the command that fixes it."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "check the set-up per host: hooks, MCP server, proxy, config, log, judge, index"


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.setup import doctor

    checks, code = doctor.run(args.config)
    print("\n".join(c.line() for c in checks))
    return code
