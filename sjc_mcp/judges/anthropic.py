"""Claude through the Anthropic Messages API, which returns no token probabilities: one request for
all entries asking for a JSON object of probabilities, validated with pydantic."""

from __future__ import annotations

import time
from typing import Any

from pydantic import ValidationError

from sjc_mcp.judges import _remote
from sjc_mcp.judges.openai import SYSTEM, Probabilities, all_prompt, parse_json_object
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment

API_VERSION = "2023-06-01"


class AnthropicJudge:
    name = "anthropic"

    def __init__(self, config: Any, client: Any = None) -> None:
        self.cfg = config.anthropic
        _remote.check_endpoint(self.name, self.cfg.base_url, config.allow_remote)
        self.key = _remote.api_key(self.name, self.cfg.api_key_env, self.cfg.base_url)
        self.model = self.cfg.model
        self.client = client

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if self.key:
            headers["x-api-key"] = self.key
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        url = self.cfg.base_url.rstrip("/") + "/v1/messages"
        ids = [e.id for e in request.entries]
        state = _remote.request_state(request, red, ids)
        body = {
            "model": self.cfg.model,
            "max_tokens": self.cfg.max_tokens,
            "temperature": 0,
            "system": SYSTEM,
            "messages": [{"role": "user", "content": all_prompt(state)}],
        }
        scores: dict[int, float | None] = {}
        errors: list[str] = []
        model = self.model
        try:
            data = poster.post(url, body)
            model = str(data.get("model") or model)
            text = "".join(b.get("text", "") for b in data.get("content", []) if isinstance(b, dict))
            probs = Probabilities.model_validate(parse_json_object(text)).root
            for i in ids:
                scores[i] = _remote.probability(probs.get(f"e{i}"))
                if scores[i] is None:
                    errors.append(f"anthropic: no usable probability for e{i}")
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            errors.append(f"anthropic: no usable JSON object in the reply: {str(exc)[:160]}")
        except Exception as exc:
            errors.append(f"anthropic: {exc}")
        finally:
            if self.client is None:
                client.close()
        return JudgeOutput(
            judgments=[Judgment(entry_id=i, score=s) for i, s in scores.items()],
            name=self.name,
            model=model,
            errors=errors,
            redactions=red.count,
        )

    def relevance(self, request: Any) -> JudgeOutput:
        """One request: a JSON object of probabilities that each result is still needed."""
        import json

        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if self.key:
            headers["x-api-key"] = self.key
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        state = _remote.relevance_state(request, red)
        keys = ", ".join(f"r{r.id}" for r in request.results)
        prompt = (
            f"{json.dumps(state, ensure_ascii=False)}\n\nFor every result ({keys}): {_remote.RELEVANCE_QUESTION}\n"
            "Reply with only a JSON object mapping each result key to the probability (0 to 1) that it is still "
            'needed, e.g. {"r0": 0.9, "r1": 0.1}.'
        )
        scores: dict[int, float | None] = {}
        errors: list[str] = []
        model = self.model
        try:
            data = poster.post(
                self.cfg.base_url.rstrip("/") + "/v1/messages",
                {
                    "model": self.cfg.model,
                    "max_tokens": self.cfg.max_tokens,
                    "temperature": 0,
                    "system": SYSTEM,
                    "messages": [{"role": "user", "content": prompt}],
                },
            )
            model = str(data.get("model") or model)
            text = "".join(b.get("text", "") for b in data.get("content", []) if isinstance(b, dict))
            probs = Probabilities.model_validate(parse_json_object(text)).root
            for r in request.results:
                scores[r.id] = _remote.probability(probs.get(f"r{r.id}"))
        except Exception as exc:
            errors.append(f"anthropic: {str(exc)[:200]}")
        finally:
            if self.client is None:
                client.close()
        return JudgeOutput(
            judgments=[Judgment(entry_id=i, score=s) for i, s in scores.items()],
            name=self.name,
            model=model,
            errors=errors,
            redactions=red.count,
        )


def make(config: Any) -> AnthropicJudge:
    return AnthropicJudge(config)
