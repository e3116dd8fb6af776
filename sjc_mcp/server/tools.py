"""What the MCP tools do, as plain functions over the library (``sjc_mcp.server.app`` serves them).

``Calls`` holds what every call shares: the configuration (read once, at the first call, unless the HTTP
server hands it over already read), the folder of per-user decision logs, and whether callers are remote.
Each call goes through the library's one call for its input (``pipeline.judge_boundary`` for a transcript's
compaction, ``pipeline.judge_summary``/``prune_summary`` for a summary and evidence, ``tools.relevance`` for a
history); a fault is an ``SJCError`` with one line saying what to fix.

Served to others (``remote``, over HTTP): each call is logged under its user's log name (``users.user_id``),
to ``<log_dir>/<name>.jsonl`` when a ``log_dir`` is given; and ``transcript_path`` reads this machine's files
only under ``allowed_roots`` written in the config file itself (the defaults name the server user's own
transcripts, never a remote user's).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sjc_mcp.errors import SJCError
from sjc_mcp.models import PruneResult
from sjc_mcp.server.users import is_user_id, local_user, safe_user, user_id

if TYPE_CHECKING:
    from sjc_mcp.config import Config
    from sjc_mcp.models import Boundary, EvidenceItem, JudgeResult
    from sjc_mcp.tools.relevance import ToolsResult


@dataclass
class SummaryRequest:
    """The arguments of ``judge_summary`` and ``prune_summary``."""

    summary: str | None = None
    evidence: Sequence[EvidenceItem] = ()
    previous_summary: str | None = None
    task: str | None = None
    host: str | None = None
    threshold: float | None = None
    transcript_path: str | None = None
    boundary: int | None = None


@dataclass
class HistoryRequest:
    """The arguments of ``judge_tool_results`` and ``prune_tool_results``."""

    messages: list[dict[str, Any]]
    transcript_path: str | None = None
    boundary: int | None = None
    task: str | None = None


class Calls:
    """The tools' shared state: configuration, log folder, local or remote callers."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        config_path: str | None = None,
        log_dir: str | None = None,
        remote: bool = False,
    ) -> None:
        self._config = config
        self.config_path = config_path
        self.log_dir = log_dir
        self.remote = remote

    def config(self) -> Config:
        """The configuration, read at the first call; a bad one is every call's error, naming the fault."""
        if self._config is None:
            from sjc_mcp.config import load_config

            try:
                self._config = load_config(self.config_path)
            except SJCError as exc:
                raise SJCError(f"configuration: {exc}") from None
        return self._config

    def user(self, header: str | None) -> str | None:
        """Who made a call: remote, the log name the HTTP server put in the ``X-SJC-User`` header (a header
        of another shape, or none, is taken as a user's name and given its ``user_id``); local, this
        machine's login name; None where it matters to nothing (local without a log folder)."""
        if self.remote:
            if header is not None and is_user_id(header):
                return header
            return user_id(header, sent=header.encode("latin-1", "replace") if header is not None else None)
        return safe_user(local_user()) if self.log_dir else None

    def call_config(self, user: str | None) -> Config:
        """The configuration for one call: the user's own decision log under ``log_dir``."""
        base = self.config()
        if self.log_dir and user:
            return base.replace(decision_log=os.path.join(self.log_dir, f"{user}.jsonl"))
        return base

    def meta(self, user: str | None) -> dict[str, Any]:
        return {"surface": "mcp", **({"user": user} if self.remote and user else {})}

    def read_transcript(self, path: str, boundary: int | None, user: str | None) -> tuple[Boundary, dict[str, Any]]:
        """A compaction of a transcript under the allowed roots, and what the log should say about it."""
        from sjc_mcp.hosts import read_boundary
        from sjc_mcp.server.roots import check_allowed

        config = self.config()
        if self.remote and "allowed_roots" not in config.explicit:
            raise SJCError(
                "transcript_path reads files on the server's machine, not the caller's: over HTTP it needs "
                "allowed_roots set in the server's config file; send the summary and evidence instead"
            )
        b = read_boundary(check_allowed(path, config), boundary)
        return b, {**self.meta(user), "transcript": path}


def judge_summary(calls: Calls, req: SummaryRequest, user_header: str | None = None) -> JudgeResult:
    return _summary(calls, req, user_header, prune=False)


def prune_summary(calls: Calls, req: SummaryRequest, user_header: str | None = None) -> PruneResult:
    r = _summary(calls, req, user_header, prune=True)
    assert isinstance(r, PruneResult)
    return r


def _summary(calls: Calls, req: SummaryRequest, user_header: str | None, prune: bool) -> JudgeResult:
    from sjc_mcp import pipeline

    user = calls.user(user_header)
    common: dict[str, Any] = {
        "previous_summary": req.previous_summary,
        "task": req.task,
        "host": req.host,
        "threshold": req.threshold,
        "config": calls.call_config(user),
    }
    if req.transcript_path:
        b, meta = calls.read_transcript(req.transcript_path, req.boundary, user)
        r = pipeline.judge_boundary(
            b, prune=prune, summary=req.summary, evidence=req.evidence, meta=meta, log=True, **common
        )
        if r.note:
            raise SJCError(f"nothing to judge at boundary {b.index}: {r.note}")
        return r
    if req.boundary is not None:
        raise SJCError("boundary needs transcript_path")
    if not req.summary:
        raise SJCError("give a summary, or a transcript_path to take it from")
    fn = pipeline.prune_summary if prune else pipeline.judge_summary
    return fn(req.summary, list(req.evidence), meta=calls.meta(user), log=True, **common)


def judge_tool_results(calls: Calls, req: HistoryRequest, user_header: str | None = None) -> ToolsResult:
    return _history(calls, req, user_header, prune=False)


def prune_tool_results(calls: Calls, req: HistoryRequest, user_header: str | None = None) -> ToolsResult:
    return _history(calls, req, user_header, prune=True)


def _history(calls: Calls, req: HistoryRequest, user_header: str | None, prune: bool) -> ToolsResult:
    from sjc_mcp import pipeline
    from sjc_mcp.tools import relevance

    user = calls.user(user_header)
    meta = calls.meta(user)
    if req.transcript_path:
        b, meta = calls.read_transcript(req.transcript_path, req.boundary, user)
        items = b.span
    else:
        if sum(len(str(m.get("content", ""))) for m in req.messages) > pipeline.MAX_EVIDENCE_BYTES:
            raise SJCError(f"messages are larger than {pipeline.MAX_EVIDENCE_BYTES:,} bytes")
        items = relevance.messages_from_json(req.messages)
    fn = relevance.prune_tool_results if prune else relevance.judge_tool_results
    return fn(items, config=calls.call_config(user), task=req.task, meta=meta)
