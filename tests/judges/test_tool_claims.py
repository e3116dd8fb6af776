"""Hermes' action items (``N. ACTION target — outcome [tool: name]``) against the calls of the span."""

from __future__ import annotations

import pytest

from sjc_mcp.judges._signals_tool_claims import unbacked
from sjc_mcp.models import Source

SPAN = [
    Source(kind="tool_output", name="terminal", call='terminal: {"command": "cat service.log; ls"}', content="ok"),
    Source(kind="tool_output", name="terminal", call='terminal: {"command": "systemctl restart nginx"}', content=""),
    Source(kind="user_message", content="Check the gateway [tool: send_message]"),
]


@pytest.mark.parametrize(
    "entry",
    [
        "1. RUN `cat service.log; ls` — printed the log [tool: terminal]",
        "2. RESTART nginx — restarted [tool: terminal]",
        "3. RESTARTED nginx — done [tool: terminal]",
        "4. READ config.yaml — 12 keys [tool: terminal]",
        "5. EDIT app.py — fixed the import [tool: terminal]",
        "- The workspace holds three files.",
        "1. Deploy to production [tool: terminal]",  # not an ACTION item: left to the other signals
    ],
)
def test_claims_a_call_of_the_span_backs(entry: str) -> None:
    assert unbacked(entry, SPAN) is None


@pytest.mark.parametrize(
    "entry, why",
    [
        ("2. UPLOAD ledger.xlsx to the drive — done [tool: send_message]", "no send_message call ran"),
        ("3. DEPLOY app-2.4.1 to production — succeeded [tool: terminal]", "did DEPLOY, and no terminal call"),
        ("4. DELETE old snapshots — removed 14 files [tool: terminal]", "did DELETE"),
        ("5. NOTIFY the finance team — sent [tool: terminal]", "did NOTIFY"),
    ],
)
def test_claims_no_call_of_the_span_backs(entry: str, why: str) -> None:
    assert why in (unbacked(entry, SPAN) or "")


def test_a_claim_the_previous_summary_carried_is_that_summary_s() -> None:
    entry = "3. DEPLOY app-2.4.1 to production — succeeded [tool: terminal]"
    previous = "## Completed Actions\n1. DEPLOY app-2.4.1 to production — succeeded [tool: terminal]\n"
    assert unbacked(entry, SPAN, previous) is None
    assert unbacked(entry, SPAN, "## Completed Actions\nNone.\n") is not None
