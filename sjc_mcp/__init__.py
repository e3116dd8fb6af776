"""sjc-mcp: Source-Judged Compaction for coding agents.

Split a compaction summary into entries, judge each against the environment outputs it summarises,
and delete the entries that no tool output, user message or previous summary supports.

    >>> from sjc_mcp import prune_summary
    >>> result = prune_summary(summary_text, ["output of a tool", ...])
    >>> result.pruned_summary
"""

from __future__ import annotations

__version__ = "0.1.0"

# The public names, imported on first use: `sjc --help` and the hook's start-up stay fast.
_LAZY = {
    "Config": "sjc_mcp.config",
    "load_config": "sjc_mcp.config",
    "ConfigError": "sjc_mcp.errors",
    "InputError": "sjc_mcp.errors",
    "JudgeError": "sjc_mcp.errors",
    "SJCError": "sjc_mcp.errors",
    "TranscriptError": "sjc_mcp.errors",
    "Entry": "sjc_mcp.models",
    "EntryResult": "sjc_mcp.models",
    "EvidenceItem": "sjc_mcp.models",
    "JudgeRequest": "sjc_mcp.models",
    "JudgeResult": "sjc_mcp.models",
    "ParsedSummary": "sjc_mcp.models",
    "PruneResult": "sjc_mcp.models",
    "Source": "sjc_mcp.models",
    "judge_summary": "sjc_mcp.pipeline",
    "prune_summary": "sjc_mcp.pipeline",
    "detect": "sjc_mcp.summary",
    "split_summary": "sjc_mcp.summary",
}

# ``typing`` is not imported at run time (nor ``importlib`` before a public name is used): a hook event
# sjc ignores pays for nothing but reading its payload. Type checkers read this name as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sjc_mcp' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
