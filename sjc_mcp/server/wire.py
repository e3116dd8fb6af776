"""What the transports read: JSON-RPC text whose lone surrogate escapes are made U+FFFD.

A JavaScript host writes a string cut in the middle of a surrogate pair (half an emoji, say, in a tool output
it truncated) as a lone ``\\ud83d`` escape, which is valid JSON but no Unicode text. The SDK's parser refuses
the whole message: on stdio it drops the line without an answer (the host waits until its own timeout), over
HTTP it answers 400. Here such a message is read with the standard library's parser, each lone surrogate
becomes U+FFFD (as the SDK already reads stdin bytes that are no UTF-8) and the message is written again, so
the call is answered like any other. A message without a ``\\uD800``-``\\uDFFF`` escape is passed on as it
came, untouched and unparsed.

``Stdin`` is stdin for the SDK's stdio transport (``sys.stdin``), line by line through ``repair``;
``RepairedBody`` is the ASGI middleware doing the same to an HTTP request's body.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _unicode(value: Any) -> Any:
    if isinstance(value, str):
        from sjc_mcp.text import unicode_text  # only a message that holds such an escape gets here

        return unicode_text(value)
    if isinstance(value, list):
        return [_unicode(v) for v in value]
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    return value


def repair(message: bytes) -> bytes:
    """One JSON text with every lone surrogate made U+FFFD (written again, compactly); any other text, JSON or
    not, as it came."""
    if _SURROGATE_ESCAPE.search(message) is None:
        return message
    try:
        data = json.loads(message)
    except ValueError:  # not JSON: the SDK answers it as it does
        return message
    fixed = _unicode(data)
    if fixed == data:  # only whole pairs (or an escaped backslash before "ud..."): nothing to repair
        return message
    out = json.dumps(fixed, ensure_ascii=False, separators=(",", ":")).encode()
    return out + b"\n" if message.endswith(b"\n") else out


class Stdin(io.RawIOBase):
    """A file descriptor read line by line, each line through ``repair``. Not itself a file descriptor, so
    the SDK reads it through ``sys.stdin.buffer`` rather than claiming fd 0 (``serve_stdio`` points fd 0 at
    the null device instead, for whatever a tool might start)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.line: list[bytes] = []  # the line being read, in pieces
        self.ready = memoryview(b"")  # whole lines, repaired, not yet handed on
        self.eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.ready and not self.eof:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
                self.ready = memoryview(repair(b"".join(self.line)))
                self.line = []
                break
            end = chunk.rfind(b"\n")
            if end < 0:
                self.line.append(chunk)
                continue
            lines = b"".join([*self.line, chunk[: end + 1]])
            self.line = [chunk[end + 1 :]] if end + 1 < len(chunk) else []
            self.ready = memoryview(b"".join(repair(x) for x in lines.splitlines(keepends=True)))
        n = min(len(buffer), len(self.ready))
        buffer[:n] = self.ready[:n]
        self.ready = self.ready[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


class RepairedBody:
    """ASGI middleware: a POST body of at most ``limit`` bytes is read whole and handed on through ``repair``;
    a larger one goes on as it comes (the app refuses it by its size)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        pieces: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before its body ended
                return
            piece = message.get("body", b"")
            pieces.append(piece)
            size += len(piece)
            if not message.get("more_body", False):
                break
            if size > self.limit:  # too large to be read here: as it came, the rest after it
                await self.app(
                    scope,
                    _replay([{"type": "http.request", "body": b"".join(pieces), "more_body": True}], receive),
                    send,
                )
                return
        body = repair(b"".join(pieces))
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _replay(first: list[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return first.pop(0) if first else await receive()

    return replay
