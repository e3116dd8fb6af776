"""Jev, the method's own judge, over the "System One" API: one request per boundary.

``state`` holds the task, the previous summary, the recent interaction, the pooled evidence (each
passage with its origin) and the entries; ``questions`` has one ``noul`` question per entry, keyed
``e<i>``; each answer's ``noul`` is that entry's score. A state over the budget (32,000 estimated
tokens by default) is split by entries, each group carrying only its own evidence; every entry is
asked exactly once.
"""

from __future__ import annotations

import time
from typing import Any

from sjc_mcp.judges import _remote
from sjc_mcp.models import JudgeOutput, JudgeRequest, Judgment


class JevJudge:
    name = "jev"

    def __init__(self, config: Any, client: Any = None) -> None:
        self.cfg = config.jev
        _remote.check_endpoint(self.name, self.cfg.base_url, config.allow_remote)
        self.key = _remote.api_key(self.name, self.cfg.api_key_env, self.cfg.base_url)
        self.model = self.cfg.model
        self.client = client

    def _groups(self, req: JudgeRequest, red: _remote.Redactor) -> list[list[int]]:
        ids = [e.id for e in req.entries]
        if _remote.estimate_tokens(_remote.request_state(req, _remote.Redactor())) <= self.cfg.state_budget_tokens:
            return [ids]
        groups: list[list[int]] = []
        cur: list[int] = []
        for i in ids:
            trial = [*cur, i]
            if cur and _remote.estimate_tokens(_remote.request_state(req, _remote.Redactor(), trial)) > (
                self.cfg.state_budget_tokens
            ):
                groups.append(cur)
                cur = [i]
            else:
                cur = trial
        if cur:
            groups.append(cur)
        return groups

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        url = self.cfg.base_url.rstrip("/") + "/v1/systemone"
        scores: dict[int, float | None] = {}
        errors: list[str] = []
        model = self.model
        try:
            for group in self._groups(request, red):
                state = _remote.request_state(request, red, group)
                questions = {
                    f"e{i}": {
                        "type": "noul",
                        "instructions": f"About the entry with key e{i} in state.entries: {_remote.QUESTION} "
                        f"{_remote.DATA_NOTICE}",
                        "criteria": {"true": _remote.CRITERIA_TRUE, "false": _remote.CRITERIA_FALSE},
                    }
                    for i in group
                }
                try:
                    data = poster.post(url, {"model": self.cfg.model, "state": state, "questions": questions})
                except Exception as exc:
                    errors.append(f"jev: {exc}")
                    continue
                model = str(data.get("model") or model)
                answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
                for i in group:
                    ans = answers.get(f"e{i}")
                    value = _remote.probability(ans.get("noul")) if isinstance(ans, dict) else None
                    if value is None:
                        errors.append(f"jev: no usable answer for e{i} ({'missing' if ans is None else ans!r})"[:200])
                    scores[i] = value
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
        """One request, one ``noul`` question per tool result, keyed ``r<i>``."""
        red = _remote.Redactor()
        client = self.client or _remote.make_client()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        poster = _remote.Poster(client, self.cfg, headers, time.monotonic() + self.cfg.total_timeout_s)
        questions = {
            f"r{r.id}": {
                "type": "noul",
                "instructions": f"About results[{n}] (key r{r.id}): {_remote.RELEVANCE_QUESTION} {_remote.DATA_NOTICE}",
                "criteria": {"true": _remote.RELEVANCE_TRUE, "false": _remote.RELEVANCE_FALSE},
            }
            for n, r in enumerate(request.results)
        }
        scores: dict[int, float | None] = {}
        errors: list[str] = []
        model = self.model
        try:
            data = poster.post(
                self.cfg.base_url.rstrip("/") + "/v1/systemone",
                {"model": self.cfg.model, "state": _remote.relevance_state(request, red), "questions": questions},
            )
            model = str(data.get("model") or model)
            answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
            for r in request.results:
                ans = answers.get(f"r{r.id}")
                scores[r.id] = _remote.probability(ans.get("noul")) if isinstance(ans, dict) else None
                if scores[r.id] is None:
                    errors.append(f"jev: no usable answer for r{r.id}")
        except Exception as exc:
            errors.append(f"jev: {exc}")
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


def make(config: Any) -> JevJudge:
    return JevJudge(config)
