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
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from sjc_mcp.config import Config
from sjc_mcp.formats import Compaction, RawRequest, WireRequest

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


Headers = list[tuple[bytes, bytes]]
ASGIMessage = dict[str, Any]


def _request_headers(headers: Headers, compaction: bool, body_changed: bool) -> Headers:
    """The client's headers for the upstream: hop-by-hop ones out (and ``expect``: the body is here
    already); a compaction's answer is read here, so it is asked for uncompressed."""
    from sjc_mcp.proxy.upstream import HOP_BY_HOP

    drop = HOP_BY_HOP | {b"expect"} | ({b"content-length"} if body_changed else set())
    if compaction:
        drop |= {b"accept-encoding"}
    out = [(k, v) for k, v in headers if k.lower() not in drop]
    return [*out, (b"accept-encoding", b"identity")] if compaction else out


def _answer_headers(headers: Headers, length: int | None = None) -> Headers:
    """The upstream's headers for the client, hop-by-hop ones out; ``length`` replaces the upstream's
    content-length (an answer whose body changed)."""
    from sjc_mcp.proxy.upstream import ANSWER_HOP_BY_HOP

    out = [(k, v) for k, v in headers if k.lower() not in ANSWER_HOP_BY_HOP]
    if length is not None and any(k.lower() == b"content-length" for k, _ in out):
        out = [(k, v) for k, v in out if k.lower() != b"content-length"] + [(b"content-length", b"%d" % length)]
    return out


async def _start(send: Any, status: int, headers: Headers) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _respond(send: Any, status: int, headers: Headers, body: bytes) -> None:
    await _start(send, status, headers)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _read_body(receive: Any, pieces: list[bytes], screen: Callable[[], bool] | None) -> bool | None:
    """Read the request body into ``pieces`` as they arrive, asking ``screen`` after each until it says the
    request might be a compaction (so the search runs while the rest is still coming); what it said last,
    or None when the client left before sending the body whole."""
    maybe = False
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        piece = message.get("body", b"")
        if piece:
            pieces.append(piece)
            maybe = maybe or (screen is not None and screen())
        if not message.get("more_body"):
            return maybe


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
        from sjc_mcp.proxy.request import boundary_of, session_of
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
        maybe = await _read_body(receive, body, screen)
        if maybe is None:
            return
        chunked = any(k == b"transfer-encoding" and b"chunked" in v.lower() for k, v in headers)
        req, found = None, None
        if raw is not None and (maybe or self.screen.might_be_compaction(raw)):  # (an empty body: asked now)
            req, found = self.decoded(raw)
        meta: dict[str, Any] = {}
        what = f"{method} {path}"
        if found is not None and req is not None:
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
        changed = False
        if found is not None and found.server_side:
            log_nothing(config, SERVER_SIDE_NOTE, meta)
            say(f"{what}: recognised by {found.how}; {SERVER_SIDE_NOTE}")
            found = None  # passed through untouched
        elif found is not None and req is not None and config.proxy.prefilter:
            new = await self._prefiltered(req, meta)
            if new is not None:
                body, changed, chunked = [new], True, False
        out = _request_headers(headers, compaction=found is not None, body_changed=changed)
        try:
            answer = await self.upstream.send(method, url, out, body, chunked)
        except UpstreamError as exc:
            if found is not None:
                log_status(config, "upstream", [f"upstream unreachable: {exc.kind}"], meta)
                say(f"{what}: recognised; the upstream was unreachable ({exc.kind})")
            error = {
                "type": "error",
                "error": {
                    "type": "api_error",
                    "message": f"sjc proxy: upstream {urlparse(origin).netloc} unreachable: {exc.kind}",
                },
            }
            data = json.dumps(error).encode()
            length = b"%d" % len(data)
            await _respond(send, 502, [(b"content-type", b"application/json"), (b"content-length", length)], data)
            return
        if found is None or req is None:  # not a compaction (or one we cannot prune): the bytes as they come
            await self.relay(answer, receive, send, what)
            return
        await self.judged(answer, req, found, meta, what, send)

    async def relay(self, answer: Any, receive: Any, send: Any, what: str) -> None:
        """The upstream's answer as it arrives, each piece as large as has arrived; if the upstream breaks it
        off, the client's answer breaks off at the same byte; if the client leaves, the upstream is left."""
        from sjc_mcp.proxy.upstream import UpstreamError

        task = asyncio.current_task()
        state = {"done": False, "gone": False}

        def left(watch: asyncio.Future[ASGIMessage]) -> None:
            if not watch.cancelled() and not state["done"] and task is not None:
                state["gone"] = True
                task.cancel()

        watch = asyncio.ensure_future(receive())  # after the body, receive() returns only when the client leaves
        watch.add_done_callback(left)
        sent = 0
        try:
            await _start(send, answer.status, _answer_headers(answer.headers))
            async for piece in answer.pieces():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
                sent += len(piece)
            state["done"] = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except UpstreamError as exc:
            state["done"] = True
            say(
                f"{what}: the upstream broke its answer off after {sent:,} bytes ({exc.kind}); "
                "forwarded as far as it came"
            )
            raise UpstreamBrokeOff(str(exc)) from None
        except asyncio.CancelledError:
            if not state["gone"]:
                raise
            # the client left: the upstream's connection is closed below, so it stops too
        finally:
            state["done"] = True
            watch.cancel()
            await answer.close()

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

    async def judged(
        self, answer: Any, req: WireRequest, found: Compaction, meta: dict[str, Any], what: str, send: Any
    ) -> None:
        """A compaction's answer, read whole, judged, and sent on pruned (or as it came, on any fault)."""
        from sjc_mcp.log.records import log_status
        from sjc_mcp.proxy.upstream import UpstreamError

        config = self.config
        pieces: list[bytes] = []
        try:
            async for piece in answer.pieces():
                pieces.append(piece)
        except UpstreamError as exc:
            got = sum(map(len, pieces))
            log_status(
                config,
                "upstream",
                [f"the upstream broke its answer off after {got:,} bytes ({exc.kind}); forwarded as sent"],
                meta,
            )
            say(
                f"{what}: recognised, not judged: the upstream broke its answer off after {got:,} bytes "
                f"({exc.kind}); forwarded as far as it came"
            )
            await answer.close()
            await _start(send, answer.status, _answer_headers(answer.headers))
            for piece in pieces:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            raise UpstreamBrokeOff(str(exc)) from None
        await answer.close()
        raw = b"".join(pieces)
        status, headers = answer.status, answer.headers
        if status != 200:
            log_status(config, "upstream", [f"the upstream answered {status}; passed through"], meta)
            say(f"{what}: recognised; the upstream answered {status}, passed through")
            await _respond(send, status, _answer_headers(headers), raw)
            return
        content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
        stream = bool(req.body.get("stream")) or b"text/event-stream" in content_type
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
            pruned = None
        except Exception as exc:  # any fault of ours: fail open
            log_status(config, "error", [f"{type(exc).__name__}: {exc}; the answer was returned unchanged"], meta)
            say(f"{what}: recognised, not judged: {type(exc).__name__}: {exc}; the answer was returned unchanged")
            pruned = None
        else:
            say(f"{what}: {outcome_line(info)} ({(time.perf_counter() - t0) * 1000:.0f} ms)")
        if pruned is None:
            await _respond(send, status, _answer_headers(headers), raw)
        else:
            await _respond(send, status, _answer_headers(headers, len(pruned)), pruned)


def create_app(config: Config, upstream: str | None = None) -> ProxyApp:
    logging.getLogger("uvicorn.error").addFilter(_QuietBreakOff())
    return ProxyApp(config, upstream)


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
