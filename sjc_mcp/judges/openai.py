"""Any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama).

Per entry one yes/no question with ``logprobs``: the score is p(yes) = P(yes) / (P(yes) + P(no)) over
the first token's top alternatives; requests run concurrently up to ``concurrency``. A server that
returns no logprobs gets one request asking for a JSON object of probabilities for all entries.
"""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sjc_mcp import validate
from sjc_mcp.errors import JudgeError
from sjc_mcp.judges import _remote
from sjc_mcp.models import JudgeOutput, JudgeRequest

SYSTEM = "You judge where the entries of a coding agent's compaction summary came from. " + _remote.DATA_NOTICE
YES = {"yes", "true"}
NO = {"no", "false"}


def read_probabilities(s: _remote.Session, who: str, text: str, keys: dict[str, int]) -> None:
    """Scores from a reply that should be one JSON object of probabilities keyed like ``keys``."""
    try:
        probs = validate.convert(parse_json_object(text), dict[str, float], error=JudgeError)
    except (ValueError, JudgeError) as exc:  # not JSON, or not an object of numbers
        s.errors.append(f"{who}: no usable JSON object in the reply: {str(exc)[:160]}")
        return
    for key, i in keys.items():
        s.scores[i] = _remote.probability(probs.get(key))
        if s.scores[i] is None:
            s.errors.append(f"{who}: no usable probability for {key}")


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


class OpenAIJudge(_remote.RemoteJudge):
    name = "openai"
    table = "openai"

    def _yes_no(self, s: _remote.Session, key: str, prompt: str) -> tuple[float | None, str | None, bool]:
        """p(yes) for one question; ``(score, error, the server gave no logprobs)``."""
        body = {
            "model": self.cfg.model,
            "temperature": 0,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 20,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        }
        try:
            data = s.poster.post(self.url("/chat/completions"), body)
        except Exception as exc:
            return None, f"openai: {key}: {exc}", False
        s.saw_model(data)
        choice = (data.get("choices") or [None])[0]
        if not isinstance(choice, dict):
            return None, f"openai: {key}: no choices in the response", False
        if not choice.get("logprobs"):
            return None, None, True
        p = p_yes(choice)
        return p, None if p is not None else f"openai: {key}: neither yes nor no among the top tokens", False

    def _each(self, s: _remote.Session, prompts: dict[int, tuple[str, str]]) -> list[int]:
        """Ask every question concurrently; the ids the server answered without logprobs."""
        missing = []
        with ThreadPoolExecutor(max_workers=self.cfg.concurrency) as pool:
            futures = {i: pool.submit(self._yes_no, s, key, prompt) for i, (key, prompt) in prompts.items()}
            for i, fut in futures.items():
                s.scores[i], err, no_logprobs = fut.result()
                if err:
                    s.errors.append(err)
                if no_logprobs:
                    missing.append(i)
        return missing

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        def work(s: _remote.Session) -> None:
            prompts = {
                e.id: (f"e{e.id}", entry_prompt(_remote.request_state(request, s.red, [e.id]), f"e{e.id}"))
                for e in request.entries
            }
            missing = self._each(s, prompts)
            if missing:  # no logprobs from this server: one request for a JSON object of probabilities
                self._fallback(
                    s, all_prompt(_remote.request_state(request, s.red, missing)), {f"e{i}": i for i in missing}
                )

        return self.run(work)

    def relevance(self, request: Any) -> JudgeOutput:
        def prompt(s: _remote.Session, rid: int) -> str:
            state = _remote.relevance_state(request, s.red, [rid])
            return (
                f"{json.dumps(state, ensure_ascii=False)}\n\nQuestion about the result with key r{rid}: "
                f"{_remote.RELEVANCE_QUESTION}\nAnswer with one word: yes or no."
            )

        def work(s: _remote.Session) -> None:
            missing = self._each(s, {r.id: (f"r{r.id}", prompt(s, r.id)) for r in request.results})
            for i in missing:
                s.errors.append(f"openai: r{i}: the server gave no logprobs")

        return self.run(work)

    def _fallback(self, s: _remote.Session, prompt: str, keys: dict[str, int]) -> None:
        body = {
            "model": self.cfg.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        }
        data = s.poster.post(self.url("/chat/completions"), body)
        s.saw_model(data)
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            s.errors.append("openai: the JSON fallback gave no usable object: no message in the reply")
            return
        read_probabilities(s, "openai: the JSON fallback", text if isinstance(text, str) else "", keys)


def make(config: Any) -> OpenAIJudge:
    return OpenAIJudge(config)
