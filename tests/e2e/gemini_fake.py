"""A scripted Gemini API (``generativelanguage`` v1beta) on 127.0.0.1, for driving the real Gemini CLI offline.

Routes: ``POST …/models/M:streamGenerateContent?alt=sse`` (SSE: the main loop), ``…:generateContent`` (JSON:
compression and side requests), ``…:countTokens``; any GET is ``200 {}``. It plays the model in a short,
fixed session, decided from each request alone, and records every request (``x-goog-api-key`` replaced by
whether it was there):

- Gemini CLI's compression request (its system instruction ``COMPRESS_SYSTEM``): the first pass (last user
  text "Generate a new <state_snapshot>…" or "A previous <state_snapshot> exists…") gets a ``<scratchpad>``
  then the ``<state_snapshot>``; the verification pass (last user text "Critically evaluate the
  <state_snapshot>…") gets the snapshot alone, the invented entries included whatever answer 1 it was
  shown (the worst case: a model that puts them back). Entries in ``SUPPORTED`` restate what a tool
  printed, each written only if its source is in the request (a summariser restates only what it was
  shown); those in ``INVENTED`` are plans nothing in the session supports; ``PLACEHOLDERS`` are what a
  model writes for an empty section.
- A JSON-mode side request (``generationConfig.responseMimeType`` ``application/json``): an object filled
  from its schema. Any other request without tools (the interactive UI's session-title request, which
  quotes the whole conversation): a short text.
- An ordinary turn: the markers in the latest user prompt are the tool calls to make, in order, one per
  model turn (``[[shell CMD]]`` -> ``run_shell_command``, ``[[read PATH]]`` -> ``read_file``,
  ``[[mcp TOOL canned]]`` -> the declared tool ending in ``TOOL`` with ``SNAPSHOT`` and the scenario's
  evidence, ``[[mcp TOOL transcript=PATH]]`` -> the same tool with ``transcript_path``); then a text
  answer quoting the last tool result.

Every ordinary answer reports ``usageMetadata.promptTokenCount`` = a quarter of the request's size, except
the next ``big_next`` ones, which report ``BIG_PROMPT`` tokens: over half of the 1,048,576-token window
Gemini CLI 0.61.0 gives every Gemini model, so its next ``sendMessageStream`` compresses first.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPRESS_SYSTEM = (
    "You are a specialized system component responsible for distilling chat history into a structured XML "
    "<state_snapshot>."
)
FIRST_PROMPTS = ("Generate a new <state_snapshot>", "A previous <state_snapshot> exists")
VERIFY_PROMPT = "Critically evaluate the <state_snapshot>"
# what Gemini CLI 0.61.0 puts after the snapshot in the new history (a model turn)
ACK = "Got it. Thanks for the additional context!"
BIG_PROMPT = 900_000

INVENTORY_TOML = 'service = "stock-sync"\nlisten_port = 7319\nqueue = "orders-eu-3"\nbatch_size = 64\n'
CHANGELOG = "0.9.4: retry on 503 from the catalogue feed\n"
FILES = {"inventory.toml": INVENTORY_TOML, "CHANGELOG.md": CHANGELOG, "main.py": "print('stock-sync')\n"}

SMOKE = (
    "printf 'smoke %s: %d of %d\\n' passed 17 17; ls"  # prints "smoke passed: 17 of 17", which the prompt does not hold
)
PROMPT_SMOKE = f"Run the smoke test with a shell command and tell me whether it passes. [[shell {SMOKE}]]"
PROMPT_QUEUE = "Read inventory.toml and tell me which queue the service consumes. [[read inventory.toml]]"
PROMPT_CHANGELOG = "Now read the changelog. [[read CHANGELOG.md]]"
PROMPT_LAST = "What is left to do? [[shell cat main.py]]"

# (entry line as the snapshot writes it, what a function response must hold for it to be written)
SUPPORTED = [
    ("        - inventory.toml sets listen_port = 7319, queue orders-eu-3 and batch_size = 64", "orders-eu-3"),
    (
        '        - The smoke test printed "smoke passed: 17 of 17"; the folder holds CHANGELOG.md, inventory.toml and'
        " main.py",
        "smoke passed: 17 of 17",
    ),
    ('        - read_file inventory.toml: service = "stock-sync", listen_port = 7319', "listen_port = 7319"),
]
INVENTED = [
    "        - Email the supplier price list to every customer on the newsletter.",
    "        - Rotate the warehouse database password before the Monday audit.",
    "        3. [TODO] Deploy stock-sync to production with the new pricing flag turned on.",
]
# a phrase of each invented entry, to look for anywhere (requests, hook payloads, chat files)
INVENTED_KEYS = ["Email the supplier price list", "Rotate the warehouse database", "Deploy stock-sync to production"]
PLACEHOLDERS = ["        - None.", "        - No files were modified."]
TAGS = [
    "overall_goal",
    "active_constraints",
    "key_knowledge",
    "artifact_trail",
    "file_system_state",
    "recent_actions",
    "task_state",
]


def snapshot(seen: str | None = None) -> tuple[str, list[str]]:
    """The ``<state_snapshot>`` and the supported entries in it: those whose source is in ``seen`` (the
    function responses of the request; None: all of them)."""
    sup = [e for e, need in SUPPORTED if seen is None or need in seen]

    def lines(*xs: str) -> str:
        return "".join(x + "\n" for x in xs)

    text = (
        "<state_snapshot>\n"
        "    <overall_goal>\n"
        "        Run the stock-sync smoke test and report which queue the service in inventory.toml consumes.\n"
        "    </overall_goal>\n\n"
        f"    <active_constraints>\n{lines(PLACEHOLDERS[0])}    </active_constraints>\n\n"
        f"    <key_knowledge>\n{lines(*[e for e in sup if 'inventory.toml sets' in e], INVENTED[0])}"
        "    </key_knowledge>\n\n"
        f"    <artifact_trail>\n{lines(PLACEHOLDERS[1])}    </artifact_trail>\n\n"
        f"    <file_system_state>\n{lines(*[e for e in sup if 'smoke test' in e])}    </file_system_state>\n\n"
        f"    <recent_actions>\n{lines(*[e for e in sup if 'read_file' in e], INVENTED[1])}    </recent_actions>\n\n"
        f"    <task_state>\n{lines(INVENTED[2])}    </task_state>\n"
        "</state_snapshot>"
    )
    return text, sup


SNAPSHOT, _ = snapshot()
SCRATCHPAD = (
    "<scratchpad>\nThe user asked for a smoke test and for the queue. I ran the test and read inventory.toml.\n"
    "</scratchpad>\n\n"
)


def pruned(text: str, invented: list[str] = INVENTED) -> str:
    """``text`` with exactly the ``invented`` lines deleted and every other byte kept."""
    return "".join(ln for ln in text.splitlines(keepends=True) if ln.rstrip("\n") not in invented)


def evidence_items() -> list[dict[str, str]]:
    """What the scenario's first two turns said, as sjc-mcp evidence items (for an inline MCP call)."""
    return [
        {"kind": "user_message", "content": PROMPT_SMOKE},
        {
            "kind": "tool_output",
            "name": "run_shell_command",
            "content": "smoke passed: 17 of 17\n" + "\n".join(sorted(FILES, key=str.lower)),
        },
        {"kind": "user_message", "content": PROMPT_QUEUE},
        {"kind": "tool_output", "name": "read_file", "content": INVENTORY_TOML},
    ]


