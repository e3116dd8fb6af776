"""Jev, the method's own judge, over the "System One" API: one request per boundary.

``state`` holds the task, the previous summary, the recent interaction, the pooled evidence (each
passage with its origin) and the entries; ``questions`` has one ``noul`` question per entry, keyed
``e<i>``; each answer's ``noul`` is that entry's score. A state over the budget (32,000 estimated
tokens by default) is split by entries, each group carrying only its own evidence; every entry is
asked exactly once.
"""

from __future__ import annotations

from typing import Any

from sjc_mcp.judges import _remote
from sjc_mcp.models import JudgeOutput, JudgeRequest


def _questions(keys: list[tuple[str, str]], question: str, true: str, false: str) -> dict[str, Any]:
    return {
        key: {
            "type": "noul",
            "instructions": f"About {about}: {question} {_remote.DATA_NOTICE}",
            "criteria": {"true": true, "false": false},
        }
        for key, about in keys
    }


def _read_answers(s: _remote.Session, data: dict[str, Any], keys: dict[str, int]) -> None:
    s.saw_model(data)
    answers: dict[str, Any] = data["answers"] if isinstance(data.get("answers"), dict) else {}
    for key, i in keys.items():
        ans = answers.get(key)
        s.scores[i] = _remote.probability(ans.get("noul")) if isinstance(ans, dict) else None
        if s.scores[i] is None:
            s.errors.append(f"jev: no usable answer for {key} ({'missing' if ans is None else ans!r})"[:200])


class JevJudge(_remote.RemoteJudge):
    name = "jev"
    table = "jev"

    def _groups(self, req: JudgeRequest) -> list[list[int]]:
        ids = [e.id for e in req.entries]
        budget = self.cfg.state_budget_tokens
        if _remote.estimate_tokens(_remote.request_state(req, _remote.Redactor())) <= budget:
            return [ids]
        groups: list[list[int]] = []
        cur: list[int] = []
        for i in ids:
            trial = [*cur, i]
            if cur and _remote.estimate_tokens(_remote.request_state(req, _remote.Redactor(), trial)) > budget:
                groups.append(cur)
                cur = [i]
            else:
                cur = trial
        if cur:
            groups.append(cur)
        return groups

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        def work(s: _remote.Session) -> None:
            for group in self._groups(request):
                keys = {f"e{i}": i for i in group}
                questions = _questions(
                    [(k, f"the entry with key {k} in state.entries") for k in keys],
                    _remote.QUESTION,
                    _remote.CRITERIA_TRUE,
                    _remote.CRITERIA_FALSE,
                )
                body = {
                    "model": self.cfg.model,
                    "state": _remote.request_state(request, s.red, group),
                    "questions": questions,
                }
                try:
                    data = s.poster.post(self.url("/v1/systemone"), body)
                except Exception as exc:  # this part unjudged; the other parts still asked
                    s.errors.append(f"jev: {exc}")
                    continue
                _read_answers(s, data, keys)

        return self.run(work)

    def relevance(self, request: Any) -> JudgeOutput:
        """One request, one ``noul`` question per tool result, keyed ``r<i>``."""

        def work(s: _remote.Session) -> None:
            keys = {f"r{r.id}": r.id for r in request.results}
            questions = _questions(
                [(k, f"results[{n}] (key {k})") for n, k in enumerate(keys)],
                _remote.RELEVANCE_QUESTION,
                _remote.RELEVANCE_TRUE,
                _remote.RELEVANCE_FALSE,
            )
            body = {"model": self.cfg.model, "state": _remote.relevance_state(request, s.red), "questions": questions}
            _read_answers(s, s.poster.post(self.url("/v1/systemone"), body), keys)

        return self.run(work)


def make(config: Any) -> JevJudge:
    return JevJudge(config)
