"""``sjc proxy`` relays ordinary traffic byte for byte: a raw socket client on one side, a raw socket upstream
on the other, so that every header byte, the framing and the moment a connection closes can be seen."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Callable

import pytest

from tests.proxy.test_proxy import Proxy

Script = Callable[[socket.socket, bytes], None]


def read_request(conn: socket.socket) -> bytes:
    """One whole request as the socket delivered it (by its length or its chunked framing)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return data
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")[1:]
    fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(b":") for ln in lines)}
    if b"content-length" in fields:
        while len(rest) < int(fields[b"content-length"]):
            rest += conn.recv(65536)
    elif fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            rest += conn.recv(65536)
    return head + b"\r\n\r\n" + rest


class RawUpstream:
    """Answers each connection's first request with ``script(conn, request)``, then closes it; keeps what
    it received and whether the other side closed first."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received: list[bytes] = []
        self.script: Script = lambda conn, req: conn.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
        self.events: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            req = read_request(conn)
            self.received.append(req)
            try:
                self.script(conn, req)
            except OSError as exc:
                self.events.append(f"client gone: {type(exc).__name__}")

    def close(self) -> None:
        self.sock.close()


def exchange(port: int, request: bytes, timeout: float = 10) -> bytes:
    """Send raw bytes, read until the proxy closes or has sent a whole answer (by length or last chunk)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        data = b""
        while True:
            try:
                piece = s.recv(65536)
            except TimeoutError:
                break
            if not piece:
                break
            data += piece
            head, sep, body = data.partition(b"\r\n\r\n")
            if not sep:
                continue
            fields = {
                k.strip().lower(): v.strip() for k, _, v in (ln.partition(b":") for ln in head.split(b"\r\n")[1:])
            }
            if b"content-length" in fields and len(body) >= int(fields[b"content-length"]):
                break
            if fields.get(b"transfer-encoding") == b"chunked" and body.endswith(b"0\r\n\r\n"):
                break
            if head.startswith(b"HTTP/1.1 204") or head.startswith(b"HTTP/1.1 304"):
                break
        return data


