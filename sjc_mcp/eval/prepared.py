"""One labelled case made ready to judge (its summary split, the judge's request built as ``sjc prune``
builds it), a label read under a policy, and the product's decision on the case's entries
(``pipeline.decide_entries``, exactly as ``sjc prune`` applies it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.eval.cases import Case
from sjc_mcp.models import JudgeOutput, JudgeRequest, ParsedSummary, Source
from sjc_mcp.pipeline import build_request, decide_entries
from sjc_mcp.summary import split_summary


@dataclass(slots=True)
class Prepared:
    """One case made ready to judge: its summary split, its request, the sources the decision reads."""

    case: Case
    parsed: ParsedSummary
    request: JudgeRequest
    sources: list[Source]


def case_request(case: Case, config: Config) -> tuple[ParsedSummary, JudgeRequest]:
    p = prepare(case, config)
    return p.parsed, p.request


def prepare(case: Case, config: Config) -> Prepared:
    b = case.boundary
    parsed = split_summary(b.summary, None if case.host == "generic" else case.host)
    sources = b.sources()
    request = build_request(
        parsed,
        sources,
        config,
        task=b.task,
        previous_summary=b.previous_summary,
        retained=b.retained_turns(),
        assistant_prose=b.assistant_prose(),
    )
    return Prepared(case, parsed, request, sources)


def supported(label: Any, policy: str) -> bool:
    """Whether an entry labelled ``label`` counts as supported (``paper``: user messages are no source)."""
    if policy == "paper" and label.source == "user_message":
        return False
    return bool(label.supported)


def decisions(p: Prepared, out: JudgeOutput, config: Config, threshold: float | None = None) -> dict[int, Any]:
    """The product's decision for every entry of the case (``pipeline.decide_entries``), by entry id."""
    entries, _, _ = decide_entries(
        p.parsed,
        out,
        p.sources,
        threshold=config.threshold if threshold is None else threshold,
        margin=config.margin,
        max_prune_share=config.max_prune_share,
        incomplete=p.case.boundary.incomplete,
    )
    return {e.id: e for e in entries}
