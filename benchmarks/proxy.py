"""What ``sjc proxy`` costs a request, against the same request sent straight to the upstream and through
nginx as a plain reverse proxy, all in one run.

    python benchmarks/proxy.py [--rounds 150] [--streams 200] [--compactions 5] [--no-nginx]
                               [--also NAME=COMMAND ...]

One fake model API (an asyncio server in a process of its own, on 127.0.0.1) answers every column. For each
row the same request goes straight to it, through ``sjc proxy`` and through nginx, in turn, round after
round (this machine's speed moves from minute to minute), on kept-alive connections; the figures are
medians. Rows: a 2 KB and a 2 MB Anthropic request (a long session's tool outputs) answered with JSON, and
the same two answered by a stream of 400 server-sent events (each written on its own, as a model streams
them): total time and time to the first event. Then 200 streams at once through each (per-stream time,
and the proxy's peak resident memory in each of three batches: flat means it does not grow with the
streams a process has relayed), and a Claude Code compaction request (a 2 MB history, a 150-entry
summary): the upstream's own time and what the judgment adds after it, JSON and streamed.

nginx (``nginx`` on PATH or in /usr/sbin) runs as a plain reverse proxy: one worker, kept-alive
connections to the upstream, request bodies buffered in memory, answers not buffered (as a streaming API
needs); without it its column is left out and a line says so. ``--also NAME=COMMAND`` adds a column: a
command that listens on ``{port}`` and forwards to ``{upstream}`` (how the server and client libraries
were compared). Nothing here is a test: the figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

EVENTS = 400
CC_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far, paying close attention to the "
    "user's explicit requests and your previous actions."
)
COMPACTION_MARK = b"Your task is to create a detailed summary of the conversation so far"
TARGETS_MS = {"small": 3.0, "large": 15.0}  # the floors for the added median (2 KB, 2 MB)


# -- the fake upstream (a process of its own) ----------------------------------------------------------------


def _event(i: int) -> bytes:
    data = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": f" token{i:04d} of the answer"},
    }
    return b"event: content_block_delta\ndata: " + json.dumps(data).encode() + b"\n\n"


def _message(text: str) -> bytes:
    return json.dumps(
        {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "claude-bench",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1234, "output_tokens": 321},
        }
    ).encode()


def _summary_events(text: str) -> list[bytes]:
    def ev(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    msg = json.loads(_message(""))
    msg["content"] = []
    out = [
        ev("message_start", {"type": "message_start", "message": msg}),
        ev(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
    ]
    step = max(1, len(text) // 200)
    out += [
        ev(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[i : i + step]}},
        )
        for i in range(0, len(text), step)
    ]
    out += [
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 321}},
        ),
        ev("message_stop", {"type": "message_stop"}),
    ]
    return out


def serve_upstream(port_file: str, summary_file: str) -> None:
    """The fake model API: JSON answers with a length, or ``x-bench-events`` events in chunked framing,
    each event written on its own; a request holding Claude Code's compaction prompt gets the summary."""
    summary = Path(summary_file).read_text()
    plain = _message("Hello from upstream. " * 40)
    compacted = _message(summary)
    compacted_events = _summary_events(summary)
    events = [_event(i) for i in range(EVENTS)]

    class Upstream(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            self.t = transport
            self.buf = bytearray()
            self.busy = False

        def data_received(self, data: bytes) -> None:
            self.buf += data
            self.next()

        def next(self) -> None:
            if self.busy:
                return
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
            n = int(headers.get("content-length", "0"))
            if len(self.buf) < end + 4 + n:
                return
            body = bytes(self.buf[end + 4 : end + 4 + n])
            del self.buf[: end + 4 + n]
            self.busy = True
            self.task = asyncio.ensure_future(self.answer(headers, body))

        async def answer(self, headers: dict[str, str], body: bytes) -> None:
            compaction = COMPACTION_MARK in body
            count = int(headers.get("x-bench-events", "0"))
            if not count:
                out = compacted if compaction else plain
                self.t.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-upstream: bench\r\n"
                    b"content-length: %d\r\n\r\n" % len(out) + out
                )
            else:
                self.t.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                )
                for ev in compacted_events if compaction else events[:count]:
                    self.t.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                    await asyncio.sleep(0)
                self.t.write(b"0\r\n\r\n")
            self.busy = False
            self.next()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(Upstream, "127.0.0.1", 0, backlog=1024)
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await asyncio.Event().wait()

    asyncio.run(main())


# -- requests ----------------------------------------------------------------------------------------------


