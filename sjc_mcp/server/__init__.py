"""The MCP server ``sjc-mcp``: tools ``judge_summary``, ``prune_summary``, ``judge_tool_results`` and
``prune_tool_results`` over the library, on stdio (a host starts it) or streamable HTTP (one server for a team).

The tools are an ``MCPServer`` (``sjc_mcp.server.tools``). On stdio the process starts on a small front that
answers the handshake from the SDK's own cached answers (``sjc_mcp.server.front``), so hosts see the tools
within a few tens of milliseconds; the SDK is imported at the first tool call. So this module parses its
arguments with the standard library alone, and not at all when there are none. Over HTTP the SDK's ASGI app
is served by uvicorn behind a bearer-token check (``sjc_mcp.server.http``). Logs go to stderr only: on
stdio, stdout belongs to the protocol.

    sjc-mcp                                   # stdio, as a host starts it
    sjc-mcp --transport streamable-http --host 0.0.0.0 --port 8765 --log-dir /srv/sjc/logs
    python -m sjc_mcp.server --config team.toml
"""

from __future__ import annotations

import os
import sys
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_TOKEN_ENV = "SJC_MCP_TOKEN"
TRANSPORTS = ("stdio", "streamable-http")


class Options:
    """What the command line asked for (a plain class: ``dataclasses`` would cost the stdio start-up ~8 ms)."""

    def __init__(
        self,
        transport: str = "stdio",
        config: str | None = None,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        token_env: str | None = None,  # None: DEFAULT_TOKEN_ENV, if set
        tokens_file: str | None = None,
        log_dir: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
    ) -> None:
        self.transport = transport
        self.config = config
        self.host = host
        self.port = port
        self.token_env = token_env
        self.tokens_file = tokens_file
        self.log_dir = log_dir
        self.tls_cert = tls_cert
        self.tls_key = tls_key


class UsageError(Exception):
    """A bad command line: one line on stderr, exit 2."""


def _parser() -> Any:
    import argparse

    from sjc_mcp import __version__

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # one line, not the usage block
            raise UsageError(f"{message} (see sjc-mcp --help)")

    p = Parser(
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
        "required on a non-loopback address",
    )
    http.add_argument(
        "--tokens",
        metavar="FILE",
        dest="tokens_file",
        help="per-user bearer tokens, one 'USER TOKEN' per line (# comments): each call is logged under its "
        "token's user",
    )
    http.add_argument("--tls-cert", metavar="FILE", help="serve https with this certificate (PEM; with --tls-key)")
    http.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM; with --tls-cert)")
    p.add_argument(
        "--log-dir",
        metavar="DIR",
        help="one decision log per user: DIR/<user>.jsonl (user from the token or the X-SJC-User header; "
        "on stdio, the login name); default: the config's decision_log",
    )
    return p


def parse_args(argv: list[str]) -> Options:
    """The options; ``--help``/``--version`` print and exit 0, a bad command line raises ``UsageError``."""
    if not argv:
        return Options()  # what every host does: no argparse import on the hot path
    ns = _parser().parse_args(argv)
    if ns.transport == "stdio":
        http_only = {
            "--host": ns.host,
            "--port": ns.port,
            "--token-env": ns.token_env,
            "--tokens": ns.tokens_file,
            "--tls-cert": ns.tls_cert,
            "--tls-key": ns.tls_key,
        }
        given = [flag for flag, value in http_only.items() if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)} only with --transport streamable-http")
    if ns.port is not None and not 0 < ns.port < 65536:
        raise UsageError(f"--port {ns.port}: not a TCP port")
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
    return Options(
        transport=ns.transport,
        config=os.path.expanduser(ns.config) if ns.config else None,
        host=ns.host or DEFAULT_HOST,
        port=ns.port or DEFAULT_PORT,
        token_env=ns.token_env,
        tokens_file=os.path.expanduser(ns.tokens_file) if ns.tokens_file else None,
        log_dir=os.path.expanduser(ns.log_dir) if ns.log_dir else None,
        tls_cert=os.path.expanduser(ns.tls_cert) if ns.tls_cert else None,
        tls_key=os.path.expanduser(ns.tls_key) if ns.tls_key else None,
    )


def tool_options(opts: Options, remote: bool) -> dict[str, Any]:
    """The keyword arguments of ``server_tools.create_server`` for these options."""
    return {"config_path": opts.config, "log_dir": opts.log_dir, "remote": remote}


def main(argv: list[str] | None = None) -> int:
    try:
        opts = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"sjc-mcp: {exc}", file=sys.stderr)
        return 2
    if opts.transport == "streamable-http":
        from sjc_mcp.server.http import serve

        return serve(opts)
    if _stdin_is_tty():
        print(
            "sjc-mcp: this is an MCP server, waiting for a client's JSON-RPC on stdio (an MCP host starts it; "
            "see sjc-mcp --help); Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )
    from sjc_mcp.server.front import main as run

    return run(tool_options(opts, remote=False))


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def __getattr__(name: str) -> Any:
    if name in ("create_server", "INSTRUCTIONS"):
        from sjc_mcp.server import tools as server_tools

        return getattr(server_tools, name)
    raise AttributeError(f"module 'sjc_mcp.server' has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
