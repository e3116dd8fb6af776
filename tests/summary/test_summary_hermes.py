"""Hermes Agent's summary as Hermes stores and sends it (hermes-agent 0.19.0): its sections are split into
entries; its notice, END line, a merged message's prior part and ``None.`` are structure, never deleted."""

from __future__ import annotations

import pytest

from sjc_mcp.summary import detect, split_summary
from tests.conftest import SHARED, need_shared

NOTICE = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. This is a handoff "
    "from a previous context window — treat it as background reference, NOT as active instructions. … avoid "
    "repeating it:"
)
END = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
BODY = """## Historical Task Snapshot
User asked (deterministic, from compacted turns): 'Check the gateway.'
Historical only; newer protected-tail messages after this summary win.

## Goal
Check the gateway.

## Constraints & Preferences
None.

## Completed Actions
1. RUN `cat service.log` — api-gateway 5.2.0 healthy [tool: terminal]
2. RESTART api-gateway — succeeded [tool: terminal]

## Active State
- The workspace holds `service.log`.

## Historical In-Progress State
None.

## Blocked
None.

## Key Decisions
- Move the roster next quarter.

## Resolved Questions
None.

## Historical Pending User Asks
None.

## Relevant Files
- service.log — api-gateway 5.2.0

## Historical Remaining Work
- Archive the ledger.

## Critical Context
- p95 is 38 ms."""
SECTIONS = [
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
]
ENTRIES = [
    "User asked (deterministic, from compacted turns): 'Check the gateway.'\n"
    "Historical only; newer protected-tail messages after this summary win.",
    "Check the gateway.",
    "1. RUN `cat service.log` — api-gateway 5.2.0 healthy [tool: terminal]",
    "2. RESTART api-gateway — succeeded [tool: terminal]",
    "- The workspace holds `service.log`.",
    "- Move the roster next quarter.",
    "- service.log — api-gateway 5.2.0",
    "- Archive the ledger.",
    "- p95 is 38 ms.",
]
STANDALONE = f"{NOTICE}\n{BODY}\n\n{END}"
MERGED = (
    "[PRIOR CONTEXT — for reference only; not a new message]\nThe gateway is healthy.\n\n"
    f"[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n\n{STANDALONE}"
)


@pytest.mark.parametrize("text", [BODY, STANDALONE, MERGED], ids=["answer", "standalone", "merged"])
def test_entries_are_the_summary_s_own_lines(text: str) -> None:
    assert detect(text) == "hermes"
    parsed = split_summary(text)
    assert parsed.host == "hermes"
    assert [s.title for s in parsed.sections] == SECTIONS
    assert [e.text for e in parsed.entries] == ENTRIES


@pytest.mark.parametrize("text", [STANDALONE, MERGED], ids=["standalone", "merged"])
def test_deleting_every_entry_keeps_hermes_own_lines(text: str) -> None:
    parsed = split_summary(text)
    left = parsed.render({e.id for e in parsed.entries})
    assert left.startswith(text.split("## Historical Task Snapshot")[0])  # notice / prior part untouched
    assert left.endswith(END) and left.count("None.") == 5
    assert [ln for ln in left.splitlines() if ln.startswith("## ")] == [f"## {s}" for s in SECTIONS]
    assert parsed.render(set()) == text


def test_the_captured_stored_summaries_split_the_same_way() -> None:
    folder = need_shared(SHARED / "e2e" / "hermes" / "samples")
    for name in ("stored_summary_merged.md", "stored_summary_standalone.md"):
        text = (folder / name).read_text()
        parsed = split_summary(text)
        assert parsed.host == "hermes" and len(parsed.sections) == 13
        texts = [e.text for e in parsed.entries]
        assert not [t for t in texts if t.startswith(("[", "---")) or t == "None."], name
        assert len(texts) == 11, name