def anthropic_body(size: int, prompt: str | None = None) -> tuple[bytes, list[tuple[str, str, str]]]:
    """An Anthropic Messages request whose history holds about ``size`` bytes of a session's tool outputs."""
    import generate

    outputs = generate.span(max(size - 600, 200))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in the billing worker."}]
    for i, (name, call, text) in enumerate(outputs):
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"command": call}}],
            }
        )
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": text}]}
        )
    messages.append({"role": "user", "content": prompt or "Go on."})
    body = {"model": "claude-bench", "max_tokens": 4096, "messages": messages}
    return json.dumps(body).encode(), outputs


def small_body() -> bytes:
    text = "Please look at the failing test in the billing worker and tell me what you find. " * 22
    body = {"model": "claude-bench", "max_tokens": 1024, "messages": [{"role": "user", "content": text[:1900]}]}
    return json.dumps(body).encode()


class Target:
    def __init__(self, name: str, port: int, pid: int | None) -> None:
        self.name, self.port, self.pid = name, port, pid
        self.conn: http.client.HTTPConnection | None = None

    def request(self, body: bytes, events: int) -> tuple[float, float]:
        """Total and first-byte milliseconds of one request; raises when the answer is not whole."""
        headers = {"content-type": "application/json", "x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01"}
        if events:
            headers["x-bench-events"] = str(events)
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                t0 = time.perf_counter()
                self.conn.request("POST", "/v1/messages", body=body, headers=headers)
                resp = self.conn.getresponse()
                first = resp.read1(65536) if events else b""
                t1 = time.perf_counter()
                rest = resp.read()
                t2 = time.perf_counter()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        if resp.status != 200 or (events and not (first + rest).endswith(b"\n\n")):
            raise RuntimeError(f"{self.name}: answer {resp.status}, {len(first + rest)} bytes")
        return (t2 - t0) * 1000, (t1 - t0) * 1000

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace")[-1500:] if proc.stderr else ""
                raise SystemExit(f"{what} did not start: {err}") from None
            time.sleep(0.05)
    raise SystemExit(f"{what} did not start within 60 s")


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream model {{ server 127.0.0.1:{upstream}; keepalive 64; }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 0;
        client_body_buffer_size 8m;
        location / {{
            proxy_pass http://model;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }}
    }}
}}
"""


def sjc_command() -> list[str]:
    exe = Path(sys.executable).parent / "sjc"
    return [str(exe) if exe.exists() else "sjc", "proxy"]


def start(
    name: str, cmd: list[str], port: int, env: dict[str, str], log: Path
) -> tuple[Target, subprocess.Popen[bytes]]:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    proc.stderr = None
    wait_port(port, proc, name)
    return Target(name, port, proc.pid), proc


# -- measuring ---------------------------------------------------------------------------------------------


def cpu_ms(pid: int | None) -> float:
    """CPU time the process (and its children, every thread) has used so far, in ms (0 for none)."""
    if pid is None:
        return 0.0
    total = 0
    for p in tree_pids(pid):
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int((task / "schedstat").read_text().split()[0])
    return total / 1e6


Rows = list[tuple[str, dict[str, list[tuple[float, float]]], dict[str, float]]]


def rows(targets: list[Target], rounds: int, large: bytes) -> Rows:
    cases = [
        ("2 KB body, JSON answer", small_body(), 0),
        ("2 MB body, JSON answer", large, 0),
        (f"2 KB body, {EVENTS} SSE events", small_body(), EVENTS),
        (f"2 MB body, {EVENTS} SSE events", large, EVENTS),
    ]
    out = []
    for label, body, events in cases:
        got: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets}
        for t in targets:  # warm-up: connections, caches, the first request's imports
            for _ in range(5):
                t.request(body, events)
        cpu = {t.name: -cpu_ms(t.pid) for t in targets}
        for i in range(rounds):
            order = targets if i % 2 == 0 else targets[::-1]
            for t in order:
                got[t.name].append(t.request(body, events))
        for t in targets:
            cpu[t.name] = (cpu[t.name] + cpu_ms(t.pid)) / rounds
        out.append((label, got, cpu))
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def print_rows(results: Rows, names: list[str], nginx: bool) -> None:
    print("\nordinary requests (median ms; for each hop the median it adds to direct, and the CPU it spends a request)")
    for label, got, cpu in results:
        streamed = "SSE" in label
        d_tot = median([x[0] for x in got["direct"]])
        d_first = median([x[1] for x in got["direct"]])
        print(f"  {label:<28} direct {d_tot:7.2f}" + (f" (first byte {d_first:.2f})" if streamed else ""))
        for name in names[1:]:
            tot = median([x[0] for x in got[name]])
            first = median([x[1] for x in got[name]])
            extra = f", {tot / d_tot:.2f}x, first byte {first:.2f} ({first - d_first:+.2f})" if streamed else ""
            print(f"    {name:<24} {tot - d_tot:+7.2f} ms{extra}; CPU {cpu[name]:.2f} ms")
        if "sjc proxy" not in got:
            continue
        tot = median([x[0] for x in got["sjc proxy"]])
        first = median([x[1] for x in got["sjc proxy"]])
        if not streamed:
            size = "small" if "2 KB" in label else "large"
            ref = 2 * (median([x[0] for x in got["nginx"]]) - d_tot) if nginx else 0.0
            limit = max(TARGETS_MS[size], ref)
            verdict = "met" if tot - d_tot <= limit else "MISSED"
            print(f"    target: sjc proxy adds <= {limit:.2f} ms (max({TARGETS_MS[size]:g} ms, 2x nginx's)): {verdict}")
        else:
            ok = tot <= 1.15 * d_tot and first <= d_first + 5
            print(
                f"    target: total <= {1.15 * d_tot:.2f} ms (1.15x direct), first byte <= {d_first + 5:.2f} ms "
                f"(direct + 5): {'met' if ok else 'MISSED'}"
            )


def rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its children (a server with worker processes is measured whole)."""
    out = [pid]
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    for k in kids:
        out += tree_pids(int(k))
    return out


