"""A fake model API on 127.0.0.1 speaking the Anthropic Messages, OpenAI Chat Completions and OpenAI
Responses wire formats, streamed (server-sent events, written as they are produced) or not."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPACTION_MARKERS = ("Your task is to create a detailed summary", "CONTEXT CHECKPOINT COMPACTION")
USAGE = {"input_tokens": 1234, "output_tokens": 321}


def _chunks(text: str, n: int = 7) -> list[str]:
    size = max(1, len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeUpstream:
    def __init__(self) -> None:
        self.summary = "<summary>\n1. Primary Request and Intent:\n   - nothing\n</summary>"
        self.plain = "Hello from upstream. The answer is 42."
        self.fail_next: int | None = None
        # the next answer declares its full length but only this many bytes of it are sent before the
        # connection closes: an upstream that breaks its answer off
        self.drop_after: int | None = None
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # a streamed body ends when the connection closes

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"data": [{"id": "fake-model", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("x-upstream", "fake")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                fake.requests.append(
                    {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "raw": raw}
                )
                if fake.fail_next:
                    code, fake.fail_next = fake.fail_next, None
                    out = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("retry-after", "7")
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out.encode())
                    return
                text = fake.summary if any(m in raw.decode() for m in COMPACTION_MARKERS) else fake.plain
                api = "anthropic" if self.path.endswith("/messages") else "chat" if "chat" in self.path else "responses"
                if fake.drop_after is not None:
                    cut, fake.drop_after = fake.drop_after, None
                    if body.get("stream"):
                        out = "".join(getattr(fake, f"_{api}_events")(text, body)).encode()
                    else:
                        out = json.dumps(getattr(fake, f"_{api}_json")(text, body)).encode()
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream" if body.get("stream") else "application/json")
                    self.send_header("x-upstream", "fake")
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out[:cut])
                    self.wfile.flush()
                    return
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("x-upstream", "fake")
                    self.end_headers()
                    for ev in getattr(fake, f"_{api}_events")(text, body):
                        self.wfile.write(ev.encode())
                        self.wfile.flush()
                        time.sleep(0.002)
                    return
                out = json.dumps(getattr(fake, f"_{api}_json")(text, body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("x-upstream", "fake")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- Anthropic --
    def _anthropic_json(self, text: str, body: dict) -> dict:
        return {
            "id": "msg_fake01",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "m"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": USAGE,
        }

    def _anthropic_events(self, text: str, body: dict) -> list[str]:
        def ev(name: str, data: dict) -> str:
            return f"event: {name}\ndata: {json.dumps(data)}\n\n"

        msg = self._anthropic_json("", body)
        msg["content"] = []
        msg["usage"] = {"input_tokens": USAGE["input_tokens"], "output_tokens": 1}
        out = [
            ev("message_start", {"type": "message_start", "message": msg}),
            ev(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            ev("ping", {"type": "ping"}),
        ]
        out += [
            ev(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": c}},
            )
            for c in _chunks(text)
        ]
        out += [
            ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ev(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": USAGE["output_tokens"]},
                },
            ),
            ev("message_stop", {"type": "message_stop"}),
        ]
        return out

    # -- OpenAI chat --
    def _chat_json(self, text: str, body: dict) -> dict:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1764460800,
            "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1234, "completion_tokens": 321, "total_tokens": 1555},
        }

    def _chat_events(self, text: str, body: dict) -> list[str]:
        def chunk(delta: dict, finish: str | None = None) -> str:
            return (
                "data: "
                + json.dumps(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": 1764460800,
                        "model": body.get("model", "m"),
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                )
                + "\n\n"
            )

        return (
            [chunk({"role": "assistant", "content": ""})]
            + [chunk({"content": c}) for c in _chunks(text)]
            + [chunk({}, "stop"), "data: [DONE]\n\n"]
        )

    # -- OpenAI responses --
    def _responses_json(self, text: str, body: dict, status: str = "completed") -> dict:
        return {
            "id": "resp_fake",
            "object": "response",
            "created_at": 1764460800,
            "status": status,
            "model": body.get("model", "m"),
            "output": [
                {
                    "type": "message",
                    "id": "msg_fake",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 1234,
                "output_tokens": 321,
                "total_tokens": 1555,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _responses_events(self, text: str, body: dict) -> list[str]:
        seq = iter(range(10_000))

        def ev(kind: str, **data: Any) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': next(seq), **data})}\n\n"

        empty = self._responses_json("", body, status="in_progress")
        empty["output"] = []
        item = {"type": "message", "id": "msg_fake", "status": "in_progress", "role": "assistant", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        out = [
            ev("response.created", response=empty),
            ev("response.in_progress", response=empty),
            ev("response.output_item.added", output_index=0, item=item),
            ev("response.content_part.added", item_id="msg_fake", output_index=0, content_index=0, part=part),
        ]
        out += [
            ev("response.output_text.delta", item_id="msg_fake", output_index=0, content_index=0, delta=c, logprobs=[])
            for c in _chunks(text)
        ]
        done_item = {**item, "status": "completed", "content": [{**part, "text": text}]}
        out += [
            ev(
                "response.output_text.done", item_id="msg_fake", output_index=0, content_index=0, text=text, logprobs=[]
            ),
            ev(
                "response.content_part.done",
                item_id="msg_fake",
                output_index=0,
                content_index=0,
                part={**part, "text": text},
            ),
            ev("response.output_item.done", output_index=0, item=done_item),
            ev("response.completed", response=self._responses_json(text, body)),
        ]
        return out
