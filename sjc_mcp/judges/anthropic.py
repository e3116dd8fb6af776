"""Claude through the Anthropic Messages API, which returns no token probabilities: one request for
all entries asking for a JSON object of probabilities, validated with pydantic."""

from __future__ import annotations

import json
from typing import Any

from sjc_mcp.judges import _remote
from sjc_mcp.judges.openai import SYSTEM, all_prompt, read_probabilities
from sjc_mcp.models import JudgeOutput, JudgeRequest

API_VERSION = "2023-06-01"


class AnthropicJudge(_remote.RemoteJudge):
    name = "anthropic"
    table = "anthropic"

    def headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if self.key:
            out["x-api-key"] = self.key
        return out

    def _ask(self, s: _remote.Session, prompt: str, keys: dict[str, int]) -> None:
        body = {
            "model": self.cfg.model,
            "max_tokens": self.cfg.max_tokens,
            "temperature": 0,
            "system": SYSTEM,
            "messages": [{"role": "user", "content": prompt}],
        }
        data = s.poster.post(self.url("/v1/messages"), body)
        s.saw_model(data)
        text = "".join(b.get("text", "") for b in data.get("content", []) if isinstance(b, dict))
        read_probabilities(s, "anthropic", text, keys)

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        ids = [e.id for e in request.entries]
        return self.run(
            lambda s: self._ask(s, all_prompt(_remote.request_state(request, s.red, ids)), {f"e{i}": i for i in ids})
        )

    def relevance(self, request: Any) -> JudgeOutput:
        """One request: a JSON object of probabilities that each result is still needed."""

        def prompt(s: _remote.Session) -> str:
            keys = ", ".join(f"r{r.id}" for r in request.results)
            return (
                f"{json.dumps(_remote.relevance_state(request, s.red), ensure_ascii=False)}\n\nFor every result "
                f"({keys}): {_remote.RELEVANCE_QUESTION}\nReply with only a JSON object mapping each result key "
                'to the probability (0 to 1) that it is still needed, e.g. {"r0": 0.9, "r1": 0.1}.'
            )

        return self.run(lambda s: self._ask(s, prompt(s), {f"r{r.id}": r.id for r in request.results}))


def make(config: Any) -> AnthropicJudge:
    return AnthropicJudge(config)
