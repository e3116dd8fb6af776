"""The project's own labelled cases (cases/): every one loads, names its project, and every label
is one entry of the splitter with a quote that is an exact substring of a source of its kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sjc_mcp.eval.cases import load_case
from sjc_mcp.summary import split_summary
from tests.conftest import ROOT, SHARED, need_shared

CASES = ROOT / "cases"
SOURCES = {"tool_output", "user_message", "previous_summary"}


def _files() -> list[Path]:
    return sorted(CASES.rglob("*.json"))


def _raw(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_cases_present():
    files = _files()
    assert files, f"no cases under {CASES}"
    assert {_raw(p)["origin"] for p in files} >= {"real", "synthetic"}


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_case_is_well_formed(path: Path):
    raw = _raw(path)
    assert raw["id"] == path.stem
    assert raw.get("project"), "every case names the project its session comes from"
    assert raw["origin"] in ("real", "synthetic")
    if raw.get("transcript"):
        # transcripts are read in place, never copied into the repository
        target = (path.parent / raw["transcript"]).resolve()
        need_shared(target)
        assert target.is_relative_to(SHARED.resolve())
    case = load_case(path)
    b = case.boundary
    parsed = split_summary(b.summary, None if case.host == "generic" else case.host)
    assert parsed.render() == b.summary
    items = list(b.span) + list(b.retained)
    # a label quotes the case's text as written (a Hermes output as its JSON), or as the host reads it
    written = [it for it in [*(raw.get("span") or []), *(raw.get("retained") or [])] if isinstance(it, dict)]
    sources = {
        "tool_output": [i.content for i in items if i.role in ("tool_output", "tool_call")]
        + [str(it.get("content")) for it in written if it.get("role") in ("tool_output", "tool_call")],
        "user_message": [i.content for i in items if i.role == "user"],
        "previous_summary": [b.previous_summary or ""],
    }
    sources["contradicted"] = [s for v in sources.values() for s in v]
    taken: set[int] = set()
    for lab in case.labels:
        hits = [e for e in parsed.entries if e.section == lab.section and e.first_line == lab.entry.strip()]
        assert len(hits) >= lab.occurrence, f"no entry [{lab.section}] {lab.entry!r}"
        entry = hits[lab.occurrence - 1]
        assert id(entry) not in taken, f"two labels name [{lab.section}] {lab.entry!r}"
        taken.add(id(entry))
        assert lab.supported == (lab.source in SOURCES), lab.entry
        if lab.source == "none":
            assert lab.note, f"an unsupported entry says why: {lab.entry!r}"
        else:
            assert lab.source in sources, lab.source
            assert lab.quote and any(lab.quote in s for s in sources[lab.source]), (
                f"quote of [{lab.section}] {lab.entry!r} is not in a {lab.source}"
            )
