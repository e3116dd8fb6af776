"""``sjc proxy``: an HTTP proxy in front of the model API that prunes compaction summaries in-band.

Every request that is not a compaction passes through untouched and streamed: same status, header
bytes, body and framing, the answer relayed in pieces as large as have arrived (a plain ASGI app on
uvicorn with httptools and uvloop; the upstream side is ``upstream``). Almost no request is a
compaction, so none is decoded unless a host's screen says, from its raw bytes, that it might be one
(``screen``; searched as the body arrives). What this costs a request: ``docs/proxy.md``.

A recognised compaction request (``request.recognise``: the host's own request shape) is forwarded as
it is; its answer is collected, the summary judged against the evidence in the request itself, pruned,
logged, and returned in the same format (stream or not) with the pruned text. Any fault of ours
(parse, judge, time budget) returns the upstream's answer unchanged and logs why; upstream errors pass
through as they are, and an answer the upstream breaks off is forwarded as far as it came, then broken
off the same way. A server-side compaction (Codex with OpenAI's provider) is passed through and logged:
its summary comes back encrypted, nothing can be pruned.

Every record carries the host's session id (``session``) and an id for the compaction
(``boundary_id``), and each compaction gets one line on stderr saying what became of it. Bodies and
auth headers are never written anywhere but the decision log's usual fields.

Here: the ASGI app, each request routed, read and (when a screen lets it through) recognised. The
relay's side of HTTP and an ordinary answer relayed: ``relay``; a compaction's path: ``compaction``;
the server started: ``serve``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import urlparse

from sjc_mcp.config import Config
from sjc_mcp.formats import Compaction, RawRequest, WireRequest
from sjc_mcp.proxy.compaction import SERVER_SIDE_NOTE, judged
from sjc_mcp.proxy.relay import ASGIMessage, Headers, UpstreamBrokeOff, read_body, relay, request_headers, respond, say


class _QuietBreakOff(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, UpstreamBrokeOff)


# where a wire format's requests go when no upstream is given
DEFAULT_UPSTREAM = {
    "anthropic": "https://api.anthropic.com",
    "chat": "https://api.openai.com",
    "responses": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
}


def _compaction_meta(req: WireRequest, found: Compaction, api: str | None) -> tuple[dict[str, Any], str]:
    """A recognised compaction's log fields (its host's session id, an id for the compaction) and its name
    in the stderr lines."""
    from sjc_mcp.proxy.request import boundary_of, session_of

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
    return meta, f"{found.host} compaction (session {session or '-'}, {meta['boundary_id']})"


async def _unreachable(send: Any, origin: str, kind: str) -> None:
    """A 502 the client's SDK reads as an API error, naming the upstream that could not be reached."""
    error = {
        "type": "error",
        "error": {"type": "api_error", "message": f"sjc proxy: upstream {urlparse(origin).netloc} unreachable: {kind}"},
    }
    data = json.dumps(error).encode()
    length = b"%d" % len(data)
    await respond(send, 502, [(b"content-type", b"application/json"), (b"content-length", length)], data)