def split(message: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    head, _, body = message.partition(b"\r\n\r\n")
    first, *lines = head.split(b"\r\n")
    return first, [(k.strip().lower(), v.strip()) for k, _, v in (ln.partition(b":") for ln in lines)], body


@pytest.fixture(scope="module")
def raw_upstream():
    up = RawUpstream()
    yield up
    up.close()


@pytest.fixture(scope="module")
def proxy(raw_upstream, tmp_path_factory):
    p = Proxy(raw_upstream.url, tmp_path_factory.mktemp("relayhome"))
    yield p
    p.stop()


def answer(status: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> Script:
    def script(conn: socket.socket, req: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 " + status + b"\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in headers) + b"\r\n" + body
        )

    return script


@pytest.mark.slow
def test_header_bytes_pass_as_they_came_both_ways(proxy, raw_upstream):
    """obs-text (bytes 0x80-0xFF that are no UTF-8), UTF-8, repeated fields, odd spacing inside values: the
    upstream gets the client's header fields and the client the upstream's, nothing added, nothing
    re-encoded; the host is the upstream's and the framing fields are each side's own."""
    body = b'{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
    sent_fields = [
        (b"x-api-key", b"sk-ant-\xe9\xff-latin1"),
        (b"x-utf8", "caf\u00e9 \u2713".encode()),
        (b"x-multi", b"one"),
        (b"x-multi", b"two,  three"),
        (b"content-type", b"application/json"),
    ]
    back_fields = [
        (b"content-type", b"application/json"),
        (b"x-obs", b"ol\xe9 \xa0 \xff"),
        (b"set-cookie", b"a=1"),
        (b"set-cookie", b"b=2"),
        (b"request-id", b"req_01"),
    ]
    back = b'{"ok": true}'
    raw_upstream.script = answer(b"200 OK", [*back_fields, (b"content-length", b"%d" % len(back))], back)
    request = (
        b"POST /v1/messages?beta=true&q=%2F%20x HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        + b"".join(k + b": " + v + b"\r\n" for k, v in sent_fields)
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
    )
    got = exchange(proxy.port, request)
    status, fields, got_body = split(got)
    assert status == b"HTTP/1.1 200 OK" and got_body == back
    assert [f for f in fields if f[0] != b"content-length"] == back_fields and (
        b"content-length",
        b"%d" % len(back),
    ) in fields
    line, up_fields, up_body = split(raw_upstream.received[-1])
    assert line == b"POST /v1/messages?beta=true&q=%2F%20x HTTP/1.1" and up_body == body
    port = raw_upstream.url.rsplit(":", 1)[1].encode()
    assert [f for f in up_fields if f[0] not in (b"host", b"content-length")] == sent_fields
    assert (b"host", b"127.0.0.1:" + port) in up_fields and (b"content-length", b"%d" % len(body)) in up_fields


@pytest.mark.slow
def test_framing_is_kept_a_length_stays_a_length_chunks_stay_chunks(proxy, raw_upstream):
    """A chunked request body reaches the upstream chunked (same payload); a chunked answer reaches the
    client chunked, a sized one sized; a compressed answer passes compressed; nothing is added by the
    proxy: no date, server, user agent, accept or content type of its own."""
    payload = b'{"model":"m","messages":[{"role":"user","content":"' + b"x" * 100_000 + b'"}]}'
    chunked_request = (
        b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (payload[:70_000], payload[70_000:])) + b"0\r\n\r\n"
    )

    def sse(conn: socket.socket, req: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for i in range(5):
            event = b'event: ping\ndata: {"i": %d}\n\n' % i
            conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            time.sleep(0.01)
        conn.sendall(b"0\r\n\r\n")

    raw_upstream.script = sse
    got = exchange(
        proxy.port,
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n" + chunked_request,
    )
    status, fields, body = split(got)
    assert status == b"HTTP/1.1 200 OK" and (b"transfer-encoding", b"chunked") in fields
    assert {k for k, _ in fields} == {b"content-type", b"transfer-encoding"}
    assert body.endswith(b"0\r\n\r\n") and all(b'data: {"i": %d}' % i in body for i in range(5))
    _, up_fields, up_body = split(raw_upstream.received[-1])
    assert (b"transfer-encoding", b"chunked") in up_fields and b"content-length" not in dict(up_fields)
    assert {k for k, _ in up_fields} == {b"host", b"transfer-encoding"}
    pieces, rest = [], up_body
    while rest and not rest.startswith(b"0\r\n"):
        size, _, rest = rest.partition(b"\r\n")
        pieces.append(rest[: int(size, 16)])
        rest = rest[int(size, 16) + 2 :]
    assert b"".join(pieces) == payload

    packed = gzip.compress(b'{"content": [{"type": "text", "text": "hello"}]}')
    raw_upstream.script = answer(
        b"200 OK",
        [
            (b"content-type", b"application/json"),
            (b"content-encoding", b"gzip"),
            (b"content-length", b"%d" % len(packed)),
        ],
        packed,
    )
    got = exchange(
        proxy.port,
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\ncontent-length: 2\r\n\r\n{}",
    )
    status, fields, body = split(got)
    assert body == packed and (b"content-encoding", b"gzip") in fields
    assert (b"content-length", b"%d" % len(packed)) in fields and b"transfer-encoding" not in dict(fields)
    assert (b"accept-encoding", b"gzip") in split(raw_upstream.received[-1])[1]

    raw_upstream.script = answer(b"200 OK", [(b"content-length", b"5")], b"")  # a HEAD answer: the length only
    got = exchange(proxy.port, b"HEAD /v1/models HTTP/1.1\r\nhost: x\r\n\r\n", timeout=2)
    status, fields, body = split(got)
    assert status == b"HTTP/1.1 200 OK" and (b"content-length", b"5") in fields and body == b""
    assert split(raw_upstream.received[-1])[0] == b"HEAD /v1/models HTTP/1.1"


@pytest.mark.slow
def test_a_client_that_leaves_mid_stream_lets_the_upstream_go(proxy, raw_upstream):
    """The client closes while an answer streams: the proxy closes its connection to the upstream, which
    stops (a model would stop generating) instead of streaming on into nothing."""
    streaming = threading.Event()

    def endless(conn: socket.socket, req: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            event = b"event: ping\ndata: {}\n\n"
            conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            streaming.set()
            time.sleep(0.02)
        raw_upstream.events.append("streamed to its end")

    raw_upstream.script = endless
    raw_upstream.events.clear()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        assert s.recv(65536).startswith(b"HTTP/1.1 200 OK")
        assert streaming.wait(10)
    deadline = time.monotonic() + 10
    while not raw_upstream.events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert raw_upstream.events and raw_upstream.events[0].startswith("client gone"), raw_upstream.events
