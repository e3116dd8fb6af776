"""A scripted OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI offline.

It plays the model in a short, fixed session and records every request (body parsed, headers
without ``Authorization``):

- Codex's compaction request (its ``CONTEXT CHECKPOINT COMPACTION`` prompt as the last user
  message) -> a handoff summary with entries backed by the tool output (``SUPPORTED``) and plans
  nothing in the session supports (the n-th compaction: ``INVENTED_SETS[n % 3]``);
- a ``{"type": "compaction_trigger"}`` item (server-side compaction, OpenAI's own provider) -> an
  opaque ``compaction`` item, as the real service answers;
- a user prompt holding ``MCP_TRIGGER`` -> a call of the MCP tool ``prune_summary`` (found in the
  request's tools, inside Codex's ``namespace`` tool) with ``SUMMARY`` and the session's evidence, or
  with the ``transcript_path=PATH`` the prompt names;
- a user prompt holding ``CHECK_WORD`` -> a shell call running ``COMMAND`` (whichever shell tool is
  offered); any other prompt -> a short text answer;
- a tool output -> a short text answer.

Until a compaction summary is in the history (or always, with ``always_big``), every answer reports
``big_usage`` input tokens, far above the ``model_auto_compact_token_limit`` of the test config, so
Codex compacts.
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPACTION_PROMPT = "CONTEXT CHECKPOINT COMPACTION"
# Codex 0.171.0 stores a compaction as this prefix + "\n" + the model's summary, and sends it back
# to the model as a user message at the start of the new history.
HANDOFF_PREFIX = "Another language model started to solve this problem"
MCP_TRIGGER = "SJC-MCP-CHECK"

RELEASE_NOTE = (
    "release 3.7.2: 128 checks passed; bundle out/web-3.7.2.zip (52110 bytes); "
    "migration 0042_add_invoices applied on db-staging-2"
)
WORKSPACE = {"release.txt": RELEASE_NOTE + "\n", "customers.csv": "id,name\n", "notes_march.md": "# March\n"}
COMMAND = "cat release.txt; ls"
COMMAND_OUTPUT = RELEASE_NOTE + "\ncustomers.csv\nnotes_march.md\nrelease.txt\n"
CHECK_WORD = "Check"  # a prompt with this word gets a shell call; any other prompt a text answer
PROMPT = "Check the release and list the workspace."

SUPPORTED = [
    "- `cat release.txt` reported release 3.7.2 with 128 checks passed and the bundle `out/web-3.7.2.zip`"
    " (52110 bytes).",
    "- Migration `0042_add_invoices` is applied on `db-staging-2`; `ls` lists `customers.csv`,"
    " `notes_march.md` and `release.txt`.",
]
# each compaction's summary: the same supported entries, a new set of invented ones (set n % 3)
INVENTED_SETS = [
    [
        "- Email the quarterly figures to all shareholders.",
        "- Deploy to production on Friday.",
        "- Rotate the payroll service password and notify the finance team.",
    ],
    [
        "- Archive the legal team's mailbox before the audit.",
        "- Book a meeting with the vendor about pricing.",
        "- Delete the old backups on the NAS next week.",
    ],
    [
        "- Ask the design team for new icons.",
        "- Move the wiki to a new hosting provider.",
        "- Send the onboarding survey to every new hire.",
    ],
]
INVENTED = INVENTED_SETS[0]


def summary(invented: list[str]) -> str:
    return "## Progress\n" + "\n".join(SUPPORTED) + "\n\n## Next steps\n" + "\n".join(invented) + "\n"


SUMMARY = summary(INVENTED)


def pruned(text: str, invented: list[str]) -> str:
    """``text`` with exactly the ``invented`` lines deleted and every other byte kept."""
    return "".join(ln for ln in text.splitlines(keepends=True) if ln.rstrip("\n") not in invented)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def messages(body: dict[str, Any], role: str) -> list[str]:
    return [
        text_of(i.get("content"))
        for i in body.get("input") or []
        if isinstance(i, dict) and i.get("type", "message") == "message" and i.get("role") == role
    ]


def tools(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(name, namespace) of every tool offered; Codex offers an MCP server's tools inside one
    ``{"type": "namespace", "name": "mcp__<server>", "tools": [...]}``."""
    out: list[tuple[str, str | None]] = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            out += [(s.get("name", ""), t.get("name")) for s in t.get("tools") or [] if isinstance(s, dict)]
        elif t.get("name"):
            out.append((t["name"], None))
    return out


