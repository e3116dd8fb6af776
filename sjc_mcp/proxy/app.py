"""``sjc proxy``: an HTTP proxy in front of the model API that prunes compaction summaries in-band.

Every request that is not a compaction passes through untouched and streamed: same status, headers
and bytes. A recognised compaction request (``request.recognise``: the host's own request shape) is
forwarded as it is; its answer is collected, the summary judged against the evidence in the request
itself, pruned, logged, and returned in the same format (stream or not) with the pruned text. Any
fault of ours (parse, judge, time budget) returns the upstream's answer unchanged and logs why;
upstream errors pass through as they are, and an answer the upstream breaks off is forwarded as far
as it came, then broken off the same way. A server-side compaction (Codex with OpenAI's provider) is
passed through and logged: its summary comes back encrypted, nothing can be pruned.

Every record carries the host's session id (``session``) and an id for the compaction
(``boundary_id``), and each compaction gets one line on stderr saying what became of it. Bodies and
auth headers are never written anywhere but the decision log's usual fields.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlparse

from sjc_mcp.config import Config
from sjc_mcp.formats import Compaction, WireRequest

SERVER_SIDE_NOTE = "server-side compaction: nothing to prune (the provider returns the summary encrypted)"


class UpstreamBrokeOff(Exception):
    """Raised into the server to break the client's connection off where the upstream broke off."""


class _QuietBreakOff(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, UpstreamBrokeOff)


def say(line: str) -> None:
    """One line on stderr; what came from a request (a session id) cannot break it or reach the terminal raw."""
    from sjc_mcp.terminal import clean

    print(f"sjc proxy: {clean(line)}", file=sys.stderr, flush=True)


