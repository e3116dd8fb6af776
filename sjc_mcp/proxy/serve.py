"""``sjc proxy`` started: the listening address read, the socket bound (a port in use is one clear line),
the heap kept at hand where glibc is, and the app run on uvicorn."""

from __future__ import annotations

import os
import socket
import sys

from sjc_mcp.config import Config
from sjc_mcp.proxy.app import create_app


def parse_listen(listen: str) -> tuple[str, int]:
    from sjc_mcp.errors import InputError

    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise InputError(f"--listen wants HOST:PORT, got {listen!r}") from None
    if not 0 < number < 65536:
        raise InputError(f"--listen: port {number} is not between 1 and 65535")
    return host, number


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a port in use or a bad address is one clear line."""
    from sjc_mcp.errors import InputError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, addr = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


HEAP_HEADROOM = 16 << 20
M_TOP_PAD = -2  # mallopt(3)


def keep_heap_headroom() -> bool:
    """With glibc, keep 16 MB of freed heap at hand rather than give it back to the system after each
    large request (``M_TOP_PAD``, mallopt(3)): the server and client allocate every piece of a body
    afresh, and the pages handed back and faulted in again cost a 2 MB request ~2.7 ms of CPU, more than
    the rest of its relay (measured by ``benchmarks/proxy.py``). Elsewhere nothing is changed."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    if not glibc:
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL(None).mallopt(M_TOP_PAD, HEAP_HEADROOM))
    except (OSError, AttributeError):
        return False


def serve(config: Config, listen: str | None = None, upstream: str | None = None) -> None:
    import uvicorn

    from sjc_mcp.judges._remote import is_loopback

    host, port = parse_listen(listen or config.proxy.listen)
    sock = bind(host, port)
    keep_heap_headroom()
    if not is_loopback(f"http://{host}"):
        print(
            f"sjc proxy: listening on {host}, reachable from other machines: anything that can reach it can use "
            "your API keys through it",
            file=sys.stderr,
        )
    target = (
        upstream
        or config.proxy.upstream
        or "api.anthropic.com / api.openai.com / generativelanguage.googleapis.com by route"
    )
    print(f"sjc proxy on http://{host}:{port} → {target} (judge {config.judge}, mode {config.mode})", file=sys.stderr)
    app = create_app(config, upstream)
    if app.screen.why_not:
        print(
            "sjc proxy: every request is decoded to be asked whether it is a compaction, for "
            + "; ".join(app.screen.why_not),
            file=sys.stderr,
        )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            loop="auto",  # uvloop, a dependency (asyncio where it cannot be had)
            http="auto",  # httptools, likewise (h11)
            ws="none",
            lifespan="on",
            proxy_headers=False,
            log_level="warning",
            server_header=False,
            date_header=False,
            access_log=False,
        )
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
