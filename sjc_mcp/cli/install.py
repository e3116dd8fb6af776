"""``sjc install HOST``: add the sjc hooks to a host's settings (with a backup)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "add the sjc hooks to a host's settings (with a backup)"


def add_arguments(i: argparse.ArgumentParser, trust: bool = True) -> None:
    i.add_argument("host", choices=["claude-code", "codex", "gemini", "hermes", "openclaw"])
    i.add_argument("--scope", choices=["user", "project"], default="user")
    i.add_argument("--dry-run", action="store_true", help="print the settings it would write; change nothing")
    if trust:
        i.add_argument(
            "--trust",
            action="store_true",
            help="codex: also trust the sjc hooks in $CODEX_HOME/config.toml (Codex skips untrusted hooks)",
        )


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.setup import install

    _, message = install.install(args.host, args.scope, args.dry_run, trust=args.trust)
    print(message)
    return 0
