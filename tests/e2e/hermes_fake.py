"""A scripted OpenAI Chat Completions model on 127.0.0.1 for driving the real Hermes Agent offline.

Hermes 0.19.0 with ``model.provider: custom`` sends ``POST {base_url}/chat/completions`` (streamed for
the agent's turns, not streamed for its auxiliary calls) and probes the context length with a few GETs
(``/api/v1/models``, ``/v1/models/{model}``, ``/v1/models``) and ``POST /api/show``. The fake records
every request (body parsed, headers without credentials) and plays the model in a fixed session:

- Hermes' compaction request (one user message beginning ``COMPACTION_PROMPT``) -> ``summary(n)``, a
  summary in Hermes' own sections whose entries are partly backed by the tool output (``SUPPORTED``) and
  partly invented (``INVENTED_SETS[n % 2]`` for the n-th compaction), with ``None.`` in the empty sections;
- a request that offers no tools (a session title, another auxiliary call) -> a short text;
- a user prompt as the last message -> one ``terminal`` call running ``COMMAND``;
- a tool result as the last message -> a short text answer.

With ``vary`` each call runs ``echo check N; COMMAND`` (N: the user messages so far), so no two outputs are
the same: Hermes replaces all but the newest of identical tool outputs with a placeholder before it writes
its compaction prompt, and a summarizer can only state what that prompt shows it.

The tool-call answer to a request holding ``compact_at`` real user prompts after the newest compaction
summary (or from the start) reports ``big_usage`` prompt tokens, above Hermes' trigger for a 65536-token
window (64000), so Hermes compacts right after running that call (mid-turn) and then finishes the turn.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPACTION_PROMPT = "You are a summarization agent creating a context checkpoint"
# what Hermes 0.19.0 puts in front of every summary it keeps (agent/context_compressor.py SUMMARY_PREFIX)
NOTICE = "[CONTEXT COMPACTION — REFERENCE ONLY]"
END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"

SERVICE_LOG = (
    "service api-gateway 5.2.0 healthy: 212 requests served, p95 38 ms, config conf/gateway-5.2.0.yaml (2219 bytes)"
)
WORKSPACE = {"service.log": SERVICE_LOG + "\n", "ledger_2024.xlsx": "", "team_roster.md": "# Team\n"}
COMMAND = "cat service.log; ls"
PROMPTS = [
    "Check the gateway service and list the workspace.",
    "Check the gateway service again.",
    "Check the gateway a third time and list the files.",
    "Check the gateway once more.",
    "Check the gateway service for the last time.",
]

SUPPORTED = [
    "1. RUN `cat service.log; ls` — service.log reports api-gateway 5.2.0 healthy with 212 requests served"
    " [tool: terminal]",
    "- The workspace holds `ledger_2024.xlsx`, `service.log` and `team_roster.md`.",
    "- service.log — api-gateway 5.2.0, config `conf/gateway-5.2.0.yaml` (2219 bytes)",
    "- The gateway's p95 latency is 38 ms over 212 requests.",
]
# each compaction's summary: the same supported entries, another set of invented ones (set n % 2), in the
# sections (actions, decisions, remaining work) where a summarizer's own plans turn up
INVENTED_SETS = [
    {
        "actions": [
            "2. UPLOAD ledger_2024.xlsx to the shared drive — done [tool: send_message]",
            "3. RESTART api-gateway in production — succeeded [tool: terminal]",
        ],
        "decisions": ["- Move the team roster to the new HR system next quarter."],
        "remaining": ["- Archive the ledger before the audit.", "- Email the roster to every contractor."],
    },
    {
        "actions": [
            "2. DELETE the old snapshots on backup-nas-3 — removed 14 files [tool: terminal]",
            "3. NOTIFY the finance team about the ledger — sent [tool: send_message]",
        ],
        "decisions": ["- Switch the gateway to the blue cluster on Monday."],
        "remaining": ["- Book the load test with the vendor.", "- Rotate the gateway's signing key on Friday."],
    },
]


def invented(n: int) -> list[str]:
    s = INVENTED_SETS[n % len(INVENTED_SETS)]
    return [*s["actions"], *s["decisions"], *s["remaining"]]


def summary(n: int) -> str:
    """The n-th compaction's answer (0 = the first), in the sections Hermes 0.19.0 asks for."""
    s = INVENTED_SETS[n % len(INVENTED_SETS)]
    return "\n".join(
        [
            "## Historical Task Snapshot",
            f"User asked: '{PROMPTS[0]}'",
            "",
            "## Goal",
            "Check the gateway service and say what the workspace holds.",
            "",
            "## Constraints & Preferences",
            "None.",
            "",
            "## Completed Actions",
            SUPPORTED[0],
            *s["actions"],
            "",
            "## Active State",
            SUPPORTED[1],
            "",
            "## Historical In-Progress State",
            "None.",
            "",
            "## Blocked",
            "None.",
            "",
            "## Key Decisions",
            *s["decisions"],
            "",
            "## Resolved Questions",
            "None.",
            "",
            "## Historical Pending User Asks",
            "None.",
            "",
            "## Relevant Files",
            SUPPORTED[2],
            "",
            "## Historical Remaining Work",
            *s["remaining"],
            "",
            "## Critical Context",
            SUPPORTED[3],
            "",
        ]
    )


