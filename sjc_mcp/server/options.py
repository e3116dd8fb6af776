"""The command line of ``sjc-mcp``: what it asked for (``Options``), read with the standard library alone.

``--help`` and ``--version`` print and exit 0; a bad command line is one line on stderr and exit 2
(``UsageError``). Nothing here imports the MCP SDK: a mistake is reported at once.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import NoReturn

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_TOKEN_ENV = "SJC_MCP_TOKEN"
DEFAULT_IDLE_TIMEOUT = 30  # seconds
TRANSPORTS = ("stdio", "streamable-http")


@dataclass(frozen=True)
class Options:
    """What the command line asked for."""

    transport: str = "stdio"
    config: str | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token_env: str | None = None  # None: DEFAULT_TOKEN_ENV, if set
    tokens_file: str | None = None
    log_dir: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT


class UsageError(Exception):
    """A bad command line: one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not the usage block
        raise UsageError(f"{message} (see sjc-mcp --help)")


def _parser() -> argparse.ArgumentParser:
    from sjc_mcp import __version__

    p = _Parser(
        prog="sjc-mcp",
        description="The MCP server of Source-Judged Compaction (tools judge_summary, prune_summary, "
        "judge_tool_results, prune_tool_results). An MCP host starts it and speaks JSON-RPC on its stdin/stdout; "
        "with --transport streamable-http it serves MCP over HTTP at http://HOST:PORT/mcp (one server for a team; "
        "https with --tls-cert and --tls-key).",
        epilog=f"Over HTTP a bearer token is required on any address but loopback: export {DEFAULT_TOKEN_ENV} "
        "(or name another variable with --token-env, or give per-user tokens with --tokens). Clients then send "
        "'Authorization: Bearer <token>'; the user a call is logged under is the token's user (--tokens), else the "
        "X-SJC-User header.",
    )
    p.add_argument("--version", action="version", version=f"sjc-mcp {__version__}")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="the sjc config the tools use (default: $SJC_CONFIG, else config.toml in sjc's config folder)",
    )
    p.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="default: stdio")
    http = p.add_argument_group("streamable HTTP (with --transport streamable-http)")
    http.add_argument("--host", help=f"address to listen on (default {DEFAULT_HOST})")
    http.add_argument("--port", type=int, help=f"port to listen on (default {DEFAULT_PORT})")
    http.add_argument(
        "--token-env",
        metavar="NAME",
        help=f"environment variable holding the bearer token clients must send (default {DEFAULT_TOKEN_ENV}); "
        "required on a non-loopback address, of 16 bytes or more",
    )
    http.add_argument(
        "--tokens",
        metavar="FILE",
        dest="tokens_file",
        help="per-user bearer tokens, one 'USER TOKEN' per line (# comments; tokens of 16 bytes or more): each call "
        "is logged under its token's user, in a log of that token's own",
    )
    http.add_argument("--tls-cert", metavar="FILE", help="serve https with this certificate (PEM; with --tls-key)")
    http.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM; with --tls-cert)")
    http.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=int,
        help="a connection that keeps the server waiting this long is closed: a request's headers not complete "
        "this long after connecting or after the previous answer, a pause this long inside its body, an idle "
        f"keep-alive connection (default {DEFAULT_IDLE_TIMEOUT}); a call being answered is never cut",
    )
    p.add_argument(
        "--log-dir",
        metavar="DIR",
        help="one decision log per user: DIR/<user>.jsonl (user from the token or the X-SJC-User header; "
        "on stdio, the login name); default: the config's decision_log",
    )
    return p


def _check(ns: argparse.Namespace) -> None:
    """What argparse cannot say: flags that go together, flags for HTTP only, files that must exist."""
    if ns.transport == "stdio":
        http_only = {
            "--host": ns.host,
            "--port": ns.port,
            "--token-env": ns.token_env,
            "--tokens": ns.tokens_file,
            "--tls-cert": ns.tls_cert,
            "--tls-key": ns.tls_key,
            "--idle-timeout": ns.idle_timeout,
        }
        given = [flag for flag, value in http_only.items() if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)} only with --transport streamable-http")
    if ns.port is not None and not 0 < ns.port < 65536:
        raise UsageError(f"--port {ns.port}: not a TCP port")
    if ns.idle_timeout is not None and not 0 < ns.idle_timeout <= 86400:
        raise UsageError(f"--idle-timeout {ns.idle_timeout}: give seconds from 1 to 86400")
    if (ns.tls_cert is None) != (ns.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    for flag, path in (
        ("--config", ns.config),
        ("--tokens", ns.tokens_file),
        ("--tls-cert", ns.tls_cert),
        ("--tls-key", ns.tls_key),
    ):
        if path is not None and not os.path.isfile(os.path.expanduser(path)):
            raise UsageError(f"{flag} {path}: no such file")


def parse_args(argv: list[str]) -> Options:
    """The options; ``--help``/``--version`` print and exit 0, a bad command line raises ``UsageError``."""
    if not argv:
        return Options()  # what every host does
    ns = _parser().parse_args(argv)
    _check(ns)

    def path(value: str | None) -> str | None:
        return os.path.expanduser(value) if value else None

    return Options(
        transport=ns.transport,
        config=path(ns.config),
        host=ns.host or DEFAULT_HOST,
        port=ns.port or DEFAULT_PORT,
        token_env=ns.token_env,
        tokens_file=path(ns.tokens_file),
        log_dir=path(ns.log_dir),
        tls_cert=path(ns.tls_cert),
        tls_key=path(ns.tls_key),
        idle_timeout=ns.idle_timeout or DEFAULT_IDLE_TIMEOUT,
    )
