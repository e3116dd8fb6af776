"""Retrieve: the judge's request for a split summary, each entry with the evidence BM25 finds for it among
the sources the configuration allows (``config.sources``), the previous summary among them."""

from __future__ import annotations

from collections.abc import Sequence

from sjc_mcp.config import Config
from sjc_mcp.evidence import EvidenceIndex
from sjc_mcp.models import JudgeEntry, JudgeRequest, ParsedSummary, Source, Turn
from sjc_mcp.text import plain_marker


def build_request(
    parsed: ParsedSummary,
    sources: Sequence[Source],
    config: Config,
    *,
    task: str | None = None,
    previous_summary: str | None = None,
    retained: Sequence[Turn] = (),
    assistant_prose: Sequence[str] = (),
) -> JudgeRequest:
    allowed = set(config.sources)
    pool = [s for s in sources if s.kind in allowed]
    if previous_summary and "previous_summary" in allowed:
        pool.append(Source(kind="previous_summary", content=previous_summary))
    r = config.retrieval
    index = EvidenceIndex(pool, passage_chars=r.passage_chars, chunk_chars=r.chunk_chars)
    per_entry, pooled = index.retrieve([e.text for e in parsed.entries], k=r.top_k)
    entries = [  # a judge reads an entry's words, not its markup: lettered items read as bullets
        JudgeEntry(id=e.id, section=e.section, text=plain_marker(e.text), evidence=ids)
        for e, ids in zip(parsed.entries, per_entry, strict=True)
    ]
    return JudgeRequest(
        task=task,
        previous_summary=previous_summary if "previous_summary" in allowed else None,
        retained=list(retained),
        evidence=pooled,
        entries=entries,
        assistant_prose=list(assistant_prose),
        sources=pool,
        vocabulary=index.vocab,
    )
