"""``sjc uninstall HOST``: take the sjc hooks out of a host's settings."""

from __future__ import annotations

from sjc_mcp.cli import install as _install

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "take the sjc hooks out of a host's settings"


def add_arguments(p: argparse.ArgumentParser) -> None:
    _install.add_arguments(p, trust=False)


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.setup import install, openclaw

    if args.host == "openclaw":
        _, message = openclaw.uninstall(args.dry_run)
    else:
        _, message = install.uninstall(args.host, args.scope, args.dry_run)
    print(message)
    return 0
