"""``sjc proxy``: an HTTP proxy in front of the model API that prunes compaction summaries in-band.

Every request that is not a compaction passes through untouched and streamed: same status, headers
and bytes. A recognised compaction request is forwarded as it is; its answer is collected, the
summary judged against the evidence in the request itself, pruned, logged, and returned in the
same format (stream or not) with the pruned text. Any fault of ours (parse, judge, time budget)
returns the upstream's answer unchanged and logs why; upstream errors pass through as they are.
Bodies and auth headers are never written anywhere but the decision log's usual fields.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlparse

from sjc_mcp.config import Config

DEFAULT_UPSTREAM = {
    "anthropic": "https://api.anthropic.com",
    "chat": "https://api.openai.com",
    "responses": "https://api.openai.com",
}
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
}


def api_of(path: str) -> str | None:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return None


def _forward_headers(headers: Any, compaction: bool) -> list[tuple[str, str]]:
    out = [(k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP]
    if compaction:  # the answer is read here: ask for it uncompressed
        out = [(k, v) for k, v in out if k.lower() != "accept-encoding"] + [("accept-encoding", "identity")]
    return out


def _response_headers(headers: Any, drop_length: bool = False) -> dict[str, str]:
    skip = {"connection", "keep-alive", "transfer-encoding"} | ({"content-length"} if drop_length else set())
    return {k: v for k, v in headers.multi_items() if k.lower() not in skip}


def judge_answer(
    config: Config, api: str, host: str, body: dict[str, Any], raw: bytes, stream: bool
) -> tuple[bytes | None, dict[str, Any]]:
    """The pruned answer, or None to send the original; and what happened (for the log on faults)."""
    from sjc_mcp.pipeline import prune_summary
    from sjc_mcp.proxy.formats import FORMATS
    from sjc_mcp.proxy.request import evidence
    from sjc_mcp.summary import HOSTS

    get_text, replace = FORMATS[api]
    summary = get_text(raw, stream)
    if not summary.strip():
        return None, {"status": "nothing", "note": "the answer holds no summary text"}
    sources, previous, prose = evidence(api, body, config.proxy.patterns)
    result = prune_summary(
        summary,
        sources,
        previous_summary=previous,
        assistant_prose=prose,
        host=host if host in HOSTS else None,
        config=config,
        meta={"op": "proxy", "surface": "proxy", "api": api, "model_requested": body.get("model")},
    )
    if result.pruned_summary == summary:
        return None, {"status": "unchanged"}
    return replace(raw, stream, result.pruned_summary), {"status": "pruned", "removed": result.removed}


def create_app(config: Config, upstream: str | None = None) -> Any:
    import httpx
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    from sjc_mcp.pipeline import log_status
    from sjc_mcp.proxy.request import recognise

    state: dict[str, Any] = {}
    base = (upstream or config.proxy.upstream or "").rstrip("/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        state["client"] = httpx.AsyncClient(
            timeout=httpx.Timeout(600.0, connect=15.0), follow_redirects=False, trust_env=False
        )
        try:
            yield
        finally:
            await state["client"].aclose()

    async def _prefiltered(api: str, body: dict[str, Any], raw_body: bytes) -> bytes:
        """Relevance-prune the request's tool results; on any fault, the request as it came."""
        from sjc_mcp.proxy.prefilter import prefilter

        loop = asyncio.get_running_loop()
        try:
            new = await asyncio.wait_for(
                loop.run_in_executor(None, prefilter, api, body, config), timeout=config.proxy.judge_budget_s
            )
        except Exception as exc:
            log_status(
                config,
                "error",
                [f"prefilter: {type(exc).__name__}: {exc}; the request was sent unchanged"],
                {"op": "tools", "surface": "proxy", "api": api},
            )
            return raw_body
        return raw_body if new is None else json.dumps(new, ensure_ascii=False).encode("utf-8")

    async def handle(request: Request) -> Response:
        client: httpx.AsyncClient = state["client"]
        path = request.url.path
        api = api_of(path)
        origin = base or DEFAULT_UPSTREAM[api or "anthropic"]
        url = origin + path + (f"?{request.url.query}" if request.url.query else "")
        raw_body = await request.body()
        host = None
        body: dict[str, Any] = {}
        if api and request.method == "POST":
            try:
                parsed = json.loads(raw_body)
                if isinstance(parsed, dict):
                    body = parsed
                    host = recognise(body, config.proxy.patterns)
            except ValueError:
                pass
        if host is not None and config.proxy.prefilter:
            raw_body = await _prefiltered(api or "", body, raw_body)
        headers = _forward_headers(request.headers, compaction=host is not None)
        req = client.build_request(request.method, url, headers=headers, content=raw_body)
        try:
            upstream_resp = await client.send(req, stream=True)
        except httpx.HTTPError as exc:
            return Response(
                json.dumps(
                    {
                        "type": "error",
                        "error": {
                            "type": "api_error",
                            "message": f"sjc proxy: upstream {urlparse(origin).netloc} unreachable: "
                            f"{type(exc).__name__}",
                        },
                    }
                ),
                status_code=502,
                media_type="application/json",
            )
        if host is None:  # not a compaction: the upstream's bytes, as they arrive
            return StreamingResponse(
                upstream_resp.aiter_raw(),
                status_code=upstream_resp.status_code,
                headers=_response_headers(upstream_resp.headers),
                background=BackgroundTask(upstream_resp.aclose),
            )
        raw = await upstream_resp.aread()
        await upstream_resp.aclose()
        original = Response(
            raw, status_code=upstream_resp.status_code, headers=_response_headers(upstream_resp.headers)
        )
        if upstream_resp.status_code != 200:
            return original
        stream = bool(body.get("stream")) or "text/event-stream" in upstream_resp.headers.get("content-type", "")
        meta = {"op": "proxy", "surface": "proxy", "api": api, "host": host}
        loop = asyncio.get_running_loop()
        try:
            pruned, _ = await asyncio.wait_for(
                loop.run_in_executor(None, judge_answer, config, api, host, body, raw, stream),
                timeout=config.proxy.judge_budget_s,
            )
        except asyncio.TimeoutError:
            log_status(
                config,
                "timeout",
                [f"judge budget of {config.proxy.judge_budget_s:g}s spent; the answer was returned unchanged"],
                meta,
            )
            return original
        except Exception as exc:  # any fault of ours: fail open
            log_status(config, "error", [f"{type(exc).__name__}: {exc}; the answer was returned unchanged"], meta)
            print(f"sjc proxy: {type(exc).__name__}: {exc}; answer returned unchanged", file=sys.stderr)
            return original
        if pruned is None:
            return original
        return Response(pruned, status_code=200, headers=_response_headers(upstream_resp.headers, drop_length=True))

    routes = [Route("/{path:path}", handle, methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])]
    return Starlette(routes=routes, lifespan=lifespan)


def parse_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        return host, int(port)
    except ValueError:
        from sjc_mcp.errors import InputError

        raise InputError(f"--listen wants HOST:PORT, got {listen!r}") from None


def serve(config: Config, listen: str | None = None, upstream: str | None = None) -> None:
    import uvicorn

    from sjc_mcp.judges._remote import is_loopback

    host, port = parse_listen(listen or config.proxy.listen)
    if not is_loopback(f"http://{host}"):
        print(
            f"sjc proxy: listening on {host}, reachable from other machines: anything that can reach it can use "
            "your API keys through it",
            file=sys.stderr,
        )
    target = upstream or config.proxy.upstream or "api.anthropic.com / api.openai.com by route"
    print(f"sjc proxy on http://{host}:{port} → {target} (judge {config.judge}, mode {config.mode})", file=sys.stderr)
    uvicorn.run(
        create_app(config, upstream),
        host=host,
        port=port,
        log_level="warning",
        server_header=False,
        date_header=False,
        access_log=False,
    )
