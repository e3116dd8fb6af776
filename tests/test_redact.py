from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjc_mcp.redact import redact, redacted, redacted_each


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"),
        ("OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "sk-proj-abcdefghijklmnopqrstuvwxyz123456"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("aws AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"),
        ("url postgres://orders:hunter2@db:5432/orders", "hunter2"),
        ("export DB_PASSWORD=correct-horse", "correct-horse"),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXk"),
        ("xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ],
)
def test_secrets_are_redacted(text, secret):
    out, n = redact(text)
    assert secret not in out and n >= 1 and "[REDACTED" in out


def test_ordinary_output_is_left_alone():
    text = "48 passed in 0.61s\nport = 5432\nTOKENS_PER_SECOND is a metric\nsk-short\n"
    out, n = redact("48 passed in 0.61s\nport = 5432\nsk-short\n")
    assert n == 0 and out == "48 passed in 0.61s\nport = 5432\nsk-short\n"
    assert "48 passed" in redact(text)[0]


# pieces of secrets, their trigger words and look-alikes, line breaks and characters whose lower case is
# longer or folds to ASCII: texts made of them hold secrets, bare trigger words and neither
_PIECES = [
    "key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    "export DB_PASSWORD=correct-horse",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
    "postgres://orders:hunter2@db/o",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n",
    "bearer",
    "token",
    "sig=",
    "Σ",
    "\u0130",
    "\u212a",
    "48 passed",
    "\n",
    " ",
    "é",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=5).map("".join), max_size=8))
@pytest.mark.slow
def test_redacting_texts_together_is_redacting_each(texts):
    """``redacted_each`` (one trigger test over a record's texts) gives what ``redacted`` gives per text."""
    assert redacted_each(texts) == [redacted(t) for t in texts]


def test_trigger_words_are_ascii_and_one_line():
    """What ``redacted_each`` rests on: a trigger word found in texts joined by line breaks lies inside one
    of them, at the same place in the lower-cased copy."""
    from sjc_mcp import redact as r

    words = r._EXACT_WORDS + r._LOWER_WORDS
    assert words and all(w.isascii() and "\n" not in w for w in words)
    assert all(w == w.lower() for w in r._LOWER_WORDS)
