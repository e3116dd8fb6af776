"""The ``sjc`` command: a thin layer over the library, one module per command.

Each command module has ``HELP`` (its line in ``sjc --help``), ``add_arguments(parser)`` and
``run(args) -> exit status``. A run imports only its own command's module (argparse and the command's
libraries load there), so ``sjc --version`` and a hook event stay cheap. Library errors (``SJCError``)
are one line on stderr and exit 2; a bug is one line and exit 1 (``SJC_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # ``typing`` is not needed at run time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import ModuleType

# the commands in the order ``sjc --help`` lists them: each a module of this package
COMMANDS = (
    "judge",
    "prune",
    "eval",
    "calibrate",
    "audit",
    "replay",
    "tools",
    "proxy",
    "install",
    "uninstall",
    "doctor",
    "config",
    "hook",
)


def command(name: str) -> ModuleType:
    import importlib

    return importlib.import_module(f"sjc_mcp.cli.{name}")


def _parser(**kwargs: object) -> argparse.ArgumentParser:
    """A parser whose errors are one line and exit 2, not the usage block."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    return _Parser(**kwargs)  # type: ignore[arg-type]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``only``, of that one alone (a run parses one command's
    arguments, and building all of them costs every run's start several milliseconds)."""
    from sjc_mcp import __version__

    parser = _parser(
        prog="sjc",
        description="Source-Judged Compaction: drop the entries of a compaction summary that no tool "
        "output, user message or previous summary supports.",
    )
    parser.add_argument("--version", action="version", version=f"sjc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            module = command(name)
            module.add_arguments(sub.add_parser(name, help=module.HELP))
    return parser


def _closed_streams() -> list[int]:
    """The standard descriptors (0, 1, 2) the process was started without, each now /dev/null, so that no
    file sjc opens takes their number (a log opened as fd 1 would receive the output); and the closed
    ones' Python streams are /dev/null too."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one
    if 0 in closed:
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the process's stdin, open until it ends
    if 1 in closed:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    if 2 in closed:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    return closed


def main(argv: Sequence[str] | None = None) -> int:
    closed = _closed_streams() if argv is None else []
    # A short process that makes many small objects (chunks, passages, lines, words) and frees them by
    # reference counting: the cycle collector runs every 100,000 allocations instead of every 700 (as
    # mypy does); about 10 ms of a 2 MB prune, with the same peak memory.
    gc.set_threshold(100_000, 50, 100)
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(args_in[0] if args_in and args_in[0] in COMMANDS else None)
    args = parser.parse_args(args_in)
    if not args.command:
        parser.print_help()
        return 2
    if 1 in closed and args.command not in ("hook", "proxy"):  # its result would go nowhere
        print(f"sjc: error: standard output is closed: sjc {args.command} prints its result there", file=sys.stderr)
        return 2
    module = command(args.command)
    if args.command == "hook":  # never fails the host: exit 0, no traceback (the hook handles its faults)
        return int(module.run(args))
    from sjc_mcp.errors import SJCError

    try:
        return int(module.run(args))
    except SJCError as exc:
        from sjc_mcp.terminal import clean

        print(f"sjc: error: {clean(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("SJC_DEBUG"):
            raise
        from sjc_mcp.terminal import clean

        print(
            f"sjc: internal error: {type(exc).__name__}: {clean(exc)} (set SJC_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


def run() -> None:
    """The ``sjc`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    run()