def reset_peak(pid: int) -> None:
    for p in tree_pids(pid):
        with contextlib.suppress(OSError):
            Path(f"/proc/{p}/clear_refs").write_text("5")  # resets VmHWM, the peak resident size


async def one_stream(port: int, body: bytes) -> float:
    t0 = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"x-bench-events: %d\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % (EVENTS, len(body)) + body
    )
    await writer.drain()
    got = bytearray()
    while not got.endswith(b"\r\n0\r\n\r\n"):
        chunk = await reader.read(65536)
        if not chunk:
            break
        got += chunk
    writer.close()
    if not got.startswith(b"HTTP/1.1 200") or not got.endswith(b"\r\n0\r\n\r\n"):
        raise RuntimeError(f"a stream on port {port} ended after {len(got)} bytes")
    return (time.perf_counter() - t0) * 1000


def concurrent(targets: list[Target], streams: int, batches: int = 3) -> None:
    body = small_body()
    print(
        f"\n{streams} concurrent streams of {EVENTS} events (per-stream ms: median, p95; the hop's CPU a stream; "
        "its resident memory idle and at its peak in each batch)"
    )
    got: dict[str, list[float]] = {t.name: [] for t in targets}
    peaks: dict[str, list[int]] = {t.name: [] for t in targets}
    idle = {t.name: sum(rss_kb(p, "VmRSS") for p in tree_pids(t.pid)) for t in targets if t.pid}
    cpu = {t.name: -cpu_ms(t.pid) for t in targets}
    for _ in range(batches):
        for t in targets:
            if t.pid:
                reset_peak(t.pid)
            got[t.name] += asyncio.run(_batch(t.port, body, streams))
            if t.pid:
                peaks[t.name].append(sum(rss_kb(p, "VmHWM") for p in tree_pids(t.pid)))
    for t in targets:
        cpu[t.name] = (cpu[t.name] + cpu_ms(t.pid)) / (streams * batches)
    d = statistics.quantiles(got["direct"], n=20)
    print(f"  direct                 median {median(got['direct']):7.1f}  p95 {d[18]:7.1f}")
    for t in targets:
        if t.name == "direct":
            continue
        q = statistics.quantiles(got[t.name], n=20)
        mem = ", ".join(f"{p / 1024:.0f}" for p in peaks[t.name])
        mid = median(got[t.name])
        print(
            f"    {t.name:<24} median {mid:7.1f} ({mid - median(got['direct']):+.1f})  p95 {q[18]:7.1f} "
            f"({q[18] - d[18]:+.1f}); CPU {cpu[t.name]:.2f} ms; RSS idle {idle[t.name] / 1024:.0f} MB, peaks {mem} MB"
        )


async def _batch(port: int, body: bytes, n: int) -> list[float]:
    return list(await asyncio.gather(*(one_stream(port, body) for _ in range(n))))


