from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjc_mcp.errors import InputError
from sjc_mcp.summary import detect, split_summary
from tests.conftest import FIXTURES, case_files, case_summary, load_case, need_shared


def first_lines(parsed):
    return [(e.section, e.first_line) for e in parsed.entries]


def check_spans(parsed) -> None:
    """Spans are ordered, disjoint, inside the text, and no heading falls inside an entry."""
    pos = 0
    for e in parsed.entries:
        assert pos <= e.start < e.end <= len(parsed.text)
        pos = e.end
    for s in parsed.sections:
        for e in parsed.entries:
            assert not (e.start < s.end and s.start < e.end), (s, e)


CC = """This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.

Analysis:
1. **Initial Request**: the user asked for X.
2. **Files Modified/Created**:
   - a.py

Summary:
1. Primary Request and Intent:
   - Fix the bug in `a.py`.
     - nested detail
     ```python
     x = 1
     ```
   Prose after the fence.

7. Pending Tasks (from TODO list):
   - Run the tests

9. Optional Next Step:
   Run tests and lint:
   ```bash
   make test
   ```

   This follows the plan which states:
   > "## Verification
   > 1. `make test` - passes"

If you need specific details from before compaction (like exact code snippets), read the full transcript at: /x.jsonl
Please continue the conversation from where we left it off without asking the user any further questions.
"""


def test_claude_code_transcript_form():
    p = split_summary(CC)
    assert p.host == "claude-code"
    assert [s.title for s in p.sections] == [
        "Analysis",
        "Primary Request and Intent",
        "Pending Tasks (from TODO list)",
        "Optional Next Step",
    ]
    assert first_lines(p) == [
        ("Analysis", "**Initial Request**: the user asked for X."),
        ("Analysis", "**Files Modified/Created**:"),
        ("Analysis", "a.py"),
        ("Primary Request and Intent", "Fix the bug in `a.py`."),
        ("Primary Request and Intent", "nested detail"),
        ("Primary Request and Intent", "Prose after the fence."),
        ("Pending Tasks (from TODO list)", "Run the tests"),
        ("Optional Next Step", "Run tests and lint:"),
        ("Optional Next Step", "This follows the plan which states:"),
    ]
    nested = p.entries[4]
    assert nested.parent == 3 and "x = 1" in nested.text and "```" in nested.text
    assert "> 1. `make test`" in p.entries[-1].text
    check_spans(p)
    # removing the fenced entry removes its fence and nothing else
    out = p.render({4})
    assert "x = 1" not in out and "nested detail" not in out
    assert out == CC.replace(CC[nested.start : nested.end], "", 1)
    # every closing line and the wrapper survive pruning everything
    everything = p.render({e.id for e in p.entries})
    for keep in (
        "This session is being continued",
        "Summary:",
        "Analysis:",
        "9. Optional Next Step:",
        "If you need specific details",
        "Please continue the conversation",
    ):
        assert keep in everything


def test_claude_code_raw_post_compact():
    raw = (
        "<analysis>\nLet me think.\n- the user wants A\n</analysis>\n\n<summary>\n1. Primary Request and Intent:\n"
        "   - Do A\n\n2. Pending Tasks:\n   - Deploy to prod</summary>\nTrailing words from the model."
    )
    p = split_summary(raw)
    assert p.host == "claude-code"
    assert first_lines(p) == [
        ("Analysis", "Let me think."),
        ("Analysis", "the user wants A"),
        ("Primary Request and Intent", "Do A"),
        ("Pending Tasks", "Deploy to prod"),
    ]
    out = p.render({3})
    assert out.endswith("2. Pending Tasks:\n</summary>\nTrailing words from the model.")
    check_spans(p)


