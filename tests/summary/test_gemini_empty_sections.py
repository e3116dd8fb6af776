"""A Gemini snapshot's note for an empty section is structure: never an entry, so never judged, never pruned and
never counted by the prune-share guard; a line that says anything more is an entry."""

from __future__ import annotations

import pytest

from sjc_mcp.summary import split_summary

EMPTY = [
    "None.",
    "None specified.",
    "No files were modified.",
    "No constraints were stated by the user.",
    "No explicit constraints provided.",
    "No specific constraints.",
    "No files were created or modified.",
    "No modifications have been made to any files.",
    "No tasks yet.",
]
SAYS_SOMETHING = [
    "No changes to the schema without review.",
    "No retries on 503 errors from the supplier feed.",
    "No files in tests/ may change.",
    "None of the 12 checks failed.",
]


def snapshot(line: str) -> str:
    return (
        "<state_snapshot>\n    <overall_goal>\n        Fix the flaky import.\n    </overall_goal>\n\n"
        f"    <active_constraints>\n        - {line}\n    </active_constraints>\n</state_snapshot>"
    )


@pytest.mark.parametrize("line", EMPTY)
def test_a_note_for_an_empty_section_is_structure(line: str) -> None:
    parsed = split_summary(snapshot(line))
    assert parsed.host == "gemini"
    assert [e.section for e in parsed.entries] == ["overall_goal"]
    assert parsed.render(set()) == snapshot(line)


@pytest.mark.parametrize("line", SAYS_SOMETHING)
def test_a_line_that_says_more_is_an_entry(line: str) -> None:
    parsed = split_summary(snapshot(line))
    assert [e.section for e in parsed.entries] == ["overall_goal", "active_constraints"]
    assert line in parsed.entries[1].text
