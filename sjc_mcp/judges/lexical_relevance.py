"""The offline judge's answer to "is this tool result still needed for the current task?".

Recency first, as observation masking is: in recorded sessions the results an agent stops needing are
above all the old ones (on the real Claude Code fixtures, ranking results by age alone loses fewer of the
identifiers used after a compaction than ranking by overlap with the task or by later use does, see
README "Pruning tool results"). A result is lifted above its age by sharing words with the task and the
recent turns, and by identifiers that the agent's later messages and calls use again.

score = min(1, age rank + TASK × task overlap + USED × later use), where the age rank runs from 0 (the oldest
candidate) to 1 (the newest). So ``[tools] truncate_below`` reads as the share of the oldest results
considered for cutting: 0.25 cuts at most the oldest fifth (0.25 less the 0.05 margin), fewer where the
task or later use lifts them.
"""

from __future__ import annotations

import math
from typing import Any

from sjc_mcp.judges._signals_text import anchors, found, words
from sjc_mcp.models import JudgeOutput, Judgment

MODEL = "lexical-relevance-2"
TASK = 0.1  # a result that shares all its words with the task and recent turns is lifted by this much
USED = 0.1  # a result whose identifiers the agent's later messages use e times is lifted by USED × log(1+e)/3


def _last_use(ids: set[str], later: list[str]) -> dict[str, int]:
    """For each identifier, the index of the last message in ``later`` holding it as a whole token (-1: none).
    One pass from the end per identifier, stopping at the first hit: linear in the text for each."""
    out: dict[str, int] = {}
    for a in ids:
        out[a] = -1
        for j in range(len(later) - 1, -1, -1):
            if a in later[j] and found(a, later[j]):
                out[a] = j
                break
    return out


def features(request: Any) -> list[dict[str, float]]:
    """Per result: ``age`` (0 oldest … 1 newest among the candidates), ``task`` (word overlap with the task
    and the recent turns, 0…1), ``used`` (log of how many of its identifiers later messages and calls use)."""
    task_words = words(" ".join([request.task or "", *request.recent]))
    n = len(request.results)
    ids = [[a for a in anchors(r.text) if len(a) >= 4][:200] for r in request.results]
    last = _last_use({a for x in ids for a in x}, request.later)
    out = []
    for k, (r, mine) in enumerate(zip(request.results, ids, strict=True)):
        rw = words(r.text)
        overlap = len(rw & task_words) / math.sqrt(len(rw) * len(task_words)) if rw and task_words else 0.0
        used = sum(1 for a in mine if last[a] >= r.later_from)
        out.append(
            {
                "age": k / (n - 1) if n > 1 else 1.0,
                "task": min(1.0, overlap * 3),
                "used": math.log1p(used) / 3,
            }
        )
    return out


def score(f: dict[str, float]) -> float:
    return round(min(1.0, f["age"] + TASK * f["task"] + USED * f["used"]), 4)


def relevance(request: Any, name: str = "lexical") -> JudgeOutput:
    rows = zip(request.results, features(request), strict=True)
    judgments = [Judgment(entry_id=r.id, score=score(f)) for r, f in rows]
    return JudgeOutput(judgments=judgments, name=name, model=MODEL)
