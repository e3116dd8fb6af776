from __future__ import annotations

import pytest

from sjc_mcp.redact import redact


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
