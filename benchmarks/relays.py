"""Plain pass-through relays, one per HTTP server and client library pairing, for ``proxy.py --libraries``:
how each pairing relays the same traffic, measured beside ``sjc proxy`` and nginx in one run.

    python benchmarks/relays.py NAME PORT UPSTREAM

Each forwards every request to UPSTREAM as it came (hop-by-hop headers aside) and relays the answer in
pieces as they arrive; none recognises anything. NAME is one of ``RELAYS``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from typing import Any

# name: (what it is, the modules it needs)
RELAYS = {
    "starlette+httpx": (
        "uvicorn (h11, asyncio) + Starlette + httpx: the libraries sjc proxy used before",
        ("starlette", "httpx"),
    ),
    "uvicorn+httpx": ("uvicorn (httptools, uvloop), plain ASGI + httpx", ("httptools", "uvloop", "httpx")),
    "uvicorn+aiohttp": ("uvicorn (httptools, uvloop), plain ASGI + aiohttp client", ("httptools", "uvloop", "aiohttp")),
    "uvicorn-asyncio+aiohttp": (
        "uvicorn (httptools, asyncio loop), plain ASGI + aiohttp client",
        ("httptools", "aiohttp"),
    ),
    "granian+aiohttp": ("granian (Rust, ASGI, one worker) + aiohttp client", ("granian", "aiohttp")),
    "aiohttp": ("aiohttp server + aiohttp client, uvloop", ("aiohttp", "uvloop")),
}
HOP = {b"connection", b"keep-alive", b"te", b"trailers", b"transfer-encoding", b"upgrade", b"host", b"expect"}
ANSWER_HOP = {b"connection", b"keep-alive", b"transfer-encoding"}


def available(name: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in RELAYS[name][1])


def client(kind: str) -> Any:
    if kind == "httpx":
        import httpx

        return httpx.AsyncClient(
            timeout=httpx.Timeout(600.0, connect=15.0),
            trust_env=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=256),
        )
    import aiohttp

    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=None, connect=15),
        connector=aiohttp.TCPConnector(limit=0),
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
    )


def asgi_app(kind: str, upstream: str) -> Any:
    """A plain ASGI relay with the ``kind`` client."""
    state: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                m = await receive()
                if m["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if "c" not in state:
            state["c"] = client(kind)
        c = state["c"]
        pieces = []
        more = True
        while more:
            m = await receive()
            pieces.append(m.get("body", b""))
            more = m.get("more_body", False)
        body = b"".join(pieces)
        query = scope["query_string"]
        url = upstream + scope["raw_path"].decode("latin-1") + (("?" + query.decode("latin-1")) if query else "")
        headers = [(k, v) for k, v in scope["headers"] if k not in HOP]
        if kind == "httpx":
            r = await c.send(c.build_request(scope["method"], url, headers=headers, content=body), stream=True)
            out = [(k, v) for k, v in r.headers.raw if k.lower() not in ANSWER_HOP]
            await send({"type": "http.response.start", "status": r.status_code, "headers": out})
            async for piece in r.aiter_raw():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await r.aclose()
        else:
            from yarl import URL

            text = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
            async with c.request(scope["method"], URL(url, encoded=True), headers=text, data=body) as r:
                out = [(k, v) for k, v in r.raw_headers if k.lower() not in ANSWER_HOP]
                await send({"type": "http.response.start", "status": r.status, "headers": out})
                while piece := await r.content.readany():
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


def starlette_app(upstream: str) -> Any:
    """The pass-through the issue measured: Starlette's request and streaming response over httpx."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    state: dict[str, Any] = {}

    async def handle(request: Request) -> StreamingResponse:
        if "c" not in state:
            state["c"] = client("httpx")
        c = state["c"]
        body = await request.body()
        headers = [(k, v) for k, v in request.headers.items() if k.encode() not in HOP | {b"content-length"}]
        url = upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        r = await c.send(c.build_request(request.method, url, headers=headers, content=body), stream=True)

        async def pieces() -> Any:
            async for piece in r.aiter_raw():
                yield piece
            await r.aclose()

        out = {k: v for k, v in r.headers.multi_items() if k.lower().encode() not in ANSWER_HOP}
        return StreamingResponse(pieces(), status_code=r.status_code, headers=out)

    return Starlette(routes=[Route("/{path:path}", handle, methods=["GET", "POST", "HEAD"])])


def run_aiohttp(port: int, upstream: str) -> None:
    import uvloop
    from aiohttp import web
    from yarl import URL

    state: dict[str, Any] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        if "c" not in state:
            state["c"] = client("aiohttp")
        body = await request.read()
        text = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers if k.lower() not in HOP]
        url = URL(upstream + request.raw_path, encoded=True)
        async with state["c"].request(request.method, url, headers=text, data=body) as r:
            resp = web.StreamResponse(status=r.status, reason=r.reason)
            for k, v in r.raw_headers:
                if k.lower() not in ANSWER_HOP:
                    resp.headers.add(k.decode("latin-1"), v.decode("latin-1"))
            await resp.prepare(request)
            while piece := await r.content.readany():
                await resp.write(piece)
            await resp.write_eof()
            return resp

    app = web.Application(client_max_size=1 << 30)
    app.router.add_route("*", "/{p:.*}", handle)
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def granian_target() -> Any:
    """The ASGI app granian's worker imports (it starts the relay in a process of its own)."""
    return asgi_app("aiohttp", os.environ["RELAY_UPSTREAM"])


def main() -> None:
    name, port, upstream = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if name == "aiohttp":
        run_aiohttp(port, upstream)
        return
    if name == "granian+aiohttp":
        from granian import Granian
        from granian.constants import Interfaces, Loops

        os.environ["RELAY_UPSTREAM"] = upstream
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        Granian(
            "relays:granian_target",
            factory=True,
            address="127.0.0.1",
            port=port,
            interface=Interfaces.ASGI,
            workers=1,
            loop=Loops.uvloop,
            log_enabled=False,
        ).serve()
        return
    import uvicorn

    if name == "starlette+httpx":
        app, loop, http = starlette_app(upstream), "asyncio", "h11"
    else:
        kind = name.split("+")[1]
        app, loop, http = asgi_app(kind, upstream), ("asyncio" if "asyncio" in name else "uvloop"), "httptools"
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop=loop,
        http=http,
        ws="none",
        lifespan="on",
        proxy_headers=False,
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
    )


if __name__ == "__main__":
    main()