def test_openclaw_sections_and_empty_section_keeps_heading():
    text = (
        "## Decisions\n- Use port 5433\n\n## Open TODOs\n- Add a healthcheck\n- Write docs\n\n"
        "## Constraints/Rules\n- No commits\n\n## Pending user asks\n- None\n\n## Exact identifiers\n- `db:5432`\n"
    )
    p = split_summary(text)
    assert p.host == "openclaw"
    todo = [e.id for e in p.entries if e.section == "Open TODOs"]
    out = p.render(set(todo))
    assert "## Open TODOs\n\n## Constraints/Rules" in out
    for h in ("## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers"):
        assert h in p.render({e.id for e in p.entries})


def test_codex_prefix_and_bold_headings():
    text = (
        "Another language model started to solve this problem and produced a summary of its thinking process. "
        "Here is the summary:\n**Progress**\n- Fixed `bucket.go`\n\n**Next steps**\n- Open a PR\n"
    )
    p = split_summary(text)
    assert p.host == "codex"
    assert first_lines(p) == [("Progress", "Fixed `bucket.go`"), ("Next steps", "Open a PR")]
    assert p.render({0, 1}).startswith("Another language model started")


def test_gemini_state_snapshot():
    text = (
        "<state_snapshot>\n    <overall_goal>\n        - Make load idempotent.\n    </overall_goal>\n"
        "    <key_knowledge>Retries are 3.</key_knowledge>\n    <task_state>\n        - [TODO] Re-run the DAG.\n"
        "    </task_state>\n</state_snapshot>\n"
    )
    p = split_summary(text)
    assert p.host == "gemini"
    assert first_lines(p) == [
        ("overall_goal", "Make load idempotent."),
        ("key_knowledge", "Retries are 3."),
        ("task_state", "[TODO] Re-run the DAG."),
    ]
    out = p.render({1, 2})
    assert "<key_knowledge></key_knowledge>" in out and "<task_state>\n    </task_state>" in out
    check_spans(p)


def test_hermes_notice_is_structure():
    text = (
        "[CONTEXT COMPACTION — REFERENCE ONLY] The following is background reference, NOT active "
        "instructions.\n\n## Goal\n- Ship it\n\n## Completed Actions\n1. EDIT src/x.py — ok [tool: edit_file]\n"
    )
    p = split_summary(text)
    assert p.host == "hermes"
    assert first_lines(p) == [("Goal", "Ship it"), ("Completed Actions", "EDIT src/x.py — ok [tool: edit_file]")]


def test_generic_paragraphs_and_bullets():
    text = "First paragraph\nwraps here.\n\n- a bullet\n- another\n\nLast paragraph."
    p = split_summary(text)
    assert p.host == "generic"
    assert [e.first_line for e in p.entries] == ["First paragraph", "a bullet", "another", "Last paragraph."]
    assert p.entries[0].text == "First paragraph\nwraps here."
    assert p.render({0}) == "- a bullet\n- another\n\nLast paragraph."


def test_unclosed_fence_cannot_swallow_a_heading():
    text = "## A\n- item\n```\nnot closed\n## B\n- other\n"
    p = split_summary(text)
    assert [s.title for s in p.sections] == ["A", "B"]
    assert "## B" in p.render({e.id for e in p.entries})


def test_forced_host_and_unknown_host():
    assert split_summary("## X\n- y\n", host="generic").host == "generic"
    with pytest.raises(InputError):
        split_summary("x", host="nope")
    assert detect("<state_snapshot>\n</state_snapshot>") == "gemini"


# ---- every labelled entry is exactly one entry ----------------------------------------------------


@pytest.mark.parametrize("path", case_files("dev", "slices"), ids=lambda p: p.stem)
def test_every_labelled_entry_splits_to_one_entry(path):
    case = load_case(path)
    summary = case_summary(case, path)
    p = split_summary(summary, None if case["host"] == "generic" else case["host"])
    assert p.render() == summary
    check_spans(p)
    for lab in case["labels"]:
        hits = [e for e in p.entries if e.section == lab["section"] and e.first_line == lab["entry"].strip()]
        assert len(hits) >= lab.get("occurrence", 1), lab["entry"]
        # the label is the first line of the entry, and the entry is not split further
        assert hits[lab.get("occurrence", 1) - 1].first_line == lab["entry"].strip()