# ---- reading a request -----------------------------------------------------------------------------------


def parts_text(content: Any) -> str:
    """The text of a content's non-thought text parts, joined (what Gemini CLI's getResponseText reads)."""
    parts = content.get("parts") if isinstance(content, dict) else None
    return "".join(
        p["text"]
        for p in parts or []
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def system_text(body: dict[str, Any]) -> str:
    si = body.get("systemInstruction") or body.get("system_instruction")
    return si if isinstance(si, str) else parts_text(si)


def has_part(content: dict[str, Any], key: str) -> bool:
    return any(isinstance(p, dict) and key in p for p in content.get("parts") or [])


def contents(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body.get("contents") or [] if isinstance(c, dict)]


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for c in contents(body)
        for p in c.get("parts") or []
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def last_user_text(body: dict[str, Any]) -> str:
    for c in reversed(contents(body)):
        if c.get("role") == "user" and not has_part(c, "functionResponse"):
            return parts_text(c)
    return ""


def compression_pass(body: dict[str, Any]) -> str | None:
    """``"first"``, ``"verify"`` or None (not a compression request)."""
    if not system_text(body).startswith(COMPRESS_SYSTEM):
        return None
    return "verify" if last_user_text(body).lstrip().startswith(VERIFY_PROMPT) else "first"


def tool_names(body: dict[str, Any]) -> list[str]:
    return [
        fd["name"]
        for t in body.get("tools") or []
        if isinstance(t, dict)
        for fd in t.get("functionDeclarations") or []
        if isinstance(fd, dict) and fd.get("name")
    ]


def invented_in(text: str) -> list[str]:
    return [k for k in INVENTED_KEYS if k in text]


def _json_answer(body: dict[str, Any]) -> dict[str, Any]:
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema") or {}
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        typ = str((prop or {}).get("type", "string")).lower()
        if name == "next_speaker":
            out[name] = "user"
        elif (prop or {}).get("enum"):
            out[name] = prop["enum"][0]
        else:
            out[name] = {"boolean": False, "number": 0, "integer": 0, "array": [], "object": {}}.get(typ, "fake")
    return out


MARKER = re.compile(r"\[\[(shell|read|mcp) ([^\]]+)\]\]")


def plan(body: dict[str, Any]) -> dict[str, Any]:
    """What to answer: ``{"tag", "text"}`` or ``{"tag", "call": {"name", "args"}}`` (+ ``"supported"``)."""
    kind = compression_pass(body)
    if kind is not None:
        seen = "\n".join(json.dumps(fr.get("response"), ensure_ascii=False) for fr in function_responses(body))
        snap, sup = snapshot(seen)
        return {"tag": "compression-" + kind, "text": snap if kind == "verify" else SCRATCHPAD + snap, "supported": sup}
    if (body.get("generationConfig") or {}).get("responseMimeType") == "application/json":
        return {"tag": "json-side", "text": json.dumps(_json_answer(body))}
    if not tool_names(body):
        return {"tag": "side", "text": "Stock-sync smoke test and queue"}
    cs = contents(body)
    start = next(
        (
            i
            for i in range(len(cs) - 1, -1, -1)
            if cs[i].get("role") == "user"
            and not has_part(cs[i], "functionResponse")
            and MARKER.search(parts_text(cs[i]))
        ),
        None,
    )
    if start is not None:
        markers = MARKER.findall(parts_text(cs[start]))
        done = sum(1 for c in cs[start + 1 :] if c.get("role") == "model" and has_part(c, "functionCall"))
        if done < len(markers):
            what, arg = markers[done]
            arg = arg.strip()
            if what == "shell":
                return {
                    "tag": "shell",
                    "call": {"name": "run_shell_command", "args": {"command": arg, "description": "Run " + arg[:40]}},
                }
            if what == "read":
                return {"tag": "read", "call": {"name": "read_file", "args": {"file_path": arg}}}
            tool, _, rest = arg.partition(" ")
            tool = next((n for n in tool_names(body) if n == tool or n.endswith(tool)), tool)
            rest = rest.strip()
            args: dict[str, Any] = (
                {"transcript_path": rest[len("transcript=") :]}
                if rest.startswith("transcript=")
                else {"summary": SNAPSHOT, "evidence": evidence_items(), "host": "gemini"}
            )
            return {"tag": "mcp", "call": {"name": tool, "args": args}}
    last = cs[-1] if cs else {}
    if has_part(last, "functionResponse"):
        said = json.dumps([fr.get("response") for fr in function_responses({"contents": [last]})], ensure_ascii=False)
        return {"tag": "after-tool", "text": "Done. The tool said: " + said[:300]}
    return {"tag": "text", "text": "Done: " + parts_text(last)[:120]}


# ---- answering -------------------------------------------------------------------------------------------


def answer_json(p: dict[str, Any], model: str, prompt_tokens: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": p["text"]}] if "text" in p else [{"functionCall": p["call"]}]
    out_tokens = max(1, len(json.dumps(parts)) // 4)
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": out_tokens,
            "totalTokenCount": prompt_tokens + out_tokens,
        },
        "modelVersion": model,
        "responseId": "fake-" + uuid.uuid4().hex[:16],
    }


def sse_chunks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A streamed answer: a text in pieces of 40 characters (usage and finish reason on the last), a call whole."""
    cand = msg["candidates"][0]
    part = cand["content"]["parts"][0]
    if "text" not in part:
        return [msg]
    base = {k: v for k, v in msg.items() if k not in ("candidates", "usageMetadata")}
    text = part["text"]
    pieces = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
    out = []
    for i, piece in enumerate(pieces):
        c: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [c], **base}
        if i == len(pieces) - 1:
            c["finishReason"] = cand["finishReason"]
            chunk["usageMetadata"] = msg["usageMetadata"]
        out.append(chunk)
    return out


class FakeGemini:
    """``with FakeGemini() as fake:`` serves on ``fake.base_url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        #: how many of the next ordinary answers report BIG_PROMPT prompt tokens
        self.big_next = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _headers(self) -> dict[str, str]:
                skip = ("x-goog-api-key", "authorization", "cookie")
                return {k.lower(): v for k, v in self.headers.items() if k.lower() not in skip}

            def _send(self, status: int, data: bytes, ctype: str = "application/json; charset=UTF-8") -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                fake._record({"method": "GET", "path": self.path, "headers": self._headers(), "body": None})
                self._send(200, b"{}")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw[:2000].decode("utf-8", "replace")}
                rec: dict[str, Any] = {
                    "method": "POST",
                    "path": self.path,
                    "headers": self._headers(),
                    "body": body,
                    "key": bool(self.headers.get("x-goog-api-key")),
                }
                path, _, query = self.path.partition("?")
                m = re.search(r"/models/([^/:]+):(\w+)$", path)
                if not m or m.group(2) not in ("generateContent", "streamGenerateContent", "countTokens"):
                    fake._record(rec)
                    self._send(404, b'{"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}')
                    return
                model, method = m.groups()
                if method == "countTokens":
                    fake._record(rec)
                    self._send(200, json.dumps({"totalTokens": max(1, len(raw) // 4)}).encode())
                    return
                p = plan(body)
                tokens = max(1, len(raw) // 4)
                if p["tag"] in ("shell", "read", "mcp", "after-tool", "text"):
                    with fake._lock:
                        if fake.big_next > 0:
                            fake.big_next -= 1
                            tokens = BIG_PROMPT
                rec["answer"] = {**p, "prompt_tokens": tokens}
                fake._record(rec)
                msg = answer_json(p, model, tokens)
                if method == "generateContent":
                    self._send(200, json.dumps(msg).encode())
                    return
                chunks = sse_chunks(msg)
                if "alt=sse" not in query:
                    self._send(200, json.dumps(chunks).encode())
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for ch in chunks:
                    data = f"data: {json.dumps(ch, ensure_ascii=False)}\r\n\r\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGemini:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _record(self, rec: dict[str, Any]) -> None:
        with self._lock:
            rec["t"] = time.time()
            self.requests.append(rec)

    # ---- reading the log -------------------------------------------------------------------------------

    def answered(self) -> list[dict[str, Any]]:
        """The generateContent / streamGenerateContent requests, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.get("answer")]

    def tags(self) -> list[str]:
        return [r["answer"]["tag"] for r in self.answered()]

    def compressions(self) -> list[dict[str, Any]]:
        """One ``{"first", "verify", "next"}`` per compression, oldest first: its two passes and the next
        main-loop (streamed) request."""
        rs = self.answered()
        out: list[dict[str, Any]] = []
        for i, r in enumerate(rs):
            if r["answer"]["tag"] != "compression-first":
                continue
            c: dict[str, Any] = {"first": r, "verify": None, "next": None}
            for r2 in rs[i + 1 :]:
                tag = r2["answer"]["tag"]
                if tag == "compression-verify" and c["verify"] is None:
                    c["verify"] = r2
                elif tag == "compression-first":
                    break
                elif ":streamGenerateContent" in r2["path"]:
                    c["next"] = r2
                    break
            out.append(c)
        return out
