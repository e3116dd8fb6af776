"""Tokenising shared by retrieval and the offline judge."""

from __future__ import annotations

import re

_STOPWORDS = """
a an and are as at be been but by can could did do does done for from had has have he her his how i
if in into is it its itself just let me more most my no not now of on once only or other our out
over own same she should so some such than that the their them then there these they this those
through to too under until up us very was we were what when where which while who whom why will
with would you your yes also after before again all any both each few further here off because
being having doing about above below between during against
"""
STOPWORDS = frozenset(_STOPWORDS.split())
WORD = re.compile(r"[a-z0-9]{2,}")  # greedy: a run of one character never matches


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric words, stopwords and one-letter words dropped (for BM25)."""
    stop = STOPWORDS
    return [t for t in WORD.findall(text.lower()) if t not in stop]


def estimate_tokens(text: str) -> int:
    """A model-token estimate (about four characters a token); labelled as an estimate wherever shown."""
    return (len(text) + 3) // 4


_FORWARD = re.compile(
    r"pending|todo|next step|current work|decision|plan|task state|task_state|remaining|user asks|\bnext\b",
    re.IGNORECASE,
)


def is_forward_section(section: str) -> bool:
    """Forward-looking sections (pending tasks, open TODOs, next steps, current work, decisions, plans,
    task state): where compressors put what they invent, and where the judge is measured."""
    return bool(_FORWARD.search(section))