def test_labelled_cases_present():
    need_shared(PROVENANCE_DIR := FIXTURES.parent / "provenance")
    assert case_files("dev"), f"no cases in {PROVENANCE_DIR}"


# ---- render invariants, on generated summaries ---------------------------------------------------

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz`_./0123456789", min_size=1, max_size=8).filter(
    lambda w: w.strip("`") and w.count("`") % 2 == 0
)
_phrase = st.lists(_word, min_size=1, max_size=6).map(" ".join)


@st.composite
def _item(draw, depth: int = 0):
    marker = draw(st.sampled_from(["-", "*", "1.", "2)", "+"]))
    indent = "   " * depth
    lines = [f"{indent}{marker} {draw(_phrase)}"]
    if draw(st.booleans()):
        lines.append(f"{indent}  {draw(_phrase)}")  # wrapped continuation
    if draw(st.integers(0, 4)) == 0:
        lines += [f"{indent}  ```", f"{indent}  {draw(_phrase)}", f"{indent}  ## not a heading", f"{indent}  ```"]
    if depth < 2 and draw(st.integers(0, 3)) == 0:
        lines += draw(_item(depth + 1)).split("\n")
    return "\n".join(lines)


@st.composite
def _section(draw, style: str, i: int):
    title = draw(_phrase).replace("`", "")
    head = {"md": f"## {title}", "cc": f"{i + 1}. {title}:", "bold": f"**{title}**"}[style]
    blocks = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 3)) == 0:
            blocks.append("\n" + draw(_phrase) + ("\n" + draw(_phrase) if draw(st.booleans()) else ""))
        else:
            blocks.append(draw(_item()))
    return "\n".join([head, *blocks])


@st.composite
def summaries(draw):
    style = draw(st.sampled_from(["md", "cc", "bold"]))
    secs = [draw(_section(style, i)) for i in range(draw(st.integers(1, 4)))]
    body = "\n\n".join(secs) + draw(st.sampled_from(["", "\n", "\n\n"]))
    if style == "cc":
        body = (
            "This session is being continued from a previous conversation that ran out of context.\n\n"
            "Summary:\n" + body + "\nPlease continue the conversation from where we left it off.\n"
        )
    return body


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(summaries(), st.data())
@pytest.mark.slow
def test_render_invariants_generated(text, data):
    p = split_summary(text)
    assert p.render() == text
    check_spans(p)
    remove = set(data.draw(st.sets(st.sampled_from([e.id for e in p.entries])) if p.entries else st.just(set())))
    out = p.render(remove)
    expected, pos = [], 0
    for e in p.entries:
        if e.id in remove:
            expected.append(text[pos : e.start])
            pos = e.end
    assert out == "".join(expected) + text[pos:]
    # every heading stays, and what is kept splits again into the same entries
    again = split_summary(out, p.host)
    assert [s.title for s in again.sections] == [s.title for s in p.sections]
    kept = [e.text for e in p.entries if e.id not in remove]
    if again.unstructured:  # nothing left, or one block of text and no heading: nothing to judge, by design
        assert not kept or (len(kept) == 1 and not [s for s in p.sections if s.title != "Analysis"]), again.unstructured
    else:
        assert [e.text for e in again.entries] == kept


def _real_summaries():
    out = []
    for path in case_files("dev"):
        case = load_case(path)
        if case.get("summary"):
            out.append(case["summary"])
    cc = FIXTURES / "claude-code"
    if cc.is_dir():
        for f in sorted(cc.glob("*.jsonl")):
            for line in f.open():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("isCompactSummary") and isinstance(rec["message"]["content"], str):
                    out.append(rec["message"]["content"])
    return out


REAL = _real_summaries()


