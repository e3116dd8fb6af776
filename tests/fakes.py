"""Real HTTP servers on 127.0.0.1 that answer as the judge APIs do, and misbehave on request.

``FakeAPI(kind)`` serves one wire format: ``systemone`` (Jev), ``chat`` (OpenAI chat completions)
or ``messages`` (Anthropic). Each request takes the next behaviour from ``behaviours`` (then "ok"):
ok, slow, 429, 500, malformed, missing, nan, range, partial, nologprobs, badjson, 401.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INVENTED = ("Publish", "Email", "force-push", "twice as fast", "blog post")


def verdict(text: str) -> float:
    return 0.05 if any(w in text for w in INVENTED) else 0.95


def _entries(state: dict[str, Any]) -> dict[str, str]:
    return {e["key"]: e["text"] for e in [*state.get("entries", []), *state.get("results", [])]}


def _state_of(prompt: str) -> dict[str, Any]:
    return json.JSONDecoder().raw_decode(prompt)[0]


class FakeAPI:
    def __init__(self, kind: str, model: str = "fake-model-7") -> None:
        self.kind = kind
        self.model = model
        self.behaviours: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: bytes | str, headers: dict[str, str] | None = None) -> None:
                raw = body.encode() if isinstance(body, str) else body
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    behaviour = fake.behaviours.pop(0) if fake.behaviours else "ok"
                if behaviour == "slow":
                    time.sleep(3)
                if behaviour == "429":
                    return self._send(429, '{"error": "rate limited"}', {"retry-after": "0.3"})
                if behaviour == "500":
                    return self._send(500, '{"error": "boom"}')
                if behaviour == "401":
                    return self._send(401, '{"error": "bad key"}')
                if behaviour == "malformed":
                    return self._send(200, "this is not json {")
                self._send(200, json.dumps(fake.answer(self.path, body, behaviour)))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _value(self, key: str, text: str, behaviour: str, index: int) -> Any:
        if behaviour == "nan":
            return float("nan")
        if behaviour == "range":
            return 1.7
        return verdict(text)

    def answer(self, path: str, body: dict[str, Any], behaviour: str) -> dict[str, Any]:
        if self.kind == "systemone":
            assert path == "/v1/systemone"
            entries = _entries(body["state"])
            answers = {}
            for n, key in enumerate(body["questions"]):
                if behaviour == "partial" and n % 2:
                    continue
                answers[key] = {"type": "noul", "noul": self._value(key, entries[key], behaviour, n)}
            if behaviour == "missing":
                answers = {}
            return {"model": self.model, "answers": answers, "usage": {"input_tokens": 10, "output_tokens": 1}}
        if self.kind == "chat":
            prompt = body["messages"][-1]["content"]
            state = _state_of(prompt)
            entries = _entries(state)
            if body.get("logprobs") and behaviour != "nologprobs":
                key = re.search(r"entry with key (e\d+)", prompt).group(1)
                p = verdict(entries[key])
                import math

                tops = [
                    {"token": "Yes", "logprob": math.log(p)},
                    {"token": "No", "logprob": math.log(1 - p)},
                    {"token": "Maybe", "logprob": -9.0},
                ]
                return {
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "Yes"},
                            "logprobs": {
                                "content": [{"token": "Yes", "logprob": tops[0]["logprob"], "top_logprobs": tops}]
                            },
                        }
                    ],
                }
            if body.get("logprobs"):  # a server that ignores logprobs
                return {
                    "model": self.model,
                    "choices": [{"index": 0, "logprobs": None, "message": {"role": "assistant", "content": "Yes"}}],
                }
            obj = {k: verdict(t) for k, t in entries.items()}
            text = "not json" if behaviour == "badjson" else "```json\n" + json.dumps(obj) + "\n```"
            return {"model": self.model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        if self.kind == "messages":
            assert path == "/v1/messages"
            state = _state_of(body["messages"][0]["content"])
            obj: dict[str, Any] = {
                k: self._value(k, t, behaviour, n) for n, (k, t) in enumerate(_entries(state).items())
            }
            if behaviour == "partial":
                obj = dict(list(obj.items())[::2])
            text = "I cannot comply." if behaviour == "badjson" else json.dumps(obj)
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 20},
            }
        raise AssertionError(self.kind)


def dead_url() -> str:
    """A loopback URL where nothing listens."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"
