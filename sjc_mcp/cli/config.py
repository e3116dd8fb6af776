"""``sjc config path|show|init``: where the config is, what is in force, a commented start."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "where the config is (path), what is in force (show), a commented start (init)"


def add_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument("action", choices=["path", "show", "init"])
    g.add_argument("--config", metavar="FILE", help="this file instead of $SJC_CONFIG or the default")
    g.add_argument("--force", action="store_true", help="init: replace an existing file")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.setup import config_file

    if args.action == "init":
        print(config_file.init(args.config, force=args.force))
    else:
        print(getattr(config_file, args.action)(args.config))
    return 0
