"""Loopback servers for the Claude Code plugin test: a scripted Anthropic Messages API that calls sjc's
``prune_summary`` once it is in the tool list, and a git smart-HTTP server (``git http-backend``) so the
CLI can clone a marketplace from a git URL without leaving the machine."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cc_fake import message, send_json, send_stream, text_of, usage

# what the scripted model hands to prune_summary: one entry the evidence supports, one it does not
SUPPORTED = "- config.yaml sets port: 8431 and db_host: db-7.internal for the ledger service"
INVENTED = "- Email the quarterly revenue report to all customers on the mailing list."
SUMMARY = f"## Key facts\n{SUPPORTED}\n\n## Pending tasks\n{INVENTED}\n"
EVIDENCE = [
    {"kind": "user_message", "content": "Which port and database host does the ledger service use?"},
    {"kind": "tool_output", "name": "Read", "content": "service: ledger\nport: 8431\ndb_host: db-7.internal\n"},
]
FINAL = "Done: pruned the summary."
# the name Claude Code gives an MCP tool of a plugin: mcp__plugin_<plugin>_<server>__<tool>
SJC_TOOL = re.compile(r"mcp__[A-Za-z0-9_-]*sjc[A-Za-z0-9_-]*__prune_summary")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def tool_calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool_use block the conversation so far holds (the model's earlier calls)."""
    out: list[dict[str, Any]] = []
    for m in body.get("messages") or []:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            out += [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    return out


class FakeMessages:
    """``/v1/messages`` on 127.0.0.1. With tools: find the sjc tool (``ToolSearch`` by name when it is
    listed as deferred, by keywords when its server is still connecting; the CLI's ``WaitForMcpServers``, at
    most 3 times, where that is offered), call the ``*__prune_summary`` tool whose name holds "sjc"
    once with SUMMARY and EVIDENCE, then answer FINAL. Without tools (side requests): a short text.
    A compaction request (the CLI's summarisation prompt) gets a short summary. Every request body is kept."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                send_json(self, 200, {})

            do_HEAD = do_GET

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    body = {}
                path = urlsplit(self.path).path
                if path.endswith("/count_tokens"):
                    return send_json(self, 200, {"input_tokens": 120})
                if not path.endswith("/messages"):
                    return send_json(
                        self, 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
                    )
                with fake._lock:
                    fake.requests.append(body)
                msg = message(str(body.get("model") or "claude-fake"), fake.answer(body), usage(120))
                if not body.get("stream"):
                    return send_json(self, 200, msg)
                send_stream(self, msg)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def main_requests(self) -> list[dict[str, Any]]:
        """The requests of the conversation itself (they carry tools), in order."""
        with self._lock:
            return [b for b in self.requests if b.get("tools")]

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        last_user = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), {})
        if "create a detailed summary" in text_of(last_user.get("content")):
            return [{"type": "text", "text": f"<summary>\n{SUMMARY}</summary>"}]
        names = tool_names(body)
        if not names:
            return [{"type": "text", "text": "Ledger session"}]
        calls = tool_calls(body)
        if any(str(c.get("name", "")).endswith("__prune_summary") for c in calls):
            return [{"type": "text", "text": FINAL}]
        target = next((n for n in names if SJC_TOOL.fullmatch(n)), None)
        if target is not None:
            return [tool_use(target, {"summary": SUMMARY, "evidence": EVIDENCE})]
        # MCP tools may be deferred: only named in a system message, their schemas loaded by ToolSearch; a
        # server still connecting is named as such, and a ToolSearch naming it waits for it. A tool still not
        # in the tool list after the search is not called.
        text = json.dumps(body)
        deferred = SJC_TOOL.search(text)
        searched = any(c.get("name") == "ToolSearch" for c in calls)
        if (deferred is not None or "still connecting" in text) and "ToolSearch" in names and not searched:
            query = f"select:{deferred.group(0)}" if deferred is not None else "sjc"
            return [tool_use("ToolSearch", {"query": query})]
        waits = sum(1 for c in calls if c.get("name") == "WaitForMcpServers")
        if "WaitForMcpServers" in names and waits < 3:
            return [tool_use("WaitForMcpServers", {})]
        return [{"type": "text", "text": "No sjc tool in the tool list."}]


def tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": name, "input": args}


class GitHttp:
    """Git's smart HTTP protocol for the bare repositories under ``root`` (``git http-backend`` run as a
    CGI per request), on 127.0.0.1: ``{url}/NAME.git`` clones ``root/NAME.git``, shallow clones included."""

    def __init__(self, root: Path, timeout: float = 30.0) -> None:
        self.hits: list[str] = []
        backend = _run_backend(root, timeout)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def _cgi(self) -> None:
                server.hits.append(f"{self.command} {self.path}")
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    body = _read_chunked(self.rfile)
                else:
                    body = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, headers, out = backend(self.command, self.path, dict(self.headers.items()), body)
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = _cgi
            do_POST = _cgi

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _read_chunked(rfile: Any) -> bytes:
    out = b""
    while True:
        size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            rfile.readline()
            return out
        out += rfile.read(size)
        rfile.readline()


def _run_backend(
    root: Path, timeout: float
) -> Callable[[str, str, dict[str, str], bytes], tuple[int, list[tuple[str, str]], bytes]]:
    def run(method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        parts = urlsplit(target)
        low = {k.lower(): v for k, v in headers.items()}
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "CONTENT_TYPE": low.get("content-type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": low.get("git-protocol", ""),
            "HTTP_CONTENT_ENCODING": low.get("content-encoding", ""),
        }
        r = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=timeout)
        head, _, out = r.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = r.stdout.partition(b"\n\n")
        status, hdrs = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                hdrs.append((k.strip(), v.strip()))
        if r.returncode != 0 and not r.stdout:
            return 500, [("content-type", "text/plain")], r.stderr
        return status, hdrs, out

    return run