class ProxyApp:
    """``sjc proxy`` as an ASGI application: every request relayed as it comes, a compaction judged."""

    def __init__(self, config: Config, upstream: str | None = None) -> None:
        from sjc_mcp.proxy.screen import Screen

        self.config = config
        self.base = (upstream or config.proxy.upstream or "").rstrip("/")
        self.screen = Screen(config.proxy.patterns)
        self.upstream: Any = None
        self._wires: dict[str, str | None] = {}

    async def __call__(self, scope: ASGIMessage, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self.lifespan(receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        from sjc_mcp.proxy.upstream import Upstream

        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.upstream = Upstream()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.upstream is not None:
                    await self.upstream.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def wire(self, path: str) -> str | None:
        """The wire format of a path (remembered: an agent uses a handful of paths)."""
        try:
            return self._wires[path]
        except KeyError:
            from sjc_mcp.formats import wire_of

            api = wire_of(path)
            if len(self._wires) < 1024:
                self._wires[path] = api
            return api

    def recognise(
        self, api: str, path: str, headers: Headers, body: list[bytes]
    ) -> tuple[WireRequest | None, Compaction | None]:
        """The request decoded and recognised, when some host says it might be a compaction; else nothing
        is decoded."""
        raw = self.raw(api, path, headers, body)
        if not self.screen.might_be_compaction(raw):
            return None, None
        return self.decoded(raw)

    @staticmethod
    def raw(api: str, path: str, headers: Headers, body: list[bytes]) -> RawRequest:
        """The request as the screens see it (``body`` may still be arriving)."""
        names: dict[str, str] = {}
        for k, v in headers:
            names.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
        return RawRequest(path, api, names, body)

    def decoded(self, raw: RawRequest) -> tuple[WireRequest | None, Compaction | None]:
        """The request decoded and asked of every host (one some host's screen let through)."""
        from sjc_mcp.proxy.request import recognise

        try:
            parsed = json.loads(b"".join(raw.chunks))
        except (ValueError, RecursionError):
            return None, None
        if not isinstance(parsed, dict):
            return None, None
        req = WireRequest(raw.wire, raw.path, parsed, raw.headers)
        return req, recognise(req, self.config.proxy.patterns)

    async def handle(self, scope: ASGIMessage, receive: Any, send: Any) -> None:
        from sjc_mcp.log.records import log_nothing, log_status
        from sjc_mcp.proxy.upstream import UpstreamError

        config = self.config
        method: str = scope["method"]
        path: str = scope["path"]
        api = self.wire(path)
        origin = self.base or DEFAULT_UPSTREAM.get(api or "anthropic", DEFAULT_UPSTREAM["anthropic"])
        raw_path: bytes = scope.get("raw_path") or path.encode()
        query: bytes = scope.get("query_string") or b""
        url = origin + raw_path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        headers: Headers = scope["headers"]
        body: list[bytes] = []
        raw = self.raw(api, path, headers, body) if api and method == "POST" else None
        screen = None if raw is None else (lambda: self.screen.might_be_compaction(raw))
        maybe = await read_body(receive, body, screen)
        if maybe is None:
            return
        chunked = any(k == b"transfer-encoding" and b"chunked" in v.lower() for k, v in headers)
        req, found = None, None
        if raw is not None and (maybe or self.screen.might_be_compaction(raw)):  # (an empty body: asked now)
            req, found = self.decoded(raw)
        meta: dict[str, Any] = {}
        what = f"{method} {path}"
        if found is not None and req is not None:
            meta, what = _compaction_meta(req, found, api)
        changed = False
        if found is not None and found.server_side:
            log_nothing(config, SERVER_SIDE_NOTE, meta)
            say(f"{what}: recognised by {found.how}; {SERVER_SIDE_NOTE}")
            found = None  # passed through untouched
        elif found is not None and req is not None and config.proxy.prefilter:
            new = await self._prefiltered(req, meta)
            if new is not None:
                body, changed, chunked = [new], True, False
        out = request_headers(headers, compaction=found is not None, body_changed=changed)
        try:
            answer = await self.upstream.send(method, url, out, body, chunked)
        except UpstreamError as exc:
            if found is not None:
                log_status(config, "upstream", [f"upstream unreachable: {exc.kind}"], meta)
                say(f"{what}: recognised; the upstream was unreachable ({exc.kind})")
            await _unreachable(send, origin, exc.kind)
            return
        if found is None or req is None:  # not a compaction (or one we cannot prune): the bytes as they come
            await relay(answer, receive, send, what)
            return
        await judged(config, answer, req, found, meta, what, send)

    async def _prefiltered(self, req: WireRequest, meta: dict[str, Any]) -> bytes | None:
        """The request with its tool results relevance-pruned; None when it stays as it came (nothing to
        prune, or any fault: logged)."""
        from sjc_mcp.log.records import log_status
        from sjc_mcp.proxy.prefilter import prefilter

        loop = asyncio.get_running_loop()
        config = self.config
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
            return None
        return None if new is None else json.dumps(new, ensure_ascii=False).encode("utf-8")


def create_app(config: Config, upstream: str | None = None) -> ProxyApp:
    logging.getLogger("uvicorn.error").addFilter(_QuietBreakOff())
    return ProxyApp(config, upstream)
