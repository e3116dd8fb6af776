"""The MCP server ``sjc-mcp``: tools ``judge_summary``, ``prune_summary``, ``judge_tool_results`` and
``prune_tool_results`` over the library, on stdio (a host starts it) or streamable HTTP (one server for a team).

    options.py   the command line (standard library only: a bad one is reported before the SDK loads)
    app.py       the MCPServer and its four tools (thin: each calls the function of the same name in tools.py)
    tools.py     what the tools do, plain functions over the library
    schema.py    the tools' parameters and structured answers
    http.py      streamable HTTP for a team: bearer tokens, per-user logs, TLS (uvicorn)
    users.py     who a call is for; roots.py: which transcript paths the tools may read

``main`` parses the command line, then serves: on stdio with the SDK's own transport (``MCPServer.run``);
over HTTP the SDK's ASGI app behind a bearer-token check. Hosts wait for the server to answer before the
model's first turn (Codex with ``required = true``, ``claude -p`` by itself), so the server is the SDK's from
the first byte; what a tool call needs beyond the SDK (the pipeline, the judge) is imported at that call.
Logs go to stderr only: on stdio, stdout belongs to the protocol.

    sjc-mcp                                   # stdio, as a host starts it
    sjc-mcp --transport streamable-http --host 0.0.0.0 --port 8765 --log-dir /srv/sjc/logs
    python -m sjc_mcp.server --config team.toml
"""

from __future__ import annotations

import os
import sys

from sjc_mcp.server.options import Options, UsageError, parse_args

__all__ = ["Options", "UsageError", "main", "parse_args", "serve_stdio"]


def serve_stdio(opts: Options) -> int:
    """Serve the tools on stdin/stdout until the client closes them (exit 0).

    The first Ctrl-C ends the process as SIGINT does by default (the shell shows 130), quietly: the SDK reads
    stdin in a worker thread that a ``KeyboardInterrupt`` cannot stop, so Python's own handler would leave
    the server waiting for the next line (modelcontextprotocol/python-sdk#3551). Nothing of a stdio server
    is worth finishing once its user interrupts it; a decision log record is one write."""
    import logging
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():  # embedded elsewhere, the caller's handling stays
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    # before the SDK configures logging: warnings and errors only, one line each, on stderr
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="sjc-mcp: %(message)s")
    _repaired_stdin()
    from sjc_mcp.server.app import create_server

    create_server(config_path=opts.config, log_dir=opts.log_dir).run("stdio")
    return 0


def _repaired_stdin() -> None:
    """The SDK reads the client's lines from ``sys.stdin``, made here a private copy of fd 0 read through
    ``wire.Stdin`` (a lone surrogate escape becomes U+FFFD instead of a message the SDK drops unanswered);
    fd 0 itself then points at the null device, as the SDK would point it. Without a readable fd 0, as
    before."""
    import io

    from sjc_mcp.server.wire import Stdin

    try:
        private = os.dup(0)  # not inherited by children
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(Stdin(private)), encoding="utf-8", errors="replace")


def main(argv: list[str] | None = None) -> int:
    try:
        opts = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"sjc-mcp: {exc}", file=sys.stderr)
        return 2
    try:
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
        return serve_stdio(opts)
    except KeyboardInterrupt:  # the first Ctrl-C, wherever it lands: a quiet end
        return 130


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
