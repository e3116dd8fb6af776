"""Connections that keep the team server waiting are cut (``--idle-timeout``).

uvicorn cuts a connection left idle after an answer (its keep-alive timeout), but not one that never
finishes its request: a client that connects and sends nothing, sends its headers a byte at a time, or
stops in the middle of its body holds a connection (and, in the body, a task) for as long as it likes.
``idle_protocol(seconds)`` is uvicorn's HTTP protocol (httptools) with one rule added, for the time the
server is waiting on the client (no request of the connection is being answered):

- a request's headers must be complete within ``seconds`` of the connection being made or of the previous
  answer (bytes arriving do not extend it: a slow drip is cut like silence);
- each piece of its body must follow the previous one within ``seconds``.

Otherwise the connection is closed; an app waiting on the body sees the client disconnect. While a request
is being answered (a long tool call, an event stream open for the client) nothing is timed: the client is
waiting on the server then, not the other way round. The keep-alive timeout is set to the same time.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from sjc_mcp.server.options import DEFAULT_IDLE_TIMEOUT


class _IdleTimeoutProtocol(HttpToolsProtocol):
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sjc_read = 0  # requests read whole
        self.sjc_answered = 0  # answers sent whole
        self.sjc_in_body = False  # a request's headers read, its body not yet
        self.sjc_timer: asyncio.TimerHandle | None = None

    def _waiting_on_client(self) -> bool:
        return self.sjc_answered >= self.sjc_read

    def _arm(self) -> None:
        self._disarm()
        self.sjc_timer = asyncio.get_running_loop().call_later(self.idle_timeout, self._expired)

    def _disarm(self) -> None:
        if self.sjc_timer is not None:
            self.sjc_timer.cancel()
            self.sjc_timer = None

    def _expired(self) -> None:
        self.sjc_timer = None
        if self.transport.is_closing():
            return
        if self.flow.read_paused:  # the server stopped reading (its app has not taken the body yet): not idle
            self._arm()
            return
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # the first request's headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.sjc_in_body and self._waiting_on_client():
            self._arm()  # a piece of the body: the next one has its own time

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.sjc_in_body = True
        if self._waiting_on_client():
            self._arm()
        else:
            self._disarm()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.sjc_in_body = False
        self.sjc_read += 1
        if self._waiting_on_client():  # answered before its body ended (a 401): the next request's headers
            self._arm()
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.sjc_answered += 1
        if self._waiting_on_client():
            self._arm()


def idle_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol, cutting a connection that keeps the server waiting ``seconds`` (for
    ``uvicorn.Config(http=...)``)."""
    return type("IdleTimeoutProtocol", (_IdleTimeoutProtocol,), {"idle_timeout": float(seconds)})
