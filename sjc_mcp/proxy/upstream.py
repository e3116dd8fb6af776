"""The proxy's side towards the model API: send a request as it came, and hand back the answer as it comes.

Requests go out through aiohttp (its C parser and writer; chosen by measurement, see ``docs/proxy.md``)
on kept-alive connections: the client's headers as they came (hop-by-hop ones aside; the host is the
upstream's), nothing added (no user agent, accept, encoding or content type of aiohttp's own), no cookie
kept, no redirect followed, nothing decompressed. A header value that is not UTF-8 (obs-text: bytes
aiohttp would write re-encoded) sends its request through httpx instead, which writes header bytes as
they came. Answers come back as their status, raw header bytes and body pieces as large as have
arrived; any failure of the upstream's (unreachable, broken off, timed out) is an ``UpstreamError``
naming the library's own exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

Headers = list[tuple[bytes, bytes]]

# never forwarded either way (RFC 9110 7.6.1; the host is the upstream's own, the length is set again
# for a body that changed)
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization", b"proxy-connection", b"te"}
    | {b"trailer", b"trailers", b"transfer-encoding", b"upgrade", b"host"}
)
ANSWER_HOP_BY_HOP = frozenset((b"connection", b"keep-alive", b"transfer-encoding", b"proxy-connection"))
_HTTPX_OWN = ("accept", "accept-encoding", "connection", "user-agent")
CONNECT_TIMEOUT_S = 15.0
READ_TIMEOUT_S = 600.0  # between two pieces of an answer (a model may think for minutes)


class UpstreamError(Exception):
    """The upstream could not be reached, or broke its answer off; ``kind`` names the library's exception."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


class Answer:
    """One answer of the upstream: status, headers (raw bytes), body pieces as they arrive."""

    status: int
    headers: Headers

    def pieces(self) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class _AiohttpAnswer(Answer):
    def __init__(self, resp: Any, errors: tuple[type[BaseException], ...]) -> None:
        self.resp = resp
        self.errors = errors
        self.status = resp.status
        self.headers = list(resp.raw_headers)

    async def pieces(self) -> AsyncIterator[bytes]:
        content = self.resp.content
        try:
            while piece := await content.readany():  # all that has arrived, at once
                yield piece
        except self.errors as exc:
            raise UpstreamError(type(exc).__name__, str(exc)) from None

    async def close(self) -> None:
        if self.resp.content.at_eof():
            self.resp.release()  # read to its end: the connection is kept for the next request
        else:
            self.resp.close()  # given up on (the client left): the upstream sees the connection close


class _HttpxAnswer(Answer):
    def __init__(self, resp: Any) -> None:
        import httpx

        self.resp = resp
        self.errors = (httpx.HTTPError,)
        self.status = resp.status_code
        self.headers = list(resp.headers.raw)

    async def pieces(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self.resp.aiter_raw():
                yield piece
        except self.errors as exc:
            raise UpstreamError(type(exc).__name__, str(exc)) from None

    async def close(self) -> None:
        await self.resp.aclose()


def _text_headers(headers: Headers) -> list[tuple[str, str]] | None:
    """The headers as aiohttp takes them, or None when a value is not UTF-8 (aiohttp would alter it)."""
    try:
        return [(k.decode("ascii"), v.decode("utf-8")) for k, v in headers]
    except UnicodeDecodeError:
        return None


class Upstream:
    """The kept-alive connections to the upstream (made in the server's event loop, closed with it)."""

    def __init__(self) -> None:
        import aiohttp
        from yarl import URL

        self._url = URL
        self.errors: tuple[type[BaseException], ...] = (aiohttp.ClientError, asyncio.TimeoutError, OSError)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT_S, sock_read=READ_TIMEOUT_S),
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            trust_env=False,
            read_bufsize=1 << 20,
            max_line_size=1 << 16,
            max_field_size=1 << 16,
        )
        self._httpx: Any = None

    async def send(self, method: str, url: str, headers: Headers, body: Sequence[bytes], chunked: bool) -> Answer:
        """Send the request; ``body`` as the pieces it came in, in chunked framing when ``chunked`` (as it
        came), else with the ``content-length`` among ``headers`` (or, when absent, its length)."""
        text = _text_headers(headers)
        if text is None:
            return await self._send_httpx(method, url, headers, body, chunked)
        data: Any
        if not body:
            data = None
        elif len(body) == 1:
            data = body[0]
        else:
            data = _pieces(body)
        try:
            resp = await self.session.request(
                method,
                self._url(url, encoded=True),  # the path and query as the client wrote them
                headers=text,
                data=data,
                allow_redirects=False,
                chunked=True if chunked and data is not None else None,
            )
        except self.errors as exc:
            raise UpstreamError(type(exc).__name__, str(exc)) from None
        return _AiohttpAnswer(resp, self.errors)

    async def _send_httpx(
        self, method: str, url: str, headers: Headers, body: Sequence[bytes], chunked: bool
    ) -> Answer:
        import httpx

        if self._httpx is None:
            self._httpx = httpx.AsyncClient(
                timeout=httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
                follow_redirects=False,
                trust_env=False,
            )
        content: Any = _pieces(body) if chunked else b"".join(body)
        try:
            request = self._httpx.build_request(method, url, headers=headers, content=content)
            sent = {k.decode("latin-1").lower() for k, _ in headers}
            for name in _HTTPX_OWN:  # headers httpx adds of its own: only the client's go out
                if name not in sent:
                    del request.headers[name]
            return _HttpxAnswer(await self._httpx.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise UpstreamError(type(exc).__name__, str(exc)) from None

    async def close(self) -> None:
        await self.session.close()
        if self._httpx is not None:
            await self._httpx.aclose()


async def _pieces(body: Sequence[bytes]) -> AsyncIterator[bytes]:
    for piece in body:
        yield piece
