"""sjc-mcp: Source-Judged Compaction for coding agents.

Split a compaction summary into entries, judge each against the environment outputs it summarises,
and delete the entries that no tool output, user message or previous summary supports.

    >>> from sjc_mcp import prune_summary
    >>> result = prune_summary(summary_text, ["output of a tool", ...])
    >>> result.pruned_summary
"""

from __future__ import annotations

from sjc_mcp.config import Config, load_config
from sjc_mcp.errors import ConfigError, InputError, JudgeError, SJCError, TranscriptError
from sjc_mcp.models import (
    Entry,
    EntryResult,
    EvidenceItem,
    JudgeRequest,
    JudgeResult,
    ParsedSummary,
    PruneResult,
    Source,
)
from sjc_mcp.pipeline import judge_summary, prune_summary
from sjc_mcp.summary import detect, split_summary

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "Entry",
    "EntryResult",
    "EvidenceItem",
    "InputError",
    "JudgeError",
    "JudgeRequest",
    "JudgeResult",
    "ParsedSummary",
    "PruneResult",
    "SJCError",
    "Source",
    "TranscriptError",
    "__version__",
    "detect",
    "judge_summary",
    "load_config",
    "prune_summary",
    "split_summary",
]