@pytest.mark.skipif(not REAL, reason="../shared is absent: no real summaries to check")
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@pytest.mark.slow
def test_render_invariants_real(data):
    text = data.draw(st.sampled_from(REAL))
    p = split_summary(text)
    assert p.render() == text
    check_spans(p)
    remove = data.draw(st.sets(st.sampled_from([e.id for e in p.entries])))
    out = p.render(remove)
    for s in p.sections:
        assert text[s.start : s.end] in out
    kept = [e for e in p.entries if e.id not in remove]
    pos = 0
    for e in kept:  # kept entries appear in order, byte for byte
        found = out.find(text[e.start : e.end], pos)
        assert found >= 0
        pos = found + (e.end - e.start)
    assert len(out) == len(text) - sum(e.end - e.start for e in p.entries if e.id in remove)


# ---- markup: sections by their names, whatever surrounds them -------------------------------------

CC_2_1_217 = """This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.

1. **Primary Request and Intent:**
   a. **Initial (analysis):** The user asked to port the tokenizer to Rust.
   b. **Follow-up:** keep the public API of `lex()`.

2. **Key Technical Concepts:**
   - serde, `thiserror`

7. **Pending Tasks:**
   a. Write the migration guide
      i. with a table of renamed types
   b. Publish 0.3.0

8. **Current Work:** porting `lexer.rs`, 14 of 31 tests pass.

9. **Optional Next Step:**
   Run `cargo test` again.

If you need specific details from before compaction (like exact code snippets), read the full transcript at: /x.jsonl
"""


def test_claude_code_bold_numbered_headings_and_lettered_items():
    """The shape Claude Code 2.1.217 wrote: no analysis, ``1. **Name:**`` headings, ``a.`` items."""
    for text in (CC_2_1_217, CC_2_1_217.replace("\n", "\r\n")):
        p = split_summary(text)
        assert p.host == "claude-code" and p.unstructured is None
        assert [s.title for s in p.sections] == [
            "Primary Request and Intent",
            "Key Technical Concepts",
            "Pending Tasks",
            "Current Work",
            "Optional Next Step",
        ]
        assert first_lines(p) == [
            ("Primary Request and Intent", "**Initial (analysis):** The user asked to port the tokenizer to Rust."),
            ("Primary Request and Intent", "**Follow-up:** keep the public API of `lex()`."),
            ("Key Technical Concepts", "serde, `thiserror`"),
            ("Pending Tasks", "Write the migration guide"),
            ("Pending Tasks", "with a table of renamed types"),
            ("Pending Tasks", "Publish 0.3.0"),
            ("Current Work", "porting `lexer.rs`, 14 of 31 tests pass."),
            ("Optional Next Step", "Run `cargo test` again."),
        ]
        assert p.entries[4].parent == 3
        check_spans(p)
        out = p.render({e.id for e in p.entries})
        nl = "\r\n" if "\r\n" in text else "\n"
        assert f"8. **Current Work:**{nl}" in out  # an inline entry goes, its heading stays
        assert f"7. **Pending Tasks:**{nl}{nl}8." in out
        assert "\r" not in "".join(e.text for e in p.entries)


def test_sections_found_by_name_without_the_wrapper():
    text = "## Primary Request and Intent\n- port it\n\nKey Technical Concepts:\n- serde\n\n**Pending Tasks**\n- ship\n"
    assert detect(text) == "claude-code"
    assert first_lines(split_summary(text)) == [
        ("Primary Request and Intent", "port it"),
        ("Key Technical Concepts", "serde"),
        ("Pending Tasks", "ship"),
    ]


def test_a_plain_section_name_out_of_order_is_text():
    text = "1. Primary Request and Intent:\n   - a\n\n8. Current Work:\n   - b\n\nPending Tasks:\n\n- c\n"
    p = split_summary(text, "claude-code")
    assert [s.title for s in p.sections] == ["Primary Request and Intent", "Current Work"]
    assert ("Current Work", "Pending Tasks:") in first_lines(p)


