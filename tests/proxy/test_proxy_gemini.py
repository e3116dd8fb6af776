"""``sjc proxy`` on the Gemini API, run as a user runs it, between an HTTP client sending Gemini CLI's requests
and a fake Gemini API on 127.0.0.1: ``:generateContent`` (JSON), ``:streamGenerateContent?alt=sse`` (server-sent
events) and ``:streamGenerateContent`` (a JSON array)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from sjc_mcp.log import chain as decision_log
from tests.conftest import sjc_exe

pytestmark = pytest.mark.slow

COMPRESS = (
    "You are a specialized system component responsible for distilling chat history into a structured XML "
    "<state_snapshot>.\n\n### GOAL\nDistill the history."
)
OUTPUT = 'service = "stock-sync"\nqueue = "orders-eu-3"\nbatch_size = 64\n'
INVENTED = [
    "        - Email the supplier price list to every customer.",
    "        - Deploy stock-sync to production on Friday.",
]
SNAPSHOT = (
    "<state_snapshot>\n    <overall_goal>\n        Report which queue stock-sync consumes.\n    </overall_goal>\n\n"
    "    <key_knowledge>\n        - inventory.toml: queue orders-eu-3, batch_size 64 for stock-sync\n"
    f"{INVENTED[0]}\n    </key_knowledge>\n\n    <artifact_trail>\n        - No files were modified.\n"
    f"    </artifact_trail>\n\n    <task_state>\n{INVENTED[1]}\n    </task_state>\n</state_snapshot>"
)
PRUNED = "".join(ln for ln in SNAPSHOT.splitlines(keepends=True) if ln.rstrip("\n") not in INVENTED)
USAGE = {"promptTokenCount": 900, "candidatesTokenCount": 120, "totalTokenCount": 1020}


def history() -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "parts": [
                {"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
                {"text": "Which queue does stock-sync consume?"},
            ],
        },
        {
            "role": "model",
            "parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "inventory.toml"}}}],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": OUTPUT}}}],
        },
        {"role": "model", "parts": [{"text": "It consumes orders-eu-3."}]},
    ]


def compression(verify: bool = False) -> dict[str, Any]:
    tail = [{"role": "user", "parts": [{"text": "Generate a new <state_snapshot> based on the provided history."}]}]
    if verify:  # as Gemini CLI 0.61.0 sends it: answer 1 right after the history
        tail = [
            {"role": "model", "parts": [{"text": PRUNED}]},
            {"role": "user", "parts": [{"text": "Critically evaluate the <state_snapshot> you just generated."}]},
        ]
    return {
        "contents": history() + tail,
        "systemInstruction": {"role": "user", "parts": [{"text": COMPRESS}]},
        "generationConfig": {},
    }


def answer(text: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": USAGE,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r-1",
    }


def sse(text: str) -> bytes:
    chunks = [text[i : i + 50] for i in range(0, len(text), 50)]
    out = []
    for i, c in enumerate(chunks):
        obj: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": c}]}, "index": 0}],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r-2",
        }
        if i == len(chunks) - 1:
            obj["candidates"][0]["finishReason"] = "STOP"
            obj["usageMetadata"] = USAGE
        out.append(b"data: " + json.dumps(obj).encode() + b"\r\n\r\n")
    return b"".join(out)


class FakeGemini:
    """Answers every request with ``text`` in the shape its route asks for; keeps the bytes it sent."""

    def __init__(self) -> None:
        self.text = SNAPSHOT
        self.sent: list[bytes] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                if ":streamGenerateContent" in self.path and "alt=sse" in self.path:
                    body, ctype = sse(fake.text), "text/event-stream"
                elif ":streamGenerateContent" in self.path:
                    body, ctype = json.dumps([answer(fake.text)], indent=2).encode(), "application/json; charset=UTF-8"
                else:
                    body, ctype = json.dumps(answer(fake.text), indent=2).encode(), "application/json; charset=UTF-8"
                fake.sent.append(body)
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    def __init__(self, upstream: str, home: Path) -> None:
        self.home = home
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SJC_")}
        env["HOME"] = str(home)
        self.proc = subprocess.Popen(
            [sjc_exe(), "proxy", "--listen", f"127.0.0.1:{self.port}", "--upstream", upstream],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("proxy did not start")

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"http://127.0.0.1:{self.port}{path}", json=body, headers={"x-goog-api-key": "k"}, timeout=30)

    def records(self) -> list[dict[str, Any]]:
        path = self.home / ".local" / "state" / "sjc" / "decisions.jsonl"
        return [r for _, r, _ in decision_log.read(path)] if path.exists() else []

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


@pytest.fixture()
def setup(tmp_path: Path) -> Iterator[tuple[FakeGemini, Proxy]]:
    fake = FakeGemini()
    proxy = Proxy(fake.url, tmp_path)
    yield fake, proxy
    proxy.stop()
    fake.close()


GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


def text_of(obj: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in obj["candidates"][0]["content"]["parts"])


def sse_text(raw: bytes) -> str:
    return "".join(text_of(json.loads(b[6:])) for b in raw.split(b"\r\n\r\n") if b.startswith(b"data: "))


def test_both_passes_are_pruned(setup: tuple[FakeGemini, Proxy]) -> None:
    fake, proxy = setup
    for verify in (False, True):
        r = proxy.post(GENERATE, compression(verify))
        assert r.status_code == 200
        out = r.json()
        assert text_of(out) == PRUNED
        sent = json.loads(fake.sent[-1])
        sent["candidates"][0]["content"]["parts"][0]["text"] = PRUNED
        assert out == sent  # everything else as the upstream sent it
    first, second = [d for d in proxy.records() if d.get("status") == "judged"]
    assert first["host"] == second["host"] == "gemini" and first["pruned"] == second["pruned"] == 2
    assert "first pass" in first["recognised_by"] and "verification pass" in second["recognised_by"]
    assert first["boundary_id"] == second["boundary_id"]
    err = proxy.stop()
    assert err.count("gemini compaction") == 2 and "pruned 2 of 4 entries" in err


def test_a_streamed_compression_answer_is_pruned(setup: tuple[FakeGemini, Proxy]) -> None:
    fake, proxy = setup
    r = proxy.post(STREAM + "?alt=sse", compression())
    assert r.status_code == 200 and sse_text(r.content) == PRUNED
    kept = [e for e in fake.sent[-1].split(b"\r\n\r\n") if e and INVENTED[0].encode() not in e]
    assert sum(e in r.content for e in kept) >= len(kept) // 2  # events without the deleted text: the same bytes
    r = proxy.post(STREAM, compression())
    assert text_of(r.json()[0]) == PRUNED


def test_ordinary_requests_pass_byte_for_byte(setup: tuple[FakeGemini, Proxy]) -> None:
    """An ordinary turn, and the interactive UI's session-title request, which quotes the snapshot."""
    fake, proxy = setup
    fake.text = "Done. " + SNAPSHOT
    turn = {
        "contents": history(),
        "tools": [{"functionDeclarations": [{"name": "read_file"}]}],
        "systemInstruction": {"parts": [{"text": "You are an interactive CLI agent."}]},
    }
    r = proxy.post(STREAM + "?alt=sse", turn)
    assert r.content == fake.sent[-1]
    title = {
        "contents": [
            {"role": "user", "parts": [{"text": "Summarize the user's primary intent in ONE sentence.\n" + SNAPSHOT}]}
        ]
    }
    r = proxy.post("/v1beta/models/gemini-3.5-flash-lite:generateContent", title)
    assert r.content == fake.sent[-1]
    assert proxy.records() == []
