"""The relay's side of HTTP: the headers both ways, an answer started or sent whole, a request body read as
it arrives (asking the screen after each piece), and an ordinary answer relayed piece by piece, broken off
where the upstream broke it off. One line on stderr per event (``say``)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

Headers = list[tuple[bytes, bytes]]
ASGIMessage = dict[str, Any]


class UpstreamBrokeOff(Exception):
    """Raised into the server to break the client's connection off where the upstream broke off."""


def say(line: str) -> None:
    """One line on stderr; what came from a request (a session id) cannot break it or reach the terminal raw."""
    from sjc_mcp.terminal import clean

    print(f"sjc proxy: {clean(line)}", file=sys.stderr, flush=True)


def request_headers(headers: Headers, compaction: bool, body_changed: bool) -> Headers:
    """The client's headers for the upstream: hop-by-hop ones out (and ``expect``: the body is here
    already); a compaction's answer is read here, so it is asked for uncompressed."""
    from sjc_mcp.proxy.upstream import HOP_BY_HOP

    drop = HOP_BY_HOP | {b"expect"} | ({b"content-length"} if body_changed else set())
    if compaction:
        drop |= {b"accept-encoding"}
    out = [(k, v) for k, v in headers if k.lower() not in drop]
    return [*out, (b"accept-encoding", b"identity")] if compaction else out


def answer_headers(headers: Headers, length: int | None = None) -> Headers:
    """The upstream's headers for the client, hop-by-hop ones out; ``length`` replaces the upstream's
    content-length (an answer whose body changed)."""
    from sjc_mcp.proxy.upstream import ANSWER_HOP_BY_HOP

    out = [(k, v) for k, v in headers if k.lower() not in ANSWER_HOP_BY_HOP]
    if length is not None and any(k.lower() == b"content-length" for k, _ in out):
        out = [(k, v) for k, v in out if k.lower() != b"content-length"] + [(b"content-length", b"%d" % length)]
    return out


async def start(send: Any, status: int, headers: Headers) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def respond(send: Any, status: int, headers: Headers, body: bytes) -> None:
    await start(send, status, headers)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def read_body(receive: Any, pieces: list[bytes], screen: Callable[[], bool] | None) -> bool | None:
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


async def relay(answer: Any, receive: Any, send: Any, what: str) -> None:
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
        await start(send, answer.status, answer_headers(answer.headers))
        async for piece in answer.pieces():
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            sent += len(piece)
        state["done"] = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except UpstreamError as exc:
        state["done"] = True
        say(f"{what}: the upstream broke its answer off after {sent:,} bytes ({exc.kind}); forwarded as far as it came")
        raise UpstreamBrokeOff(str(exc)) from None
    except asyncio.CancelledError:
        if not state["gone"]:
            raise
        # the client left: the upstream's connection is closed below, so it stops too
    finally:
        state["done"] = True
        watch.cancel()
        await answer.close()