def test_analysis_without_summary_line_ends_where_the_sections_begin():
    text = (
        "This session is being continued from a previous conversation.\n\n**Analysis:**\n"
        "1. The user asked for X.\n**Current Work**:\n   - was editing y.py\n\n"
        "1. **Primary Request and Intent:**\n   - X\n\n8. **Current Work:**\n   - y.py\n"
    )
    p = split_summary(text)
    assert [s.title for s in p.sections] == ["Analysis", "Primary Request and Intent", "Current Work"]
    assert [e.section for e in p.entries] == ["Analysis"] * 2 + ["Primary Request and Intent", "Current Work"]
    assert "**Current Work**:" in p.entries[0].text  # the analysis naming a section is still analysis


def test_other_formats_in_other_markups():
    oc = "1. **Decisions:**\n- port 5433\n\n2. **Open TODOs:**\n- docs\n\n3. **Exact identifiers:**\n- `db:5432`\n"
    assert detect(oc) == "openclaw" and len(split_summary(oc).entries) == 3
    gm = "## overall_goal\n- idempotent load\n\n**key_knowledge:** retries are 3\n\n## task_state\n- [TODO] rerun\n"
    p = split_summary(gm)
    assert p.host == "gemini"
    assert first_lines(p) == [
        ("overall_goal", "idempotent load"),
        ("key_knowledge", "retries are 3"),
        ("task_state", "[TODO] rerun"),
    ]
    hermes = "Goal:\n- ship it\n\nCompleted Actions:\n(a) EDIT src/x.py\n(b) RAN pytest\n\nKey Decisions:\n- keep it\n"
    hermes += "\nRelevant Files:\n- src/x.py\n"
    p = split_summary(hermes)
    assert p.host == "hermes"
    assert [s.title for s in p.sections] == ["Goal", "Completed Actions", "Key Decisions", "Relevant Files"]
    assert first_lines(p)[1:3] == [("Completed Actions", "EDIT src/x.py"), ("Completed Actions", "RAN pytest")]


# ---- what cannot be split is not judged ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "The agent fixed the parser and then decided to deploy the release to all customers next week.\n",
            "no structure",
        ),
        ("- one lone item\n", "no structure"),
        ("\x00\x01\x02abc\x00" * 50, "not text"),
        ("ok" + "\x07\x08\x01" * 40, "not text"),
        ("caf\ufffd " * 40, "too damaged"),
        ("## Decisions\n\n## Open TODOs\n", "no entries"),
        ("   \n\n", "empty"),
    ],
)
def test_unstructured_summaries_have_no_entries(text, why):
    p = split_summary(text)
    assert p.entries == [] and p.unstructured and p.unstructured.startswith(why)
    assert p.render() == text and p.render({0, 1}) == text


def test_two_paragraphs_or_one_heading_are_structure():
    assert split_summary("First paragraph.\n\nSecond paragraph.\n").unstructured is None
    assert split_summary("## Progress\nAll done.\n").unstructured is None


@pytest.mark.parametrize(
    "placeholder",
    ["None.", "- None", "(none)", "None captured.", "No prior history.", "No files were modified.", "N/A"],
)
def test_a_placeholder_for_an_empty_section_is_structure(placeholder):
    """What a host writes for an empty section is never an entry: never judged, never pruned, never counted
    by the prune-share guard."""
    from sjc_mcp.pipeline import prune_summary

    text = (
        f"## Decisions\n{placeholder}\n\n## Open TODOs\n- Publish version 2.0 to PyPI\n\n"
        f"## Exact identifiers\n{placeholder}\n- `pytest -q`: 48 passed in 0.61s\n- port 8431 in config.yaml\n"
    )
    parsed = split_summary(text)
    assert [e.first_line for e in parsed.entries] == [
        "Publish version 2.0 to PyPI",
        "`pytest -q`: 48 passed in 0.61s",
        "port 8431 in config.yaml",
    ]
    r = prune_summary(text, ["pytest -q\n48 passed in 0.61s", "config.yaml\nport: 8431"], log=False)
    assert [e.decision for e in r.entries] == ["prune", "keep", "keep"] and r.pruned_summary.count(placeholder) == 2
    assert split_summary("## Notes\n- No tests were added to the suite\n").entries  # a claim, not a placeholder
