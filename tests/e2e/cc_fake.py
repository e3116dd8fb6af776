"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI offline.

The model it plays works through a small scenario (a build check, a config file) and, when Claude Code
asks for a compaction summary, writes the nine sections Claude Code asks for: some entries restate
what the session's tool outputs said (``SUPPORTED``, each written only if its source is in the request,
as a real summariser only restates what it was shown), others are plans nothing in the session supports
(``INVENTED``). sjc must remove or flag exactly the latter.

What it answers, per request:

- a compaction request (Claude Code's summary prompt): the summary, as text;
- a request without tools (titles and other side requests): a short text;
- an ordinary turn: the markers in the user's latest prompt are the tool calls to make, one per answer,
  in order (``[[bash CMD]]``, ``[[read PATH]]``, ``[[mcp TOOL]]``: an MCP tool called with the scenario's
  summary and evidence); then a text quoting the last tool result. The plan is kept per session, so a
  compaction in the middle of a turn (which summarises the prompt away) does not lose it. An MCP tool
  that is not in the request's tool list is first fetched with ``ToolSearch`` when Claude Code lists
  it as a deferred tool (2.1.332 defers MCP tools; ``select:NAME``), searched for by keywords when Claude
  Code says its server is still connecting (the server's name, or ``search_words``; 2.1.332's ``ToolSearch``
  then waits for the server), or waited for with ``WaitForMcpServers`` when that tool is offered (earlier
  versions). A tool still missing from the tool list after its search is not called: the model gives up.

Per session (Claude Code sends its id in ``x-claude-code-session-id``) a test can make the next answer
report a large ``usage.input_tokens`` (proactive auto-compaction) or the next requests fail with a 400
"prompt is too long" (reactive compaction). Every request is kept, with what was answered.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPACTION_PROMPT = "Your task is to create a detailed summary of the conversation so far"

CONFIG_YAML = "service: ledger-api\nport: 8431\ndb_host: db-7.internal\nmax_workers: 12\nretry_backoff_ms: 250\n"
FILES = {
    "config.yaml": CONFIG_YAML,
    "NOTES.txt": "Release checklist lives in docs/RELEASE.md\n",
    "app.py": "print(1)\n",
}
PROMPT_BUILD = "Check the build with a shell command and tell me if it is ok."
PROMPT_PORT = "Read config.yaml and tell me which port the service uses."

# (entry line as the summary writes it, what a tool result must contain for it to be written)
SUPPORTED = [
    ("   - config.yaml sets port: 8431, db_host: db-7.internal and max_workers: 12", "db_host: db-7.internal"),
    ("   - retry_backoff_ms is 250 in config.yaml for the ledger-api service", "retry_backoff_ms: 250"),
    ('   - The build check printed "build ok" and the listing shows NOTES.txt, app.py and config.yaml', "build ok"),
    ("   - The health check reported latency 37ms on shard quokka-3", "latency 37ms on shard quokka-3"),
]
INVENTED = [
    "   - Email the quarterly revenue report to all customers on the mailing list.",
    "   - Rotate the production payment gateway credentials before Friday's audit.",
    "   Deploy the ledger service to production with the new billing feature flag enabled.",
]
# a phrase of each invented entry, to look for in what reached the model
INVENTED_KEYS = [
    "Email the quarterly revenue report",
    "Rotate the production payment gateway",
    "Deploy the ledger service",
]
HEADINGS = [
    "1. Primary Request and Intent:",
    "2. Key Technical Concepts:",
    "3. Files and Code Sections:",
    "4. Errors and fixes:",
    "5. Problem Solving:",
    "6. All user messages:",
    "7. Pending Tasks:",
    "8. Current Work:",
    "9. Optional Next Step:",
]


def summary(seen: str | None = None) -> tuple[str, list[str]]:
    """The compaction answer and the supported entries in it: those whose source is in ``seen`` (the
    request's tool results; None: all)."""
    kept = [line if seen is None or need in seen else "" for line, need in SUPPORTED]
    body = [
        HEADINGS[0],
        "   The user asked whether the build is ok and which port the service in config.yaml uses.",
        "",
        HEADINGS[1],
        *([kept[1]] if kept[1] else []),
        "",
        HEADINGS[2],
        *([kept[0]] if kept[0] else []),
        "",
        HEADINGS[3],
        "   - No errors were encountered.",
        "",
        HEADINGS[4],
        *([kept[2]] if kept[2] else []),
        *([kept[3]] if kept[3] else []),
        "",
        HEADINGS[5],
        f'   - "{PROMPT_BUILD}"',
        f'   - "{PROMPT_PORT}"',
        "",
        HEADINGS[6],
        INVENTED[0],
        INVENTED[1],
        "",
        HEADINGS[7],
        "   Answering the user's latest question.",
        "",
        HEADINGS[8],
        INVENTED[2],
    ]
    text = (
        "<analysis>\nThe user asked for a build check and the service port; I ran the check and read the file.\n"
        "</analysis>\n\n<summary>\n" + "\n".join(body) + "\n</summary>"
    )
    return text, [k for k in kept if k]


def evidence() -> list[dict[str, str]]:
    """The scenario's sources as sjc-mcp evidence items."""
    return [
        {"kind": "user_message", "content": PROMPT_BUILD},
        {"kind": "tool_output", "name": "Bash", "content": "build ok\n" + "\n".join(sorted(FILES))},
        {"kind": "user_message", "content": PROMPT_PORT},
        {"kind": "tool_output", "name": "Read", "content": CONFIG_YAML},
        {"kind": "tool_output", "name": "Bash", "content": "healthcheck latency 37ms on shard quokka-3"},
    ]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif b.get("type") == "tool_result":
                parts.append(text_of(b.get("content")))
    return "\n".join(parts)


def request_text(body: dict[str, Any]) -> str:
    """Everything the model is shown: system prompt, every message, tool results."""
    return "\n".join([text_of(body.get("system")), *(text_of(m.get("content")) for m in body.get("messages") or [])])


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    out = {}
    for m in body.get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out[str(b.get("tool_use_id"))] = text_of(b.get("content"))
    return out


MARKER = re.compile(r"\[\[(bash|read|mcp) ([^\]]+)\]\]")


@dataclass
class Exchange:
    time: float
    session: str | None
    kind: str  # compaction | ordinary | side | too_long | count_tokens | other
    body: dict[str, Any]
    answer: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return request_text(self.body)


@dataclass
class _Session:
    prompts: set[str] = field(default_factory=set)
    plan: list[tuple[str, str]] = field(default_factory=list)
    issued: dict[str, int] = field(default_factory=dict)  # tool_use id -> index in the plan
    done: set[int] = field(default_factory=set)
    waits: int = 0
    searched: set[str] = field(default_factory=set)  # deferred tools whose schema was fetched
    input_tokens: list[int] = field(default_factory=list)
    too_long: int = 0


class FakeClaudeAPI:
    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.lock = threading.Lock()
        self.sessions: dict[str, _Session] = {}
        self.search_words: str | None = None  # what the model searches for a server still connecting
        self.mcp_input: dict[str, Any] | None = None  # what the model passes an MCP tool (default: the scenario's)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                send_json(self, 200, {})

            do_HEAD = do_GET

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                session = self.headers.get("x-claude-code-session-id")
                code, answer, ex = fake.answer(self.path.split("?")[0], body, session)
                with fake.lock:
                    fake.exchanges.append(ex)
                if code != 200 or not body.get("stream") or "content" not in answer:
                    return send_json(self, code, answer)
                send_stream(self, answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- what a test can ask for ------------------------------------------------------------------------
    def report_input_tokens(self, session: str, tokens: int) -> None:
        """The next ordinary answer in ``session`` reports ``tokens`` input tokens."""
        with self.lock:
            self.sessions.setdefault(session, _Session()).input_tokens.append(tokens)

    def fail_prompt_too_long(self, session: str, times: int = 1) -> None:
        """The next ``times`` ordinary requests in ``session`` get Anthropic's 400 "prompt is too long"."""
        with self.lock:
            self.sessions.setdefault(session, _Session()).too_long += times

    def requests(self, session: str) -> list[Exchange]:
        with self.lock:
            return [e for e in self.exchanges if e.session == session]

    # -- the model ----------------------------------------------------------------------------------------
    def answer(self, path: str, body: dict[str, Any], session: str | None) -> tuple[int, dict[str, Any], Exchange]:
        now = time.time()
        if path.endswith("/count_tokens"):
            return 200, {"input_tokens": 200}, Exchange(now, session, "count_tokens", body)
        if not path.endswith("/messages"):
            err = {"type": "error", "error": {"type": "not_found_error", "message": f"no {path} here"}}
            return 404, err, Exchange(now, session, "other", body)
        model = str(body.get("model") or "claude-fake")
        messages = body.get("messages") or []
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        if COMPACTION_PROMPT in text_of(last_user.get("content")) or COMPACTION_PROMPT in text_of(body.get("system")):
            with self.lock:
                _note_results(self.sessions.setdefault(session or "", _Session()), tool_results(body))
            text, supported = summary("\n".join(tool_results(body).values()))
            ex = Exchange(now, session, "compaction", body, {"text": text, "supported": supported})
            return 200, message(model, [{"type": "text", "text": text}], usage(300)), ex
        if not body.get("tools"):
            return (
                200,
                message(model, [{"type": "text", "text": "Ledger service check"}], usage(50)),
                Exchange(now, session, "side", body),
            )
        with self.lock:
            st = self.sessions.setdefault(session or "", _Session())
            if st.too_long > 0:
                st.too_long -= 1
                err = {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens > 200000"},
                }
                return 400, err, Exchange(now, session, "too_long", body)
            block = self._next_block(st, body)
            tokens = st.input_tokens.pop(0) if st.input_tokens else 300
        ex = Exchange(now, session, "ordinary", body, {"block": block, "input_tokens": tokens})
        return 200, message(model, [block], usage(tokens)), ex

    def _next_block(self, st: _Session, body: dict[str, Any]) -> dict[str, Any]:
        for m in body.get("messages") or []:  # a prompt never seen before starts a new plan
            text = text_of(m.get("content")) if m.get("role") == "user" else ""
            markers = MARKER.findall(text)
            if markers and text not in st.prompts:
                st.prompts.add(text)
                st.plan, st.issued, st.done, st.waits = [(k, a.strip()) for k, a in markers], {}, set(), 0
        results = tool_results(body)
        _note_results(st, results)
        pending = [i for i in range(len(st.plan)) if i not in st.done and i not in st.issued.values()]
        if not pending:
            last = next(reversed(results.values()), "") if results else ""
            return {"type": "text", "text": "Done. The tool said: " + last[:600]}
        kind, arg = st.plan[pending[0]]
        if kind == "bash":
            name, args = "Bash", {"command": arg, "description": "Run " + arg[:40]}
        elif kind == "read":
            name, args = "Read", {"file_path": arg}
        else:
            name, args = arg, self.mcp_input or {"summary": summary()[0], "evidence": evidence()}
            tools = {t.get("name") for t in body.get("tools") or []}
            if name not in tools:
                wait_id = "toolu_" + uuid.uuid4().hex[:24]
                shown = MARKER.sub("", request_text(body))  # what Claude Code says, not the plan's markers
                server = name.split("__")[1] if name.count("__") >= 2 else name
                connecting = "still connecting" in shown and server in shown
                if "ToolSearch" in tools and name not in st.searched and (name in shown or connecting):
                    # listed as a deferred tool: its schema by name; its server still connecting: a search by
                    # keywords (the server's name, as Claude Code's note names it), which waits for the server
                    st.searched.add(name)
                    query = f"select:{name}" if name in shown else (self.search_words or server)
                    return {"type": "tool_use", "id": wait_id, "name": "ToolSearch", "input": {"query": query}}
                if "WaitForMcpServers" in tools and st.waits < 5:  # its server is still connecting
                    st.waits += 1
                    return {"type": "tool_use", "id": wait_id, "name": "WaitForMcpServers", "input": {}}
                if name in st.searched:  # searched, and still not in the tool list: a model would not call it
                    return {"type": "text", "text": f"{name} is not available."}
        tid = "toolu_" + uuid.uuid4().hex[:24]
        st.issued[tid] = pending[0]
        return {"type": "tool_use", "id": tid, "name": name, "input": args}


def _note_results(st: _Session, results: dict[str, str]) -> None:
    """Plan steps whose result came back are done; a call that found its MCP server still connecting
    is made again."""
    for tid, i in list(st.issued.items()):
        if tid in results:
            if "still connecting" in results[tid]:
                del st.issued[tid]
            else:
                st.done.add(i)


def usage(input_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": 80,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def message(model: str, content: list[dict[str, Any]], use: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": use,
    }


def send_json(handler: BaseHTTPRequestHandler, code: int, obj: Any) -> None:
    """Answer ``handler``'s request with ``obj`` as JSON, as the Messages API does (with a request id)."""
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("content-type", "application/json")
    handler.send_header("request-id", "req_" + uuid.uuid4().hex[:16])
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def send_stream(handler: BaseHTTPRequestHandler, msg: dict[str, Any]) -> None:
    """Answer ``handler``'s request with ``msg`` streamed as server-sent events, chunked."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream; charset=utf-8")
    handler.send_header("request-id", "req_" + uuid.uuid4().hex[:16])
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    for name, data in events(msg):
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def events(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A message as the Messages API streams it (server-sent events, text in several deltas)."""
    start = {**msg, "content": [], "stop_reason": None, "usage": {**msg["usage"], "output_tokens": 1}}
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            head = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": b["text"][k : k + 300]} for k in range(0, len(b["text"]), 300)]
        else:
            head = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            js = json.dumps(b["input"])
            deltas = [{"type": "input_json_delta", "partial_json": js[k : k + 500]} for k in range(0, len(js), 500)]
        out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": head}))
        out += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta = {"stop_reason": msg["stop_reason"], "stop_sequence": None}
    out.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 80}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out
