"""The lexical judge reads a chunk's lines and their words in one pass where lines end only at "\\n": the
same lines and words as reading it line by line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjc_mcp.judges._signals_span import Span
from sjc_mcp.judges._signals_text import NOT_WORD3, WORD3
from sjc_mcp.models import Chunk, JudgeEntry, JudgeRequest, Origin, Source
from sjc_mcp.text import STOPWORDS

TEXTS = [
    "def test_cache(self):\n    assert cache.get('key') == 42\n\n\n  \nFAILED tests/test_cache.py::test_cache\n",
    "48 passed in 0.61s",
    "\nleading break\nand the ITEMS were 300 of them\n",
    "line one\r\nline two\rline three\x0bfour\x0cfive\x1csix\x1dseven\x1eeight\n",
    "caf\u00e9 r\u00e9sum\u00e9 na\u00efve\nthe \u2028 other\u2029 breaks\x85here",
    "     1\u2192import os\n     2\u2192K\u212aelvin \u0130stanbul \u017fome \u00dfTRASSE\n     3\u2192\n",
    "tabs\tand\x1fseparators\x1f\nonly punctuation: ---- ;;; ***\n{}\n",
    "",
    "\n\n\n",
    "a b c de fgh ijkl 12 123 abc123 ABC_def-ghi.jkl/mno",
]


def reference(text: str) -> list[tuple[str, set[str]]]:
    lowered = text.lower().splitlines()
    return [
        (ln, set(WORD3.findall(low)) - STOPWORDS)
        for ln, low in zip(text.splitlines(), lowered, strict=True)
        if ln.strip()
    ]


@pytest.mark.parametrize("text", TEXTS)
def test_lines_and_words_as_read_line_by_line(text):
    origin = Origin(kind="tool_output", name="Bash")
    chunk = Chunk(id=0, source=0, origin=origin, text=text, start=0)
    request = JudgeRequest(
        evidence=[chunk],
        entries=[JudgeEntry(id=0, section="S", text="- x", evidence=[0])],
        sources=[Source(kind="tool_output", content=text, name="Bash")],
    )
    span = Span(request)
    # a line keeps its words as read; without stopwords and short runs they are the reference's
    assert [(ln, set(ws) - NOT_WORD3) for ln, ws in span.lines[0]] == reference(text)
    assert span.words[0] == set().union(*(ws for _, ws in reference(text)))


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="ab1Z_ .\n\t\u212a\u0130\u017f\u00e9\u00df-", max_size=60))
def test_any_text_reads_as_line_by_line(text):
    test_lines_and_words_as_read_line_by_line(text)
