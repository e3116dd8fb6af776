"""Any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama).

Per entry one yes/no question with ``logprobs``: the score is p(yes) = P(yes) / (P(yes) + P(no)) over
the first token's top alternatives; requests run concurrently up to ``concurrency``. A server that
returns no logprobs gets one request asking for a JSON object of probabilities for all entries,
validated with pydantic.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import RootModel, ValidationError

from sjc_mcp.judges import _remote
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment

SYSTEM = "You judge where the entries of a coding agent's compaction summary came from. " + _remote.DATA_NOTICE
YES = {"yes", "true"}
NO = {"no", "false"}


class Probabilities(RootModel[dict[str, float]]):
    pass


def entry_prompt(state: dict[str, Any], key: str) -> str:
    return (
        f"{json.dumps(state, ensure_ascii=False)}\n\nQuestion about the entry with key {key}: {_remote.QUESTION}\n"
        f"Yes means: {_remote.CRITERIA_TRUE}\nNo means: {_remote.CRITERIA_FALSE}\nAnswer with one word: yes or no."
    )


def all_prompt(state: dict[str, Any]) -> str:
    keys = ", ".join(e["key"] for e in state["entries"])
    return (
        f"{json.dumps(state, ensure_ascii=False)}\n\nFor every entry ({keys}): {_remote.QUESTION}\n"
        f"1 means: {_remote.CRITERIA_TRUE}\n0 means: {_remote.CRITERIA_FALSE}\n"
        "Reply with only a JSON object mapping each entry key to the probability (0 to 1) that the answer is "
        'yes, e.g. {"e0": 0.93, "e1": 0.04}.'
    )


def parse_json_object(text: str) -> dict[str, Any]:
    t = text.strip()
    if t.startswith("```"):
        t = t.strip("`")
        t = t[t.find("\n") + 1 :] if "\n" in t else t
    start, end = t.find("{"), t.rfind("}")
    if start == -1 or end == -1:
        raise ValueError("no JSON object in the reply")
    return json.loads(t[start : end + 1])


def p_yes(choice: dict[str, Any]) -> float | None:
    content = ((choice.get("logprobs") or {}).get("content") or [None])[0]
    if not isinstance(content, dict):
        return None
    tops = content.get("top_logprobs") or [{"token": content.get("token"), "logprob": content.get("logprob")}]
    yes = no = 0.0
    for t in tops:
        if not isinstance(t, dict) or not isinstance(t.get("logprob"), (int, float)):
            continue
        tok = str(t.get("token", "")).strip().lower()
        if tok in YES:
            yes += math.exp(t["logprob"])
        elif tok in NO:
            no += math.exp(t["logprob"])
    if yes + no == 0:
        return None
    return yes / (yes + no)


class OpenAIJudge:
    name = "openai"

    def __init__(self, config: Any, client: Any = None) -> None:
        self.cfg = config.openai
        _remote.check_endpoint(self.name, self.cfg.base_url, config.allow_remote)
        self.key = _remote.api_key(self.name, self.cfg.api_key_env, self.cfg.base_url)
        self.model = self.cfg.model
        self.client = client

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        url = self.cfg.base_url.rstrip("/") + "/chat/completions"
        errors: list[str] = []
        scores: dict[int, float | None] = {}
        model = self.model
        no_logprobs = False

        def one(entry_id: int) -> tuple[int, float | None, str | None, bool, str | None]:
            state = _remote.request_state(request, red, [entry_id])
            body = {
                "model": self.cfg.model,
                "temperature": 0,
                "max_tokens": 1,
                "logprobs": True,
                "top_logprobs": 20,
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": entry_prompt(state, f"e{entry_id}")},
                ],
            }
            try:
                data = poster.post(url, body)
            except Exception as exc:
                return entry_id, None, f"openai: e{entry_id}: {exc}", False, None
            choice = (data.get("choices") or [None])[0]
            if not isinstance(choice, dict):
                return entry_id, None, f"openai: e{entry_id}: no choices in the response", False, data.get("model")
            if not choice.get("logprobs"):
                return entry_id, None, None, True, data.get("model")
            p = p_yes(choice)
            err = None if p is not None else f"openai: e{entry_id}: neither yes nor no among the top tokens"
            return entry_id, p, err, False, data.get("model")

        try:
            with ThreadPoolExecutor(max_workers=self.cfg.concurrency) as pool:
                for entry_id, p, err, missing, got_model in pool.map(one, [e.id for e in request.entries]):
                    scores[entry_id] = p
                    model = str(got_model or model)
                    no_logprobs = no_logprobs or missing
                    if err:
                        errors.append(err)
            if no_logprobs:
                fallback = self._fallback(request, red, poster, url, [i for i, s in scores.items() if s is None])
                errors += fallback[1]
                scores.update(fallback[0])
                model = fallback[2] or model
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

    def _fallback(
        self, request: JudgeRequest, red: _remote.Redactor, poster: _remote.Poster, url: str, ids: list[int]
    ) -> tuple[dict[int, float | None], list[str], str | None]:
        """The server gave no logprobs: ask once for a JSON object of probabilities."""
        state = _remote.request_state(request, red, ids)
        body = {
            "model": self.cfg.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": all_prompt(state)}],
        }
        try:
            data = poster.post(url, body)
            text = data["choices"][0]["message"]["content"]
            probs = Probabilities.model_validate(parse_json_object(text)).root
        except (KeyError, IndexError, TypeError, ValueError, ValidationError) as exc:
            return {}, [f"openai: the JSON fallback gave no usable object: {str(exc)[:160]}"], None
        except Exception as exc:
            return {}, [f"openai: {exc}"], None
        out: dict[int, float | None] = {}
        errors = []
        for i in ids:
            out[i] = _remote.probability(probs.get(f"e{i}"))
            if out[i] is None:
                errors.append(f"openai: no usable probability for e{i}")
        return out, errors, data.get("model")

    def relevance(self, request: Any) -> JudgeOutput:
        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        url = self.cfg.base_url.rstrip("/") + "/chat/completions"
        errors: list[str] = []
        model = self.model

        def one(rid: int) -> tuple[int, float | None, str | None, str | None]:
            state = _remote.relevance_state(request, red, [rid])
            prompt = (
                f"{json.dumps(state, ensure_ascii=False)}\n\nQuestion about the result with key r{rid}: "
                f"{_remote.RELEVANCE_QUESTION}\nAnswer with one word: yes or no."
            )
            body = {
                "model": self.cfg.model,
                "temperature": 0,
                "max_tokens": 1,
                "logprobs": True,
                "top_logprobs": 20,
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            }
            try:
                data = poster.post(url, body)
            except Exception as exc:
                return rid, None, f"openai: r{rid}: {exc}", None
            choice = (data.get("choices") or [{}])[0]
            p = p_yes(choice) if isinstance(choice, dict) and choice.get("logprobs") else None
            return rid, p, None if p is not None else f"openai: r{rid}: no yes/no probability", data.get("model")

        scores: dict[int, float | None] = {}
        try:
            with ThreadPoolExecutor(max_workers=self.cfg.concurrency) as pool:
                for rid, p, err, got in pool.map(one, [r.id for r in request.results]):
                    scores[rid] = p
                    model = str(got or model)
                    if err:
                        errors.append(err)
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


def make(config: Any) -> OpenAIJudge:
    return OpenAIJudge(config)