def compactions(direct: Target, proxy: Target, rounds: int, log: Path) -> None:
    body, _ = anthropic_body(2_000_000, prompt=CC_PROMPT)
    print(f"\na Claude Code compaction through sjc proxy (2 MB history, 150-entry summary; median of {rounds})")
    for events, label in ((0, "JSON"), (EVENTS, "streamed")):
        up, via = [], []
        before = log.read_text(errors="replace").count("recognised, judged")
        for _ in range(rounds):
            up.append(direct.request(body, events)[0])
            via.append(proxy.request(body, events)[0])
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if "recognised, judged" in ln]
        judged = [float(m.group(1)) for ln in lines[before:] if (m := re.search(r"\((\d+) ms\)$", ln))]
        print(
            f"  {label:<9} the upstream's own time {median(up):7.1f} ms; through sjc proxy {median(via):7.1f} ms: "
            f"the judgment adds {median(via) - median(up):+.1f} ms (the proxy's own count of it: "
            f"{median(judged) if judged else float('nan'):.0f} ms)"
        )
        if lines:
            print(f"            sjc proxy said: {lines[-1].split(': ', 2)[-1]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=150, help="requests per column and row (default 150)")
    ap.add_argument("--streams", type=int, default=200, help="concurrent streams (default 200)")
    ap.add_argument("--compactions", type=int, default=5, help="compaction requests per column (default 5)")
    ap.add_argument("--no-nginx", action="store_true", help="leave nginx out")
    ap.add_argument("--no-sjc", action="store_true", help="leave sjc proxy out (compare --also columns only)")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=COMMAND", help="another hop to compare")
    ap.add_argument(
        "--libraries",
        action="store_true",
        help="add a plain pass-through relay for each server and client library pairing (benchmarks/relays.py)",
    )
    ap.add_argument("--upstream-serve", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.upstream_serve:
        serve_upstream(*a.upstream_serve)
        return
    import generate

    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="sjc-proxy-bench-") as tmp:
        work = Path(tmp)
        large, outputs = anthropic_body(2_000_000)
        (work / "summary.txt").write_text(generate.summary(150, outputs))
        del generate
        port_file = work / "upstream.port"
        up = subprocess.Popen(
            [sys.executable, __file__, "--upstream-serve", str(port_file), str(work / "summary.txt")],
            stderr=subprocess.PIPE,
        )
        procs.append(up)
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if up.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the fake upstream did not start")
                time.sleep(0.02)
            up_port = int(port_file.read_text())
            upstream = f"http://127.0.0.1:{up_port}"
            targets = [Target("direct", up_port, None)]
            env = dict(os.environ, HOME=str(work / "home"), XDG_STATE_HOME=str(work / "home" / "state"))
            (work / "home").mkdir()
            sjc_log = work / "sjc.err"
            if not a.no_sjc:
                port = free_port()
                t, p = start(
                    "sjc proxy",
                    [*sjc_command(), "--listen", f"127.0.0.1:{port}", "--upstream", upstream],
                    port,
                    env,
                    sjc_log,
                )
                targets.append(t)
                procs.append(p)
            nginx = nginx_binary() if not a.no_nginx else None
            if nginx:
                port = free_port()
                (work / "nginx").mkdir()
                conf = work / "nginx" / "nginx.conf"
                conf.write_text(NGINX_CONF.format(dir=work / "nginx", upstream=up_port, port=port))
                t, p = start(
                    "nginx",
                    [nginx, "-e", str(work / "nginx" / "error.log"), "-c", str(conf), "-p", str(work / "nginx")],
                    port,
                    env,
                    work / "nginx.err",
                )
                targets.append(t)
                procs.append(p)
            if a.libraries:
                import relays

                for name, (what, _) in relays.RELAYS.items():
                    if relays.available(name):
                        a.also.append(f"{name}={sys.executable} {HERE / 'relays.py'} {name} {{port}} {{upstream}}")
                        print(f"library column {name}: {what}")
                    else:
                        print(f"library column {name}: left out, needs {', '.join(relays.RELAYS[name][1])}")
            for spec in a.also:
                name, _, cmd = spec.partition("=")
                port = free_port()
                t, p = start(
                    name, [c.format(port=port, upstream=upstream) for c in cmd.split()], port, env, work / f"{name}.err"
                )
                targets.append(t)
                procs.append(p)
            names = [t.name for t in targets]
            print(
                f"sjc proxy benchmark: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {a.rounds} rounds, "
                f"columns alternated: {', '.join(names)}"
            )
            if not nginx:
                print(
                    "nginx: "
                    + (
                        "left out (--no-nginx)"
                        if a.no_nginx
                        else "not installed, its column is left out (Debian: apt-get install nginx-light)"
                    )
                )
            print_rows(rows(targets, a.rounds, large), names, bool(nginx))
            concurrent(targets, a.streams)
            if not a.no_sjc and a.compactions:
                sjc = next(t for t in targets if t.name == "sjc proxy")
                compactions(targets[0], sjc, a.compactions, sjc_log)
            for t in targets:
                t.close()
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    main()
