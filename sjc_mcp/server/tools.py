"""The tools of the MCP server ``sjc-mcp``: an ``MCPServer`` with ``judge_summary``, ``prune_summary``,
``judge_tool_results`` and ``prune_tool_results`` over the library.

Importing this module imports the MCP SDK (most of a second): ``sjc_mcp.server`` answers the handshake
without it and imports this module at the first tool call. Configuration is read once, at the first
tool call; a bad configuration makes every call a tool error naming the fault.

Served to others (``remote``, over HTTP): each call is logged under its user (the ``X-SJC-User`` header,
which ``sjc_mcp.server.http`` sets from the caller's token or passes on, sanitised), to
``<log_dir>/<user>.jsonl`` when a ``log_dir`` is given; and ``transcript_path`` reads this machine's files
only under ``allowed_roots`` written in the config file itself (the defaults name the server user's own
transcripts, never a remote user's).
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from sjc_mcp import __version__, pipeline
from sjc_mcp.config import Config, load_config
from sjc_mcp.errors import SJCError
from sjc_mcp.models import EvidenceItem
from sjc_mcp.server.http import USER_HEADER, safe_user

INSTRUCTIONS = (
    "Source-Judged Compaction. After a compaction, call prune_summary with the summary and the tool "
    "outputs and user messages it was written from: entries no source supports (plans and inventions "
    "of the compressor) are removed, everything else comes back byte for byte."
)


class EntryOut(BaseModel):
    id: int
    section: str
    text: str
    score: float | None = Field(description="probability that a source supports the entry; null if unjudged")
    decision: Literal["keep", "prune", "unjudged"]
    near_threshold: bool
    contradicted: bool
    quote: str | None = Field(description="the evidence line that decided it")
    origin: str | None
    reason: str | None = Field(
        default=None,
        description="why, in one line: the quote and where it came from, or why no source supports it",
    )


class JudgeOut(BaseModel):
    entries: list[EntryOut]
    threshold: float
    judge: dict[str, str]
    mode: str
    errors: list[str]
    warnings: list[str] = Field(default_factory=list, description="what the caller should know: nothing lost, why")
    unstructured: bool = Field(False, description="no entries found: nothing judged, the summary returned as written")
    incomplete_span: bool = Field(False, description="the span starts mid-session: unsourced entries left unjudged")
    guarded: bool = Field(False, description="pruning would pass max_prune_share: the summary kept whole")


class PruneOut(JudgeOut):
    pruned_summary: str
    removed: int
    kept: int
    chars_before: int
    chars_after: int


Summary = Annotated[
    str | None,
    Field(description="the candidate compaction summary, exactly as the host wrote it (or give transcript_path)"),
]
TranscriptPath = Annotated[
    str | None,
    Field(
        description="a host transcript (Claude Code, Codex, Gemini CLI or generic JSONL) under the allowed roots: "
        "its compaction gives the summary, the evidence and the previous summary"
    ),
]
BoundaryN = Annotated[int | None, Field(description="which compaction of the transcript (0 = first; default newest)")]
Evidence = Annotated[
    list[EvidenceItem],
    Field(description="the environment outputs of the compacted span: tool outputs and user messages"),
]
Previous = Annotated[str | None, Field(description="the previous committed summary, a source too")]
Task = Annotated[str | None, Field(description="the fixed task prompt the host keeps verbatim (not a source)")]
Host = Annotated[
    str | None,
    Field(description="force a format: claude-code, codex, gemini, openclaw, hermes, generic (default: detect)"),
]
Threshold = Annotated[float | None, Field(ge=0.0, le=1.0, description="prune below this score (default 0.5)")]


class MessageIn(BaseModel):
    role: Literal["user", "assistant", "tool_call", "tool_output", "tool"]
    content: str
    name: str | None = None
    call_id: str | None = None
    is_error: bool = False


class ToolResultOut(BaseModel):
    id: int
    tool: str | None
    score: float | None
    decision: Literal["keep", "truncate", "drop"]
    chars_before: int
    chars_after: int


class ToolsOut(BaseModel):
    results: list[ToolResultOut]
    chars_before: int
    chars_after: int
    status: str = Field(description='"judged", "not worth a call" (saving under the floor) or "disabled"')
    judge: dict[str, str]
    errors: list[str]


class ToolsPruneOut(ToolsOut):
    messages: list[MessageIn] = Field(description="the history with the decisions applied")


Messages = Annotated[
    list[MessageIn],
    Field(
        description="the history: user, assistant, tool_call and tool_output "
        "messages, oldest first (tool outputs name their call_id)"
    ),
]

_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


def _common(r: pipeline.JudgeResult) -> dict[str, Any]:
    return {
        "threshold": r.threshold,
        "judge": {"name": r.judge.name, "model": r.judge.model},
        "mode": r.mode,
        "errors": r.errors,
        "warnings": r.warnings,
        "unstructured": r.unstructured,
        "incomplete_span": r.incomplete_span,
        "guarded": r.guarded,
    }


def _entries(result: pipeline.JudgeResult) -> list[EntryOut]:
    return [EntryOut(**{k: getattr(e, k) for k in EntryOut.model_fields}) for e in result.entries]


def _local_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid
        return str(os.getuid())


def create_server(
    config: Config | None = None,
    *,
    config_path: str | None = None,
    log_dir: str | None = None,
    remote: bool = False,
) -> MCPServer:
    """The server; without a ``config``, the configuration (``config_path``, else ``$SJC_CONFIG``, else the
    default file) is loaded at the first tool call. ``log_dir``: one decision log per user in it. ``remote``:
    callers are not this machine's user (HTTP): the user comes from the request, and ``transcript_path``
    needs ``allowed_roots`` set in the config file."""
    server = MCPServer("sjc-mcp", instructions=INSTRUCTIONS, version=__version__)
    loaded: list[Config] = [config] if config is not None else []

    def cfg() -> Config:
        if not loaded:
            try:
                loaded.append(load_config(config_path))
            except SJCError as exc:
                raise ToolError(f"configuration: {exc}") from None
        return loaded[0]

    def user_of(ctx: Context | None) -> str | None:
        """Who made this call: on HTTP the ``X-SJC-User`` header (``anonymous`` without one), on stdio this
        machine's login name; None when it matters to nothing (stdio without a log folder)."""
        if remote:
            headers = ctx.headers if ctx is not None else None
            return safe_user(headers.get(USER_HEADER) if headers is not None else None)
        return safe_user(_local_user()) if log_dir else None

    def call_config(user: str | None) -> Config:
        """The configuration for one call: the user's own decision log under ``log_dir``."""
        base = cfg()
        if log_dir and user:
            return base.replace(decision_log=os.path.join(log_dir, f"{user}.jsonl"))
        return base

    def call_meta(user: str | None) -> dict[str, Any]:
        return {"surface": "mcp", **({"user": user} if remote and user else {})}

    def read_allowed(transcript_path: str, boundary: int | None, user: str | None) -> tuple[Any, dict[str, Any]]:
        """A compaction of a transcript under the allowed roots, and what the log should say about it."""
        from sjc_mcp.hosts import read_boundary
        from sjc_mcp.server.roots import check_allowed

        config = cfg()
        if remote and "allowed_roots" not in config.explicit:
            raise SJCError(
                "transcript_path reads files on the server's machine, not the caller's: over HTTP it needs "
                "allowed_roots set in the server's config file; send the summary and evidence instead"
            )
        b = read_boundary(check_allowed(transcript_path, config), boundary)
        return b, {**call_meta(user), "transcript": transcript_path}

    def run(op: str, args: dict[str, Any]) -> pipeline.JudgeResult:
        try:
            user = user_of(args["ctx"])
            summary: str | None = args["summary"]
            common: dict[str, Any] = {
                "previous_summary": args["previous_summary"],
                "task": args["task"],
                "host": args["host"],
                "threshold": args["threshold"],
                "config": call_config(user),
            }
            if args["transcript_path"]:
                b, meta = read_allowed(args["transcript_path"], args["boundary"], user)
                r = pipeline.judge_boundary(
                    b, prune=op == "prune", summary=summary, evidence=args["evidence"], meta=meta, log=True, **common
                )
                if r.note:
                    raise SJCError(f"nothing to judge at boundary {b.index}: {r.note}")
                return r
            if args["boundary"] is not None:
                raise SJCError("boundary needs transcript_path")
            if not summary:
                raise SJCError("give a summary, or a transcript_path to take it from")
            fn = pipeline.prune_summary if op == "prune" else pipeline.judge_summary
            return fn(summary, list(args["evidence"]), meta=call_meta(user), log=True, **common)
        except SJCError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def judge_summary(
        summary: Summary = None,
        evidence: Evidence = [],  # noqa: B006 - pydantic copies the default
        previous_summary: Previous = None,
        task: Task = None,
        host: Host = None,
        threshold: Threshold = None,
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        ctx: Context | None = None,
    ) -> JudgeOut:
        """Score every entry of a compaction summary: does it carry information from a tool output, a
        user message or the previous summary, rather than only plans or readings of the task?"""
        r = run("judge", locals())
        return JudgeOut(entries=_entries(r), **_common(r))

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def prune_summary(
        summary: Summary = None,
        evidence: Evidence = [],  # noqa: B006 - pydantic copies the default
        previous_summary: Previous = None,
        task: Task = None,
        host: Host = None,
        threshold: Threshold = None,
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        ctx: Context | None = None,
    ) -> PruneOut:
        """Return the summary with the entries no source supports deleted; every kept byte and every
        heading is unchanged. Entries the judge could not score are kept."""
        r = run("prune", locals())
        assert isinstance(r, pipeline.PruneResult)
        return PruneOut(
            entries=_entries(r),
            **_common(r),
            pruned_summary=r.pruned_summary,
            removed=r.removed,
            kept=r.kept,
            chars_before=r.chars_before,
            chars_after=r.chars_after,
        )

    def run_tools(
        op: str,
        messages: list[MessageIn],
        transcript_path: str | None,
        boundary: int | None,
        task: str | None,
        ctx: Context | None,
    ) -> Any:
        from sjc_mcp.tools import relevance

        try:
            user = user_of(ctx)
            meta: dict[str, Any] = call_meta(user)
            if transcript_path:
                b, meta = read_allowed(transcript_path, boundary, user)
                items = b.span
            else:
                if sum(len(m.content) for m in messages) > pipeline.MAX_EVIDENCE_BYTES:
                    raise SJCError(f"messages are larger than {pipeline.MAX_EVIDENCE_BYTES:,} bytes")
                items = relevance.messages_from_json([m.model_dump() for m in messages])
            fn = relevance.prune_tool_results if op == "prune" else relevance.judge_tool_results
            return fn(items, config=call_config(user), task=task, meta=meta)
        except SJCError as exc:
            raise ToolError(str(exc)) from None

    def tools_out(r: Any) -> dict[str, Any]:
        return {
            "results": [ToolResultOut(**{k: getattr(v, k) for k in ToolResultOut.model_fields}) for v in r.results],
            "chars_before": r.chars_before,
            "chars_after": r.chars_after,
            "status": r.status,
            "judge": r.judge,
            "errors": r.errors,
        }

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def judge_tool_results(
        messages: Messages = [],  # noqa: B006 - pydantic copies the default
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        task: Task = None,
        ctx: Context | None = None,
    ) -> ToolsOut:
        """Score every completed tool result outside the first user message and the most recent turns: is it
        still needed to complete the current task? Decisions: keep, truncate or drop."""
        return ToolsOut(**tools_out(run_tools("judge", messages, transcript_path, boundary, task, ctx)))

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def prune_tool_results(
        messages: Messages = [],  # noqa: B006 - pydantic copies the default
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        task: Task = None,
        ctx: Context | None = None,
    ) -> ToolsPruneOut:
        """Return the history with the tool results no longer needed dropped (call and result) or truncated
        (the call stays, the result is cut to its head with a note); everything else unchanged."""
        r = run_tools("prune", messages, transcript_path, boundary, task, ctx)
        msgs = [
            MessageIn(role=m.role, content=m.content, name=m.name, call_id=m.call_id, is_error=m.is_error)
            for m in r.messages
        ]
        return ToolsPruneOut(**tools_out(r), messages=msgs)

    return server
