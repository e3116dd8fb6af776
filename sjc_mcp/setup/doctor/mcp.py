"""Whether an MCP server answers ``initialize``: started over stdio as its host starts it, or over streamable
HTTP. Each in ``timeout`` seconds at most, whatever the server does."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from typing import Any

from sjc_mcp.setup.doctor.checks import FAIL, OK, Check, shown_url

ENDING_WAIT = 2.0  # seconds a server gets to end once its stdin is closed, before its process group is killed
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "sjc-doctor", "version": "1"},
    },
}


def initialized_name(lines: Any) -> str | None:
    """The server's name from the answer to ``initialize`` among ``lines`` (JSON-RPC), or None."""
    for line in lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("id") == 1 and isinstance(msg.get("result"), dict):
            return str((msg["result"].get("serverInfo") or {}).get("name", "?"))
    return None


def _start(exe: str, args: list[str], env: dict[str, str] | None, timeout: float) -> tuple[str | None, float, str]:
    """One start of the server as a host starts it, ``initialize`` sent at once: (its name, or None; the
    milliseconds from the spawn to its answer; what went wrong). Its process group ends after, children
    holding its stdout included; nothing of that ending is in the time."""
    import selectors
    import signal

    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            [exe, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # its own process group: ended whole, children included
        )
    except OSError as exc:
        return None, 0.0, f"cannot start {exe}: {exc.strerror}"
    assert proc.stdin is not None and proc.stdout is not None
    name = None
    answered = 0.0
    data = b""
    try:
        try:
            proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            pass  # it exited already: its stdout says what it said
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while name is None and (left := t0 + timeout - time.monotonic()) > 0 and sel.select(left):
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
                name = initialized_name(data.decode("utf-8", "replace").splitlines())
                answered = (time.monotonic() - t0) * 1000
                if len(data) > 1 << 20:
                    break
    finally:
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=ENDING_WAIT)  # stdin closed: a well-behaved server ends now
        killpg = getattr(os, "killpg", None)
        with contextlib.suppress(OSError):
            if killpg is not None:
                killpg(proc.pid, signal.SIGKILL)  # what it left running, children holding its stdout included
            else:  # pragma: no cover - Windows
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    if name is not None:
        return name, answered, ""
    if time.monotonic() - t0 >= timeout:
        return None, 0.0, f"no answer to initialize within {timeout:g}s"
    return None, 0.0, "no initialize answer on stdout"


def mcp_answers(command: list[str], env: dict[str, str] | None = None, timeout: float = 10.0) -> tuple[bool, str]:
    """Start an MCP server over stdio as a host does and send ``initialize``: whether it answers, and in how
    long. The time is what ``benchmarks/mcp_startup.py`` measures (from the spawn to the answer; the server's
    ending afterwards not in it), taken at a second start as a host meets it at each session's start; a first
    start much slower (cold: files not yet read or compiled since the install) is named beside it. Each start
    gets ``timeout`` seconds in all, whatever the server or a child of it does with its stdout."""
    exe = shutil.which(command[0]) if command else None
    if not exe:
        return False, f"{command[0] if command else '(no command)'} not found"
    name, first, error = _start(exe, command[1:], env, timeout)
    if name is None:
        return False, error
    again, ms, _ = _start(exe, command[1:], env, timeout)
    if again is None:  # it answered once: that figure, as measured
        ms = first
    cold = f"; the first start took {first:.0f} ms, cold" if again is not None and first > 1.5 * ms + 50 else ""
    return True, f"{name} answered initialize {ms:.0f} ms after its start (spawn to answer, as a host waits{cold})"


def mcp_http_answers(url: str, headers: dict[str, str], timeout: float = 10.0) -> tuple[bool, str]:
    """POST ``initialize`` to a streamable-HTTP MCP server and read its answer (JSON or one SSE event): at
    most ``timeout`` seconds in all, however slowly the server sends it."""
    import asyncio

    import httpx

    shown = shown_url(url)
    head = {"Accept": "application/json, text/event-stream", **headers}
    answered: list[float] = []  # when the answer was read: the client's closing is not in the time
    t0 = time.monotonic()

    async def ask() -> tuple[int, str | None]:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
            client.stream("POST", url, json=INITIALIZE, headers=head) as r,
        ):
            if r.status_code >= 400:
                return r.status_code, None
            data = b""
            async for chunk in r.aiter_bytes():
                data += chunk
                lines = data.decode("utf-8", "replace").splitlines()
                found = initialized_name(line[5:] if line.startswith("data:") else line for line in lines)
                if found is not None or len(data) > 1 << 20:
                    answered.append((time.monotonic() - t0) * 1000)
                    return r.status_code, found
            return r.status_code, None

    try:
        status, name = asyncio.run(asyncio.wait_for(ask(), timeout))
    except (asyncio.TimeoutError, TimeoutError):
        return False, f"{shown}: no answer to initialize within {timeout:g}s"
    except httpx.HTTPError as exc:
        return False, f"{shown}: {shown_url(str(exc))}"
    except (ValueError, OSError) as exc:
        return False, f"{shown}: {exc}"
    if status == 401:
        return False, f"{shown} answered 401: the bearer token is missing or wrong"
    if status >= 400:
        return False, f"{shown} answered HTTP {status}"
    if name is None:
        return False, f"{shown}: no initialize answer"
    return True, f"{name} at {shown} answered initialize in {answered[0]:.0f} ms (request to answer)"


def registered(host: str, server: dict[str, Any], headers: dict[str, str], http_fix: str, stdio_fix: str) -> Check:
    """Whether the MCP server ``host`` registers as sjc answers: over HTTP at its ``url`` (with ``headers``),
    else started from its ``command``."""
    if server.get("url"):
        ok, detail = mcp_http_answers(str(server["url"]), headers)
        return Check(OK if ok else FAIL, host, f"MCP server sjc (HTTP): {detail}", None if ok else http_fix)
    args = server.get("args")
    env = server.get("env")
    ok, detail = mcp_answers(
        [str(server["command"]), *(str(a) for a in (args if isinstance(args, list) else []))],
        {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else None,
    )
    return Check(OK if ok else FAIL, host, f"MCP server sjc registered: {detail}", None if ok else stdio_fix)
