"""Text helpers shared below every stage: tokenising (retrieval, the offline judge), list markers
(the splitter, entries' first lines), section kinds and telling text from binary."""

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


# A list item's marker: a bullet, a number (``1.`` ``2)``), a letter or roman numeral (``a.`` ``iv)``)
# or one in parentheses (``(a)`` ``(3)``). A letter needs a space after it, so a word never reads as one.
BULLET_RE = re.compile(
    r"^([ \t]*)(?:(?:[-*+•]|\d{1,3}[.)]|\((?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})\))(?:[ \t]+|$)"
    r"|(?:[A-Za-z]|[ivxIVX]{2,4})[.)][ \t]+)"
)


# The only characters a case-insensitive pattern matches to an ASCII letter (İ ı ſ and the Kelvin sign;
# ``tests/test_redact_triggers.py`` checks the list against every code point).
FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def safe_lower(text: str) -> str | None:
    """``text`` lower-cased, for a quick test that an ASCII word a case-insensitive pattern spells out is
    in it before the pattern is run; None when that test is unsafe (it holds one of ``FOLDS_TO_ASCII``)."""
    if text.isascii() or not any(c in text for c in FOLDS_TO_ASCII):
        return text.lower()
    return None


def strip_marker(line: str) -> str:
    """A line without its indentation and list marker."""
    m = BULLET_RE.match(line)
    return line[m.end() :].strip() if m else line.strip()


_LETTERED = re.compile(r"^([ \t]*)(?:\((?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})\)|(?:[A-Za-z]|[ivxIVX]{2,4})[.)])(?=[ \t])")


def plain_marker(text: str) -> str:
    """``text`` with a lettered, roman or parenthesised list marker on its first line written as ``-``:
    how a judge reads an entry, so that no judge depends on the summary's markup."""
    return _LETTERED.sub(r"\1-", text, count=1)


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


_USER_SECTION = re.compile(r"user'?s? (?:messages?|asks?|requests?)|primary request|task snapshot", re.IGNORECASE)


def is_user_section(section: str) -> bool:
    """Sections that restate what the user said (all user messages, pending user asks, the primary
    request): their source is a user message, so they cannot be judged on a span that has none."""
    return bool(_USER_SECTION.search(section))


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def not_text(text: str) -> str | None:
    """Why ``text`` is not readable text (NUL bytes, control characters, undecodable bytes), or None."""
    if "\x00" in text:
        return "not text: it contains NUL bytes"
    n = max(len(text), 1)
    controls = len(_CONTROL.findall(text))
    if controls > max(2, n // 100):
        return f"not text: {controls} control characters in {len(text):,}"
    bad = text.count("\ufffd") + (len(_SURROGATE.findall(text)) if _SURROGATE.search(text) else 0)
    if bad > max(2, n // 100):
        return f"too damaged: {bad} undecodable characters in {len(text):,}"
    return None


def unicode_text(text: str) -> str:
    """``text`` with each lone surrogate (half a pair, as a JSON ``\\ud83d`` escape a host cut mid-emoji reads
    back) made U+FFFD, so it can be written as UTF-8; any other text as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text
