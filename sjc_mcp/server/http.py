"""``sjc-mcp --transport streamable-http``: the tools served over MCP's streamable HTTP, for a team.

The SDK's ASGI app (``MCPServer.streamable_http_app``, endpoint ``/mcp``) served by uvicorn, behind
``BearerAuth``: with tokens configured, a request without ``Authorization: Bearer <token>`` gets 401; the
caller's user is the token's user (``--tokens FILE``) or else the ``X-SJC-User`` header, and is handed to the
tools in that header as its log name (``users.user_id``: one log per token, or per name as the client gave
it; whatever the client sent in the header is replaced). On any address but loopback the server refuses to
start without a token or with one shorter than 16 bytes, and says so when it serves without TLS
(``--tls-cert``/``--tls-key``: https, the pair checked before the start). A connection that keeps the
server waiting (a request never finished, an idle keep-alive) is closed after ``--idle-timeout`` seconds
(``sjc_mcp.server.idle``). The configuration is read and checked at start-up.
The first Ctrl-C (SIGINT) stops it: open streams get a moment to close, then exit 130, no traceback
(SIGTERM likewise, ending as SIGTERM does).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from sjc_mcp.server.options import DEFAULT_TOKEN_ENV, Options
from sjc_mcp.server.users import USER_HEADER, user_id

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"
MIN_TOKEN_BYTES = 16


class StartError(Exception):
    """The server cannot start as asked: one line on stderr, exit 2."""


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def read_tokens(path: str) -> dict[str, str]:
    """``USER TOKEN`` per line (blank lines and ``#`` comments skipped): token -> the log name of its user
    (``users.user_id``: the user's name made safe and a hash of the token, so no two tokens share a log)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StartError(f"--tokens {path}: cannot read it ({exc})") from None
    tokens: dict[str, str] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise StartError(f"--tokens {path}:{n}: expected 'USER TOKEN'")
        user, token = parts
        if len(token.encode()) < MIN_TOKEN_BYTES:
            raise StartError(f"--tokens {path}:{n}: the token of {user!r} is shorter than {MIN_TOKEN_BYTES} bytes")
        if token in tokens:
            raise StartError(f"--tokens {path}:{n}: the token of {user!r} is also another user's")
        uid = user_id(user, token=token.encode())
        if uid in tokens.values():  # two tokens whose hashes begin alike: never one log for both
            raise StartError(f"--tokens {path}:{n}: the token of {user!r} would share a log; choose another")
        tokens[token] = uid
    if not tokens:
        raise StartError(f"--tokens {path}: no tokens in it")
    return tokens


def tokens_for(opts: Options, env: dict[str, str] | None = None) -> dict[str, str | None]:
    """The accepted bearer tokens, each with its user (None: the user comes from the header); empty: no
    token required (loopback only)."""
    env = dict(os.environ) if env is None else env
    if opts.tokens_file:
        return dict(read_tokens(opts.tokens_file))
    name = opts.token_env or DEFAULT_TOKEN_ENV
    token = env.get(name, "")
    if opts.token_env and not token:
        raise StartError(f"--token-env {name}: the variable is not set (or empty)")
    tokens: dict[str, str | None] = {token: None} if token else {}
    if is_loopback(opts.host):
        return tokens
    if not tokens:
        raise StartError(
            f"refusing to serve on {opts.host} (not loopback) without a bearer token: set {DEFAULT_TOKEN_ENV} "
            "(or --token-env NAME, or --tokens FILE)"
        )
    if len(token.encode()) < MIN_TOKEN_BYTES:
        raise StartError(
            f"refusing to serve on {opts.host} (not loopback) with a token of {len(token.encode())} bytes in {name}: "
            f"give one of {MIN_TOKEN_BYTES} bytes or more (openssl rand -hex 24)"
        )
    return tokens


def check_tls(opts: Options) -> None:
    """The certificate and key load together (checked before the server starts: a mistake is one line)."""
    if not opts.tls_cert:
        return
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(opts.tls_cert, opts.tls_key)
    except (ssl.SSLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
        raise StartError(
            f"--tls-cert {opts.tls_cert} / --tls-key {opts.tls_key}: cannot serve with them ({why})"
        ) from None


class BearerAuth:
    """ASGI middleware: the bearer check, and the caller's user in the ``X-SJC-User`` header."""

    def __init__(self, app: ASGIApp, tokens: dict[str, str | None]) -> None:
        self.app = app
        self.tokens = [(t.encode(), u) for t, u in tokens.items()]

    def _match(self, given: bytes | None) -> tuple[bool, str | None]:
        if not self.tokens:
            return True, None
        found: tuple[bool, str | None] = (False, None)
        for token, user in self.tokens:  # every token compared, in constant time each
            if given is not None and hmac.compare_digest(given, token):
                found = (True, user)
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
        auth = next((v for k, v in headers if k.lower() == b"authorization"), b"")
        scheme, _, given = auth.partition(b" ")
        ok, user = self._match(given.strip() if scheme.lower() == b"bearer" and given.strip() else None)
        if not ok:
            body = json.dumps({"error": "unauthorized", "detail": "send Authorization: Bearer <token>"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="sjc-mcp"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if user is None:
            sent = next((v for k, v in headers if k.lower() == USER_HEADER.encode()), None)
            user = user_id(sent.decode("latin-1") if sent is not None else None, sent=sent)
        kept = [(k, v) for k, v in headers if k.lower() != USER_HEADER.encode()]
        kept.append((USER_HEADER.encode(), user.encode()))
        await self.app({**scope, "headers": kept}, receive, send)


def build_app(opts: Options, tokens: dict[str, str | None]) -> ASGIApp:
    """The ASGI app for these options and tokens (the configuration loaded and checked now)."""
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import SJCError
    from sjc_mcp.server.app import create_server

    try:
        config = load_config(opts.config)
    except SJCError as exc:
        raise StartError(f"configuration: {exc}") from None
    if opts.log_dir:
        try:
            os.makedirs(opts.log_dir, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise StartError(f"--log-dir {opts.log_dir}: {exc.strerror}") from None
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    from sjc_mcp.server.wire import RepairedBody

    server = create_server(config, log_dir=opts.log_dir, remote=True)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=opts.host)
    return BearerAuth(RepairedBody(app, DEFAULT_MAX_REQUEST_BODY_SIZE), tokens)


def _log_to_stderr() -> None:
    """Warnings and errors on stderr, one ``sjc-mcp:`` line each; a client leaving before its request was
    read whole (it hung up, or was cut after ``--idle-timeout``) is one line, not the SDK's traceback."""
    import logging

    class ClientLeft(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            from starlette.requests import ClientDisconnect

            if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
                record.msg, record.args, record.exc_info, record.exc_text = (
                    "a client left before its request was read whole",
                    (),
                    None,
                    None,
                )
            return True

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("sjc-mcp: %(message)s"))
    handler.addFilter(ClientLeft())
    logging.basicConfig(handlers=[handler], level=logging.WARNING)


def serve(opts: Options) -> int:
    _log_to_stderr()
    try:
        tokens = tokens_for(opts)  # before the SDK is imported: a refusal is immediate
        check_tls(opts)
        app = build_app(opts, tokens)
    except StartError as exc:
        print(f"sjc-mcp: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from sjc_mcp.server.idle import idle_protocol

    config = uvicorn.Config(
        app,
        host=opts.host,
        port=opts.port,
        http=idle_protocol(opts.idle_timeout),
        ws="none",
        timeout_keep_alive=opts.idle_timeout,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
        ssl_certfile=opts.tls_cert,
        ssl_keyfile=opts.tls_key,
    )
    server = uvicorn.Server(config)
    host = f"[{opts.host}]" if ":" in opts.host else opts.host
    auth = "a bearer token required" if tokens else "no token (loopback only)"
    scheme = "https" if opts.tls_cert else "http"
    print(f"sjc-mcp: MCP over streamable HTTP at {scheme}://{host}:{opts.port}{MCP_PATH} ({auth})", file=sys.stderr)
    if not opts.tls_cert and not is_loopback(opts.host):
        print(
            "sjc-mcp: no TLS: tokens, summaries and tool outputs cross the network in clear; give --tls-cert and "
            "--tls-key, or put a TLS proxy in front",
            file=sys.stderr,
        )
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn stops on the signal, then raises it again for its caller
        return 130
    if not server.started:  # e.g. the port is taken; uvicorn has said why
        return 1
    return 0
