"""The MCP server: an ``MCPServer`` (the SDK's public API) with the four tools of ``sjc_mcp.server.tools``.

Each tool is a thin function the SDK reads its input schema from (``sjc_mcp.server.schema``); it calls
the plain function of the same name and returns the structured answer. A fault the caller can fix
(``SJCError``) is a tool error (``ToolError``: the result has ``isError`` set and says what to fix), never a
protocol error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from sjc_mcp import __version__
from sjc_mcp.config import Config
from sjc_mcp.errors import SJCError
from sjc_mcp.server import tools
from sjc_mcp.server.schema import (
    BoundaryN,
    Evidence,
    Host,
    JudgeAnswer,
    Messages,
    Previous,
    PruneAnswer,
    Summary,
    Task,
    Threshold,
    ToolsAnswer,
    ToolsPruneAnswer,
    TranscriptPath,
    judge_answer,
    message_dicts,
    prune_answer,
    tools_answer,
    tools_prune_answer,
)
from sjc_mcp.server.users import USER_HEADER

INSTRUCTIONS = (
    "Source-Judged Compaction. After a compaction, call prune_summary with the summary and the tool "
    "outputs and user messages it was written from: entries no source supports (plans and inventions "
    "of the compressor) are removed, everything else comes back byte for byte."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

R = TypeVar("R")


def _call(fn: Callable[[tools.Calls, Any, str | None], R], calls: tools.Calls, req: Any, ctx: Context | None) -> R:
    """``fn`` for this request; an ``SJCError`` becomes the call's tool error. Remote callers name their
    user in a header of the request (on stdio there is none)."""
    headers = ctx.headers if calls.remote and ctx is not None else None
    try:
        return fn(calls, req, headers.get(USER_HEADER) if headers is not None else None)
    except SJCError as exc:
        raise ToolError(str(exc)) from None


def create_server(
    config: Config | None = None,
    *,
    config_path: str | None = None,
    log_dir: str | None = None,
    remote: bool = False,
) -> MCPServer:
    """The server; without a ``config``, the configuration (``config_path``, else ``$SJC_CONFIG``, else the
    default file) is read at the first tool call. ``log_dir``: one decision log per user in it. ``remote``:
    callers are not this machine's user (HTTP): the user comes from the request, and ``transcript_path``
    needs ``allowed_roots`` set in the config file."""
    calls = tools.Calls(config, config_path=config_path, log_dir=log_dir, remote=remote)
    server: MCPServer = MCPServer("sjc-mcp", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    _summary_tools(server, calls)
    _history_tools(server, calls)
    return server


def _summary_tools(server: MCPServer, calls: tools.Calls) -> None:
    @server.tool(annotations=READ_ONLY, structured_output=True)
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
    ) -> JudgeAnswer:
        """Score every entry of a compaction summary: does it carry information from a tool output, a
        user message or the previous summary, rather than only plans or readings of the task?"""
        req = tools.SummaryRequest(
            summary,
            evidence,
            previous_summary,
            task,
            host,
            threshold,
            transcript_path=transcript_path,
            boundary=boundary,
        )
        return judge_answer(_call(tools.judge_summary, calls, req, ctx))

    @server.tool(annotations=READ_ONLY, structured_output=True)
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
    ) -> PruneAnswer:
        """Return the summary with the entries no source supports deleted; every kept byte and every
        heading is unchanged. Entries the judge could not score are kept."""
        req = tools.SummaryRequest(
            summary,
            evidence,
            previous_summary,
            task,
            host,
            threshold,
            transcript_path=transcript_path,
            boundary=boundary,
        )
        return prune_answer(_call(tools.prune_summary, calls, req, ctx))


def _history_tools(server: MCPServer, calls: tools.Calls) -> None:
    @server.tool(annotations=READ_ONLY, structured_output=True)
    def judge_tool_results(
        messages: Messages = [],  # noqa: B006 - pydantic copies the default
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        task: Task = None,
        ctx: Context | None = None,
    ) -> ToolsAnswer:
        """Score every completed tool result outside the first user message and the most recent turns: is it
        still needed to complete the current task? Decisions: keep, truncate or drop."""
        req = tools.HistoryRequest(message_dicts(messages), transcript_path, boundary, task)
        return tools_answer(_call(tools.judge_tool_results, calls, req, ctx))

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def prune_tool_results(
        messages: Messages = [],  # noqa: B006 - pydantic copies the default
        transcript_path: TranscriptPath = None,
        boundary: BoundaryN = None,
        task: Task = None,
        ctx: Context | None = None,
    ) -> ToolsPruneAnswer:
        """Return the history with the tool results no longer needed dropped (call and result) or truncated
        (the call stays, the result is cut to its head with a note); everything else unchanged."""
        req = tools.HistoryRequest(message_dicts(messages), transcript_path, boundary, task)
        return tools_prune_answer(_call(tools.prune_tool_results, calls, req, ctx))
