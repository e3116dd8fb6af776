"""Hermes Agent: the markdown sections its compressor asks for (checked with hermes-agent 0.19.0), as
Hermes stores and sends them.

The body is ``##`` sections (Historical Task Snapshot, Goal, Constraints & Preferences, Completed Actions with
items ``N. ACTION target — outcome [tool: name]``, Active State, …, Critical Context; ``None.`` in the empty
ones). Hermes wraps it: its "[CONTEXT COMPACTION — REFERENCE ONLY] …" notice on the first line and an
"--- END OF CONTEXT SUMMARY …" line at the end, and, when the summary is merged into the first kept message,
that message's own text before it between "[PRIOR CONTEXT — …]" and "[END OF PRIOR CONTEXT — COMPACTION SUMMARY
BELOW]". All of that is structure: never an entry, never deleted (Hermes finds its summary again by the
notice). An empty section's ``None.`` is a placeholder, as in every format. The raw answer of the
summarizer (no notice) is the same sections.
"""

from __future__ import annotations

from sjc_mcp.models import ParsedSummary
from sjc_mcp.summary import generic
from sjc_mcp.summary._engine import Builder
from sjc_mcp.summary._headings import Headings

NOTICES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
MERGED_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]"
MERGED_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
END_MARKER = "--- END OF CONTEXT SUMMARY"
PREFIXES = (*NOTICES, MERGED_HEADER)
NAMES = (
    "Historical Task Snapshot",
    "Goal",
    "Constraints & Preferences",
    "Completed Actions",
    "Active State",
    "Historical In-Progress State",
    "Blocked",
    "Key Decisions",
    "Resolved Questions",
    "Historical Pending User Asks",
    "Relevant Files",
    "Historical Remaining Work",
    "Critical Context",
    "Last Dropped Turns",  # Hermes' own fallback summary when the summarizer fails
    # the names of earlier releases, still in stored sessions
    "Constraints and Preferences",
    "Active Task",
    "In Progress",
    "Pending User Asks",
    "Remaining Work",
)
_STRUCTURE = (*NOTICES, MERGED_HEADER, MERGED_DELIMITER, END_MARKER)


def looks_like(text: str) -> bool:
    return text.lstrip().startswith(PREFIXES) or generic.count_names(text, NAMES) >= 3


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl == -1 else nl + 1


def _body(text: str) -> tuple[int, int]:
    """Where the summary is: after a merged message's prior part and the notice line, before the END line."""
    start = 0
    if text.lstrip().startswith(MERGED_HEADER) and MERGED_DELIMITER in text:
        start = _line_end(text, text.index(MERGED_DELIMITER))
    rest = text[start:]
    if rest.lstrip().startswith(NOTICES):
        start = _line_end(text, start + len(rest) - len(rest.lstrip()))
    end = len(text)
    k = text.rfind(END_MARKER)
    if k >= start and (k == 0 or text[k - 1] == "\n"):
        end = k
    return start, end


def _structure(line: str) -> bool:
    s = line.strip()
    return s.startswith(_STRUCTURE)


def parse(text: str) -> ParsedSummary:
    b = Builder(text, "hermes")
    start, end = _body(text)
    heads = Headings(NAMES)
    b.region(start, end, "", heading=heads, structure=_structure, inline=heads.inline)
    return b.build()