def turn_metadata(headers: dict[str, str]) -> dict[str, Any]:
    try:
        meta = json.loads(headers.get("x-codex-turn-metadata", "{}"))
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


class FakeModel:
    """``with FakeModel() as fake:`` serves on ``fake.base_url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, big_usage: int = 60_000, always_big: bool = False) -> None:
        self.big_usage = big_usage
        #: report ``big_usage`` after a compaction too, so the next ``codex exec resume`` compacts before its turn
        self.always_big = always_big
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._compactions = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                fake._record({"method": "GET", "path": self.path, "headers": self._headers(), "body": {}})
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._send(200, b'{"object": "list", "data": [], "models": []}', "application/json")
                else:
                    self._send(404, b'{"error": {"message": "not found"}}', "application/json")

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items() if k.lower() not in ("authorization", "cookie")}

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw[:2000].decode("utf-8", "replace")}
                rec = {"method": "POST", "path": self.path, "headers": self._headers(), "body": body}
                if not self.path.split("?")[0].endswith("/responses"):
                    fake._record(rec)
                    self._send(404, b'{"error": {"message": "not found"}}', "application/json")
                    return
                answer = fake.plan(body)
                rec["answer"] = answer
                fake._record(rec)
                events = fake.events(answer, body.get("model") or "fake-model")
                if body.get("stream", True):
                    self._send(200, b"".join(events), "text/event-stream")
                else:
                    last = json.loads(events[-1].decode().split("data: ", 1)[1])
                    self._send(200, json.dumps(last["response"]).encode(), "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _record(self, rec: dict[str, Any]) -> None:
        with self._lock:
            rec["t"] = time.time()
            self.requests.append(rec)

    # ---- the script ------------------------------------------------------------------------------

    def plan(self, body: dict[str, Any]) -> dict[str, Any]:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        users = messages(body, "user")
        small = not self.always_big and any(HANDOFF_PREFIX in u for u in users)
        if items and items[-1].get("type") == "compaction_trigger":
            return {"tag": "server-compaction", "kind": "compaction", "small": True}
        if users and COMPACTION_PROMPT in users[-1]:
            with self._lock:
                invented = INVENTED_SETS[self._compactions % len(INVENTED_SETS)]
                self._compactions += 1
            return {"tag": "compaction", "kind": "text", "text": summary(invented), "invented": invented, "small": True}
        # the newest item the model would answer: not reasoning, not a developer/system note
        last = next(
            (
                i
                for i in reversed(items)
                if i.get("type") != "reasoning" and i.get("role") not in ("developer", "system")
            ),
            {},
        )
        if str(last.get("type", "")).endswith("_output"):
            return {"tag": "after-tool", "kind": "text", "text": "The release check is done.", "small": small}
        if last.get("type", "message") == "message" and last.get("role") == "user":
            text = text_of(last.get("content"))
            if text.lstrip().startswith(HANDOFF_PREFIX):
                return {"tag": "after-summary", "kind": "text", "text": "Continuing from the summary.", "small": small}
            offered = tools(body)
            if CHECK_WORD not in text and MCP_TRIGGER not in text:
                return {"tag": "text", "kind": "text", "text": "Nothing is left to do.", "small": small}
            if MCP_TRIGGER in text:
                found = next(((n, ns) for n, ns in offered if n.endswith("prune_summary")), None)
                if found is None:
                    return {"tag": "mcp-missing", "kind": "text", "text": "No sjc tools.", "small": small}
                path = text.split("transcript_path=", 1)[1].split()[0] if "transcript_path=" in text else None
                args: dict[str, Any] = (
                    {"transcript_path": path}
                    if path
                    else {
                        "summary": SUMMARY,
                        "evidence": [
                            {"kind": "tool_output", "name": "exec_command", "content": COMMAND_OUTPUT},
                            {"kind": "user_message", "content": PROMPT},
                        ],
                        "host": "codex",
                    }
                )
                return {
                    "tag": "mcp-call",
                    "kind": "call",
                    "name": found[0],
                    "namespace": found[1],
                    "args": args,
                    "small": small,
                }
            names = {n for n, ns in offered if ns is None}
            if "exec_command" in names:
                return {
                    "tag": "shell",
                    "kind": "call",
                    "name": "exec_command",
                    "args": {"cmd": COMMAND},
                    "small": small,
                }
            if "shell_command" in names:
                return {
                    "tag": "shell",
                    "kind": "call",
                    "name": "shell_command",
                    "args": {"command": COMMAND},
                    "small": small,
                }
            if "shell" in names:
                return {
                    "tag": "shell",
                    "kind": "call",
                    "name": "shell",
                    "args": {"command": ["bash", "-lc", COMMAND]},
                    "small": small,
                }
            return {"tag": "no-shell", "kind": "text", "text": "No shell tool was offered.", "small": small}
        return {"tag": "other", "kind": "text", "text": "ok", "small": small}

    def events(self, answer: dict[str, Any], model: str) -> list[bytes]:
        rid = f"resp_{next(self._ids):04d}"
        seq = itertools.count()
        out: list[bytes] = []

        def emit(obj: dict[str, Any]) -> None:
            obj["sequence_number"] = next(seq)
            out.append(f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode())

        base = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "in_progress",
            "output": [],
        }
        emit({"type": "response.created", "response": dict(base)})
        emit({"type": "response.in_progress", "response": dict(base)})
        iid = f"item_{next(self._ids):04d}"
        if answer["kind"] == "text":
            text = answer["text"]
            emit(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {"id": iid, "type": "message", "role": "assistant", "status": "in_progress", "content": []},
                }
            )
            emit(
                {
                    "type": "response.content_part.added",
                    "item_id": iid,
                    "output_index": 0,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
            for line in text.splitlines(keepends=True) or [text]:  # streamed in pieces, like a model
                emit(
                    {
                        "type": "response.output_text.delta",
                        "item_id": iid,
                        "output_index": 0,
                        "content_index": 0,
                        "delta": line,
                    }
                )
            emit(
                {
                    "type": "response.output_text.done",
                    "item_id": iid,
                    "output_index": 0,
                    "content_index": 0,
                    "text": text,
                }
            )
            part = {"type": "output_text", "text": text, "annotations": []}
            emit(
                {
                    "type": "response.content_part.done",
                    "item_id": iid,
                    "output_index": 0,
                    "content_index": 0,
                    "part": part,
                }
            )
            item: dict[str, Any] = {
                "id": iid,
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
        elif answer["kind"] == "compaction":
            item = {"id": iid, "type": "compaction", "encrypted_content": "gAAAA-opaque-server-side-summary"}
            emit({"type": "response.output_item.added", "output_index": 0, "item": item})
        else:
            args = json.dumps(answer["args"])
            item = {
                "id": iid,
                "type": "function_call",
                "status": "in_progress",
                "name": answer["name"],
                "call_id": f"call_{next(self._ids):04d}",
                "arguments": "",
            }
            if answer.get("namespace"):
                item["namespace"] = answer["namespace"]
            emit({"type": "response.output_item.added", "output_index": 0, "item": item})
            emit({"type": "response.function_call_arguments.delta", "item_id": iid, "output_index": 0, "delta": args})
            emit(
                {"type": "response.function_call_arguments.done", "item_id": iid, "output_index": 0, "arguments": args}
            )
            item = {**item, "status": "completed", "arguments": args}
        emit({"type": "response.output_item.done", "output_index": 0, "item": item})
        n = 300 if answer["small"] else self.big_usage
        usage = {
            "input_tokens": n,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": n + 40,
        }
        emit(
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            }
        )
        return out

    # ---- reading the log -------------------------------------------------------------------------

    def responses(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("answer")]

    def tags(self) -> list[str]:
        return [r["answer"]["tag"] for r in self.responses()]

    def compactions(self) -> list[tuple[int, dict[str, Any]]]:
        """(index among ``responses()``, request) of every compaction request, oldest first."""
        return [(i, r) for i, r in enumerate(self.responses()) if r["answer"]["tag"] == "compaction"]
