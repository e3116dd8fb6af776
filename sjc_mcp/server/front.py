"""The first moments of ``sjc-mcp``: answer the MCP handshake before the MCP SDK is imported.

Importing the SDK (pydantic, starlette, httpx, the protocol types) takes most of a second, and hosts
do not wait: a server slow to answer is "still connecting" when the model first looks for its tools.
So a small JSON-RPC front, standard library only, answers what a host asks at start-up from answers
the SDK itself gave for this very server (``sjc_mcp.server.handshake``, per protocol version). Both
protocol eras are served:

- the handshake era (2024-11-05 … 2025-11-25; Codex 0.171 opens so): ``initialize`` (version
  negotiated as the SDK does), ``notifications/initialized``, then ``ping`` and the list methods;
- the 2026-07-28 era of per-request envelopes (Claude Code 2.1.332 opens so): ``server/discover``,
  ``ping``, the list methods, and ``subscriptions/listen`` (acknowledged; the stream stays open).

The first message the front does not answer this way, normally the first ``tools/call``, hands the
connection to the ``MCPServer`` of ``sjc_mcp.server.tools``. The SDK is first shown what it must know
of the connection so far: the client's own ``initialize`` (under a private id, its answer dropped) and
``notifications/initialized``; or a ``server/discover`` with the client's first envelope (the era is
decided by the first request; its answer dropped) and the open ``subscriptions/listen`` requests
(their second acknowledgement dropped). Then that message and everything after it. From then on the SDK alone
speaks, as if it had been there from the start.

Once the handshake is answered, what the first tool call needs (the SDK, the tools, the offline judge)
is imported in a thread, while the host has nothing to ask (``_WarmUp``).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import IO, Any

from sjc_mcp.server.handshake import (
    CACHED_METHODS,
    LISTEN,
    LISTEN_FLAGS,
    build_and_cache_handshake,
    load_handshake,
)

# The id under which the opening request (the client's initialize, or a discover with the client's first
# envelope) is replayed into the SDK; its answer never reaches the client.
REPLAY_ID = "sjc-mcp:replayed-initialize"


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """The protocol's stdin and stdout as private descriptors; fd 0 then reads the null device and fd 1
    writes to stderr, so nothing a library prints can corrupt the stream (as the SDK's transport does)."""
    try:
        rfd, wfd = os.dup(0), os.dup(1)
    except OSError:
        return sys.stdin.buffer, sys.stdout.buffer
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
    except OSError:
        pass
    return os.fdopen(rfd, "rb"), os.fdopen(wfd, "wb")


def _is_id(v: Any) -> bool:
    return isinstance(v, (int, str)) and not isinstance(v, bool)


def _plain_init(params: Any) -> str | None:
    """The protocol version an ``initialize`` asks for, if its params have the shape the SDK accepts."""
    if not isinstance(params, dict):
        return None
    info = params.get("clientInfo")
    if (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    ):
        return str(params["protocolVersion"])
    return None


class Front:
    """The connection until the SDK takes it: ``answer`` gives each line's reply, or None for a line the
    SDK must see (after ``replay``)."""

    def __init__(self, handshake: dict[str, Any]) -> None:
        self.legacy: list[str] = handshake["handshake_versions"]
        self.modern: list[str] = handshake["modern_versions"]
        self.keys: dict[str, str] = handshake["envelope"]
        self.results: dict[str, dict[str, Any]] = _by_version(handshake["answers"])
        self.acks: dict[str, dict[str, Any]] = _by_version(handshake["listen_acks"])
        self.listen_ends: dict[str, dict[str, Any]] = _by_version(handshake["listen_ends"])
        self.era: str | None = None  # "legacy" once initialize is answered, "modern" after an enveloped request
        self.version: str | None = None  # the negotiated version (legacy)
        self.replay: list[str] = []  # what the SDK must be shown first
        self.listens: list[tuple[Any, str]] = []  # the open subscriptions/listen requests (modern): id, version

    def answer(self, line: bytes) -> list[bytes] | None:
        try:
            msg = json.loads(line)
        except ValueError:
            return None
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            return None
        method, params = msg["method"], msg.get("params")
        if "id" not in msg:
            if method == "notifications/initialized" and self.era == "legacy" and msg.get("params", {}) == {}:
                self.replay.append(line.decode())
                return []
            return None
        rid = msg["id"]
        if not _is_id(rid):
            return None
        modern = self._envelope_version(params)
        if self.era is None and method == "initialize":
            requested = _plain_init(params)
            if requested is None:
                return None
            version = requested if requested in self.legacy else self.legacy[-1]
            reply = self._result(rid, self.results.get(version, {}).get("initialize"))
            self.era, self.version = "legacy", version
            self.replay.append(json.dumps({**msg, "id": REPLAY_ID}, ensure_ascii=False) + "\n")
            return [reply]
        if self.era in (None, "modern") and modern is not None:
            if self.era is None:
                # The SDK must open the same era: a discover with the client's envelope goes first.
                opening = {
                    "jsonrpc": "2.0",
                    "id": REPLAY_ID,
                    "method": "server/discover",
                    "params": {"_meta": params["_meta"]},
                }
                self.replay.append(json.dumps(opening, ensure_ascii=False) + "\n")
            self.era = "modern"
            rest = {k: v for k, v in params.items() if k != "_meta"}
            if method == LISTEN and set(rest) == {"notifications"}:
                ack = self._ack(rid, modern, rest["notifications"])
                if ack is not None:
                    self.listens.append((rid, modern))
                    self.replay.append(line.decode())
                return ack
            if method in CACHED_METHODS and not rest:
                return [self._result(rid, self.results.get(modern, {}).get(method))]
            return None
        if self.era == "legacy" and method in CACHED_METHODS and _plain_legacy_params(msg):
            assert self.version is not None
            return [self._result(rid, self.results.get(self.version, {}).get(method))]
        return None

    def _envelope_version(self, params: Any) -> str | None:
        """The protocol version of a modern request envelope the SDK accepts as it is, else None."""
        if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
            return None
        meta = params["_meta"]
        pv, info, caps = self.keys["protocol_version"], self.keys["client_info"], self.keys["client_capabilities"]
        if set(meta) - {pv, info, caps} or meta.get(pv) not in self.modern or not isinstance(meta.get(caps), dict):
            return None
        if info in meta and not isinstance(meta[info], dict):
            return None
        return str(meta[pv])

    def _ack(self, rid: Any, version: str, wanted: Any) -> list[bytes] | None:
        if not isinstance(wanted, dict) or set(wanted) - set(LISTEN_FLAGS):
            return None
        if not all(isinstance(v, bool) for v in wanted.values()):
            return None
        key = ",".join(f for f in LISTEN_FLAGS if wanted.get(f))
        template = self.acks.get(version, {}).get(key)
        if template is None or "error" not in self.listen_ends.get(version, {}):
            return None
        ack = copy.deepcopy(template)
        ack["params"]["_meta"][self.keys["subscription_id"]] = rid
        return [_dump(ack)]

    def end(self) -> list[bytes]:
        """What the SDK writes when the client's input ends: each open listen stream ends in an error."""
        return [_dump({"jsonrpc": "2.0", "id": rid, "error": self.listen_ends[v]["error"]}) for rid, v in self.listens]

    def _result(self, rid: Any, result: Any) -> bytes:
        if result is None:  # the SDK gave no result for it at this version: it is the SDK's to answer
            raise _HandOver
        return _dump({"jsonrpc": "2.0", "id": rid, "result": result})


class _HandOver(Exception):
    pass


def _plain_legacy_params(msg: dict[str, Any]) -> bool:
    """No params, or only a progress token (Codex sends ``{"_meta": {"progressToken": 0}}``)."""
    if "params" not in msg:
        return True
    p = msg["params"]
    if p == {}:
        return True
    return (
        isinstance(p, dict)
        and set(p) == {"_meta"}
        and isinstance(p["_meta"], dict)
        and set(p["_meta"]) <= {"progressToken"}
        and _is_id(p["_meta"].get("progressToken", 0))
    )


def _by_version(table: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, variants in table.items():
        for variant in variants:
            for v in variant["versions"]:
                out.setdefault(v, {})[key] = variant["value"]
    return out


def _dump(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _front(handshake: dict[str, Any] | None) -> Front | None:
    if handshake is None:
        return None
    try:
        return Front(handshake)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a damaged cache: the SDK alone serves
        print(
            f"sjc-mcp: the cached handshake answers are unusable ({type(exc).__name__}); starting on the SDK",
            file=sys.stderr,
        )
        return None


def _stop_on_sigint() -> None:
    """The first Ctrl-C ends the process at once, quietly, with 130: nothing of a stdio server is worth
    finishing once its user interrupts it (a decision log record is written in one ``write``), and
    a graceful stop would wait on the thread blocked reading stdin."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        try:
            sys.stderr.flush()
        finally:
            os._exit(128 + signum)

    import threading

    if threading.current_thread() is threading.main_thread():  # else (embedded) Python's handling stays
        signal.signal(signal.SIGINT, stop)


# What the first tool call needs, imported while the host has nothing to ask: the SDK and the tools (most
# of a second), the offline judge (the default one). SJC_MCP_PRELOAD=0 leaves it to the first tool call.
WARM_MODULES = ("anyio", "mcp.server.stdio", "sjc_mcp.server.tools", "sjc_mcp.judges.lexical")


class _WarmUp:
    """Imports ``WARM_MODULES`` in a thread once the handshake is answered: the front then waits on the
    client (reading stdin holds no lock), so the first tool call finds the SDK loaded instead of loading
    it. ``join`` before importing any of them at the hand-over (two threads importing the same modules
    could each wait on the other's import lock), and before the process ends (a thread stopped in the
    middle of an import at exit can take the interpreter down with it)."""

    def __init__(self) -> None:
        self.thread: Any = None

    def start(self) -> None:
        if self.thread is not None or os.environ.get("SJC_MCP_PRELOAD", "1") == "0":
            return
        import threading

        def run() -> None:
            import importlib

            try:
                for name in WARM_MODULES:
                    importlib.import_module(name)
            except Exception:  # the hand-over imports them again and reports what fails there
                pass

        self.thread = threading.Thread(target=run, name="sjc-mcp-warm-up", daemon=True)
        self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def serve(handshake: dict[str, Any] | None, tool_options: dict[str, Any] | None = None) -> int:
    rfile, wfile = _claim_stdio()
    front = _front(handshake)
    pending: list[str] = []
    warm = _WarmUp()
    try:
        while front is not None:
            line = rfile.readline()
            if not line:
                for reply in front.end():
                    wfile.write(reply)
                wfile.flush()
                warm.join()
                return 0
            try:
                replies = front.answer(line)
            except _HandOver:
                replies = None
            if replies is None:
                pending = [*front.replay, line.decode("utf-8", "replace")]
                break
            for reply in replies:
                wfile.write(reply)
            wfile.flush()
            if front.era is not None:  # the handshake is answered: load what the first tool call needs
                warm.start()
    except (BrokenPipeError, ConnectionResetError):  # the client went away
        warm.join()
        return 0
    warm.join()
    handover(rfile, wfile, pending, front, tool_options)
    return 0


def handover(
    rfile: IO[bytes],
    wfile: IO[bytes],
    pending: list[str],
    front: Front | None,
    tool_options: dict[str, Any] | None = None,
) -> None:
    """Run the ``MCPServer`` on the connection: ``pending`` lines first, then the rest of ``rfile``. The
    SDK's answers to what the front had already answered (the replayed ``initialize``, a second
    acknowledgement of each open listen) are not written."""
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="sjc-mcp: %(message)s")
    import anyio
    from mcp.server.stdio import stdio_server

    from sjc_mcp.server.tools import create_server

    server = create_server(**(tool_options or {}))
    drop_init = front is not None and front.era is not None  # the answer to the replayed opening request
    drop_acks = [rid for rid, _ in front.listens] if front is not None else []
    sub_key = front.keys["subscription_id"] if front is not None else ""

    class Lines:
        def __init__(self) -> None:
            self.rest = anyio.wrap_file(rfile)

        def __aiter__(self) -> Any:
            return self._gen()

        async def _gen(self) -> Any:
            for line in pending:
                yield line if line.endswith("\n") else line + "\n"
            while True:
                line = await self.rest.readline()
                if not line:
                    return
                yield line.decode("utf-8", "replace")

    class Out:
        def __init__(self) -> None:
            self.file = anyio.wrap_file(wfile)

        def already_answered(self, s: str) -> bool:
            nonlocal drop_init
            msg = json.loads(s)
            if not isinstance(msg, dict):
                return False
            if drop_init and msg.get("id") == REPLAY_ID and "method" not in msg:
                drop_init = False
                if "error" in msg:
                    print(f"sjc-mcp: the SDK refused the replayed opening request: {msg['error']}", file=sys.stderr)
                return True
            if msg.get("method") == "notifications/subscriptions/acknowledged":
                sub = ((msg.get("params") or {}).get("_meta") or {}).get(sub_key)
                if sub in drop_acks:
                    drop_acks.remove(sub)
                    return True
            return False

        async def write(self, s: str) -> None:
            if (drop_init or drop_acks) and self.already_answered(s):
                return
            await self.file.write(s.encode())

        async def flush(self) -> None:
            await self.file.flush()

    async def run() -> None:
        low = server._lowlevel_server
        async with stdio_server(stdin=Lines(), stdout=Out()) as (read, write):  # type: ignore[arg-type]
            await low.run(read, write, low.create_initialization_options())

    anyio.run(run)


def main(tool_options: dict[str, Any] | None = None) -> int:
    """Serve on stdio; ``tool_options`` are ``create_server``'s keyword arguments (``sjc_mcp.server`` parses
    them from the command line)."""
    _stop_on_sigint()
    handshake = load_handshake()
    if handshake is None:
        try:
            handshake = build_and_cache_handshake()
        except Exception as exc:  # the server still runs, on the SDK alone
            print(f"sjc-mcp: no cached handshake ({type(exc).__name__}: {exc}); starting on the SDK", file=sys.stderr)
    return serve(handshake, tool_options)