# where a wire format's requests go when no upstream is given
DEFAULT_UPSTREAM = {
    "anthropic": "https://api.anthropic.com",
    "chat": "https://api.openai.com",
    "responses": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
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


def _forward_headers(headers: Any, compaction: bool) -> list[tuple[str, str]]:
    out = [(k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP]
    if compaction:  # the answer is read here: ask for it uncompressed
        out = [(k, v) for k, v in out if k.lower() != "accept-encoding"] + [("accept-encoding", "identity")]
    return out


def _response_headers(headers: Any, drop_length: bool = False) -> dict[str, str]:
    skip = {"connection", "keep-alive", "transfer-encoding"} | ({"content-length"} if drop_length else set())
    return {k: v for k, v in headers.multi_items() if k.lower() not in skip}


class Gate:
    """Who has the last word on one compaction's record: the judgment (it logged in time) or the budget
    (it ran out first, and the judgment, still running in its thread, must then log nothing)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.expired = False
        self.logged = False

    def claim_log(self) -> bool:
        with self.lock:
            if not self.expired:
                self.logged = True
            return self.logged

    def expire(self) -> bool:
        """True: the budget wins (the judgment will log nothing); False: the judgment logged already."""
        with self.lock:
            if not self.logged:
                self.expired = True
            return self.expired


def judge_answer(
    config: Config,
    req: WireRequest,
    found: Compaction,
    raw: bytes,
    stream: bool,
    meta: dict[str, Any] | None = None,
    gate: Gate | None = None,
) -> tuple[bytes | None, dict[str, Any]]:
    """The pruned answer, or None to send the original; and what happened (the stderr line says it)."""
    from sjc_mcp.formats import module
    from sjc_mcp.log.records import log_nothing, log_prune
    from sjc_mcp.models import PruneResult
    from sjc_mcp.pipeline import judge_boundary
    from sjc_mcp.proxy.request import request_boundary
    from sjc_mcp.summary import HOSTS

    meta = {
        "op": "proxy",
        "surface": "proxy",
        "api": req.wire,
        **(meta or {}),
        "model_requested": req.body.get("model"),
    }
    wire = module(req.wire)
    summary = wire.answer_text(raw, stream)
    if not summary.strip():
        log_nothing(config, "the answer holds no summary text", meta)
        return None, {"status": "nothing", "note": "the answer holds no summary text"}
    boundary = request_boundary(req, found, config.proxy.patterns)
    result = judge_boundary(
        boundary,
        summary=summary,
        host=found.host if found.host in HOSTS else None,
        config=config,
        meta={"boundary": None, **meta},
        log=False,
    )
    assert isinstance(result, PruneResult)
    if gate is not None and not gate.claim_log():  # the budget ran out first: the original was sent
        return None, {"status": "late"}
    log_prune(result, summary, config, {"boundary": None, **meta})
    info = {
        "status": "disabled" if result.disabled else "judged",
        "entries": len(result.entries),
        "removed": result.removed,
        "would_remove": sum(e.decision == "prune" for e in result.entries),
        "unjudged": sum(e.decision == "unjudged" for e in result.entries),
        "mode": result.mode,
        "unstructured": result.unstructured,
        "guarded": result.guarded,
        "incomplete_span": result.incomplete_span,
        "warnings": result.warnings,
    }
    if result.pruned_summary == summary:
        return None, info
    return wire.replace_answer(raw, stream, result.pruned_summary), info


def outcome_line(info: dict[str, Any]) -> str:
    """What became of a judged compaction, in words."""
    if info.get("status") == "disabled":
        return "recognised; sjc is switched off (kill switch or SJC_DISABLE), the answer was returned unchanged"
    if info.get("status") == "nothing":
        return f"recognised; nothing to judge: {info.get('note')}"
    if info.get("unstructured"):
        return "recognised; unstructured: nothing judged, the summary was returned as written"
    if info.get("guarded"):
        return (
            f"recognised, judged; kept whole: pruning {info.get('would_remove', 0)} of {info.get('entries', 0)} "
            "entries would pass max_prune_share"
        )
    n, m = info.get("removed", 0), info.get("entries", 0)
    extra = f", {info['unjudged']} unjudged (kept)" if info.get("unjudged") else ""
    if info.get("incomplete_span"):
        extra += "; the span starts mid-session"
    if info.get("mode") == "shadow":
        return f"recognised, judged, shadow mode: would prune {info.get('would_remove', 0)} of {m} entries{extra}"
    return f"recognised, judged, pruned {n} of {m} entries{extra}"


def create_app(config: Config, upstream: str | None = None) -> Any:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    from sjc_mcp.formats import wire_of
    from sjc_mcp.log.records import log_nothing, log_status
    from sjc_mcp.proxy.request import boundary_of, recognise, session_of

    state: dict[str, Any] = {}
    base = (upstream or config.proxy.upstream or "").rstrip("/")
    logging.getLogger("uvicorn.error").addFilter(_QuietBreakOff())

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        state["client"] = httpx.AsyncClient(
            timeout=httpx.Timeout(600.0, connect=15.0), follow_redirects=False, trust_env=False
        )
        try:
            yield
        finally:
            await state["client"].aclose()

    async def _prefiltered(req: WireRequest, raw_body: bytes, meta: dict[str, Any]) -> bytes:
        """Relevance-prune the request's tool results; on any fault, the request as it came."""
        from sjc_mcp.proxy.prefilter import prefilter

        loop = asyncio.get_running_loop()
        try:
            new = await asyncio.wait_for(
                loop.run_in_executor(None, prefilter, req, config, meta), timeout=config.proxy.judge_budget_s
            )
        except Exception as exc:
            log_status(
                config,
                "error",
                [f"prefilter: {type(exc).__name__}: {exc}; the request was sent unchanged"],
                {**meta, "op": "tools"},
            )
            return raw_body
        return raw_body if new is None else json.dumps(new, ensure_ascii=False).encode("utf-8")

    def relay(resp: httpx.Response, first: list[bytes], what: str) -> StreamingResponse:
        """The upstream's answer as it comes (``first``: what was already read of it); if the upstream breaks
        it off, the client's answer breaks off at the same byte."""

        async def body() -> AsyncIterator[bytes]:
            sent = 0
            try:
                for chunk in first:
                    sent += len(chunk)
                    yield chunk
                async for chunk in resp.aiter_raw():
                    sent += len(chunk)
                    yield chunk
            except httpx.HTTPError as exc:
                say(
                    f"{what}: the upstream broke its answer off after {sent:,} bytes ({type(exc).__name__}); "
                    "forwarded as far as it came"
                )
                raise UpstreamBrokeOff(str(exc)) from None
            finally:
                await resp.aclose()

        return StreamingResponse(body(), status_code=resp.status_code, headers=_response_headers(resp.headers))

    async def handle(request: Request) -> Response:
        client: httpx.AsyncClient = state["client"]
        path = request.url.path
        api = wire_of(path)
        origin = base or DEFAULT_UPSTREAM.get(api or "anthropic", DEFAULT_UPSTREAM["anthropic"])
        url = origin + path + (f"?{request.url.query}" if request.url.query else "")
        raw_body = await request.body()
        found: Compaction | None = None
        req = WireRequest(api or "", path, {}, request.headers)
        if api and request.method == "POST":
            try:
                parsed = json.loads(raw_body)
                if isinstance(parsed, dict):
                    req.body = parsed
                    found = recognise(req, config.proxy.patterns)
            except ValueError:
                pass
        meta: dict[str, Any] = {}
        what = ""
        if found is not None:
            session = session_of(req, found.host)
            meta = {
                "op": "proxy",
                "surface": "proxy",
                "api": api,
                "host": found.host,
                "session": session,
                "boundary_id": boundary_of(req, found.host, session),
                "recognised_by": found.how,
            }
            what = f"{found.host} compaction (session {session or '-'}, {meta['boundary_id']})"
        if found is not None and found.server_side:
            log_nothing(config, SERVER_SIDE_NOTE, meta)
            say(f"{what}: recognised by {found.how}; {SERVER_SIDE_NOTE}")
            found = None  # passed through untouched
        elif found is not None and config.proxy.prefilter:
            raw_body = await _prefiltered(req, raw_body, meta)
        headers = _forward_headers(request.headers, compaction=found is not None)
        outgoing = client.build_request(request.method, url, headers=headers, content=raw_body)
        try:
            upstream_resp = await client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            if found is not None:
                log_status(config, "upstream", [f"upstream unreachable: {type(exc).__name__}"], meta)
                say(f"{what}: recognised; the upstream was unreachable ({type(exc).__name__})")
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
        if found is None:  # not a compaction (or one we cannot prune): the upstream's bytes, as they arrive
            return relay(upstream_resp, [], f"{request.method} {path}")
        chunks: list[bytes] = []
        try:
            async for chunk in upstream_resp.aiter_raw():
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            got = sum(map(len, chunks))
            log_status(
                config,
                "upstream",
                [f"the upstream broke its answer off after {got:,} bytes ({type(exc).__name__}); forwarded as sent"],
                meta,
            )

            reason = f"{type(exc).__name__}: {exc}"

            async def broken() -> AsyncIterator[bytes]:
                for chunk in chunks:
                    yield chunk
                raise UpstreamBrokeOff(reason)

            say(
                f"{what}: recognised, not judged: the upstream broke its answer off after {got:,} bytes "
                f"({type(exc).__name__}); forwarded as far as it came"
            )
            await upstream_resp.aclose()
            return StreamingResponse(
                broken(), status_code=upstream_resp.status_code, headers=_response_headers(upstream_resp.headers)
            )
        await upstream_resp.aclose()
        raw = b"".join(chunks)
        original = Response(
            raw, status_code=upstream_resp.status_code, headers=_response_headers(upstream_resp.headers)
        )
        if upstream_resp.status_code != 200:
            log_status(config, "upstream", [f"the upstream answered {upstream_resp.status_code}; passed through"], meta)
            say(f"{what}: recognised; the upstream answered {upstream_resp.status_code}, passed through")
            return original
        stream = bool(req.body.get("stream")) or "text/event-stream" in upstream_resp.headers.get("content-type", "")
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        try:
            gate = Gate()
            job = loop.run_in_executor(None, judge_answer, config, req, found, raw, stream, meta, gate)
            try:
                pruned, info = await asyncio.wait_for(asyncio.shield(job), timeout=config.proxy.judge_budget_s)
            except asyncio.TimeoutError:
                if gate.expire():
                    raise
                pruned, info = await job  # it logged its decision just in time: send what it decided
        except asyncio.TimeoutError:
            log_status(
                config,
                "timeout",
                [f"judge budget of {config.proxy.judge_budget_s:g}s spent; the answer was returned unchanged"],
                meta,
            )
            say(
                f"{what}: recognised, not judged: the judge budget of {config.proxy.judge_budget_s:g} s was spent; "
                "the answer was returned unchanged"
            )
            return original
        except Exception as exc:  # any fault of ours: fail open
            log_status(config, "error", [f"{type(exc).__name__}: {exc}; the answer was returned unchanged"], meta)
            say(f"{what}: recognised, not judged: {type(exc).__name__}: {exc}; the answer was returned unchanged")
            return original
        say(f"{what}: {outcome_line(info)} ({(time.perf_counter() - t0) * 1000:.0f} ms)")
        if pruned is None:
            return original
        return Response(pruned, status_code=200, headers=_response_headers(upstream_resp.headers, drop_length=True))

    routes = [Route("/{path:path}", handle, methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])]
    return Starlette(routes=routes, lifespan=lifespan)


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


def serve(config: Config, listen: str | None = None, upstream: str | None = None) -> None:
    import uvicorn

    from sjc_mcp.judges._remote import is_loopback

    host, port = parse_listen(listen or config.proxy.listen)
    sock = bind(host, port)
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
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config, upstream),
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