def without(text: str, lines: list[str]) -> str:
    """``text`` with exactly ``lines`` deleted and every other byte kept."""
    return "".join(ln for ln in text.splitlines(keepends=True) if ln.rstrip("\n") not in lines)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def is_compaction(body: dict[str, Any]) -> bool:
    ms = messages(body)
    return len(ms) == 1 and text_of(ms[0].get("content")).startswith(COMPACTION_PROMPT)


def prompts_since_summary(body: dict[str, Any]) -> int:
    n = 0
    for m in messages(body):
        t = text_of(m.get("content"))
        if NOTICE in t:
            n = 0
        elif m.get("role") == "user" and t.strip() and not t.lstrip().startswith("["):
            n += 1
    return n


def summary_message(body: dict[str, Any]) -> str | None:
    """The text of the message carrying Hermes' compaction summary, if the request holds one."""
    found = [text_of(m.get("content")) for m in messages(body) if NOTICE in text_of(m.get("content"))]
    return found[-1] if found else None


class FakeHermesModel:
    def __init__(
        self, compact_at: int = 3, big_usage: int = 65_000, context_length: int = 65_536, vary: bool = False
    ) -> None:
        self.compact_at = compact_at
        self.vary = vary
        self.big_usage = big_usage
        self.context_length = context_length
        self.requests: list[dict[str, Any]] = []
        self.compactions = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self, body: Any) -> None:
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("authorization", "api-key", "x-api-key", "cookie")
                }
                with fake._lock:
                    fake.requests.append(
                        {"method": self.command, "path": self.path.split("?")[0], "headers": headers, "body": body}
                    )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._record(None)
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    model = {"id": "fake-model", "object": "model", "context_length": fake.context_length}
                    self._send(200, {"object": "list", "data": [model]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                self._record(body)
                if not self.path.split("?")[0].endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                answer = fake.answer(body)
                if body.get("stream"):
                    self._stream(answer)
                else:
                    self._send(200, fake.completion(answer))

            def _stream(self, answer: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in fake.chunks(answer):
                    data = b"data: " + json.dumps(chunk).encode() + b"\n\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                data = b"data: [DONE]\n\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    # ---- the script ----------------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if is_compaction(body):
            with self._lock:
                n = self.compactions
                self.compactions += 1
            return {"text": summary(n), "tag": "compaction", "big": False}
        if not body.get("tools"):
            return {"text": "Gateway check", "tag": "no-tools", "big": False}
        last = next((m for m in reversed(messages(body)) if m.get("role") != "system"), {})
        if last.get("role") == "tool":
            return {"text": "The gateway is healthy; the listing is above.", "tag": "after-tool", "big": False}
        big = prompts_since_summary(body) >= self.compact_at
        command = COMMAND
        if self.vary:  # each call's output its own (Hermes replaces all but the newest of identical ones)
            command = f"echo check {sum(m.get('role') == 'user' for m in messages(body))}; {COMMAND}"
        return {"call": {"name": "terminal", "arguments": json.dumps({"command": command})}, "tag": "shell", "big": big}

    def _usage(self, big: bool) -> dict[str, int]:
        p = self.big_usage if big else 300
        return {"prompt_tokens": p, "completion_tokens": 40, "total_tokens": p + 40}

    def completion(self, a: dict[str, Any]) -> dict[str, Any]:
        if "call" in a:
            msg: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{next(self._ids)}", "type": "function", "function": a["call"]}],
            }
        else:
            msg = {"role": "assistant", "content": a["text"]}
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if "call" in a else "stop"}],
            "usage": self._usage(a["big"]),
        }

    def chunks(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        base = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "fake-model",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        if "call" in a:
            call = {"index": 0, "id": f"call_{next(self._ids)}", "type": "function", "function": a["call"]}
            out += [chunk({"tool_calls": [call]}), chunk({}, "tool_calls")]
        else:
            out += [chunk({"content": a["text"]}), chunk({}, "stop")]
        out.append({**base, "choices": [], "usage": self._usage(a["big"])})
        return out

    # ---- what was asked ------------------------------------------------------------------------------

    def posts(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["method"] == "POST" and r["path"].endswith("/chat/completions")]

    def compaction_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.posts() if is_compaction(r["body"])]

    def after_compaction(self, n: int) -> dict[str, Any] | None:
        """The first main-loop request (one that offers tools) after the n-th compaction request."""
        posts = self.posts()
        seen = -1
        for i, r in enumerate(posts):
            if is_compaction(r["body"]):
                seen += 1
                if seen == n:
                    return next((p for p in posts[i + 1 :] if p["body"].get("tools")), None)
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeHermesModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
