"""Secret redaction for anything that leaves the machine.

Tool output is untrusted data that may hold credentials: before a remote judge sees it, the common
providers' API keys and tokens, private-key blocks, passwords in URLs, ``KEY=value`` lines for
secret-looking names, bearer tokens and JWTs are replaced by ``[REDACTED:<kind>]``.
"""

from __future__ import annotations

import re

_SECRET_NAME = (
    r"[A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASS|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?|AUTH)"
    r"[A-Za-z0-9_]*"
)

_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.S),
        "",
    ),
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"), ""),
    ("openai-key", re.compile(r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"), ""),
    ("github-token", re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), ""),
    ("slack-token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), ""),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ""),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), ""),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b"), ""),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ""),
    ("url-password", re.compile(r"(?<=://)([^/\s:@]+):([^@\s/]+)@"), r"\1:[REDACTED:url-password]@"),
    ("bearer", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*"), r"\1[REDACTED:bearer]"),
    (
        "secret-assignment",
        re.compile(r"(?m)^(\s*(?:export\s+)?" + _SECRET_NAME + r"\s*[=:]\s*)(?!\[REDACTED)([^\s].*)$", re.I),
        r"\1[REDACTED:secret-assignment]",
    ),
    (
        "secret-json",
        re.compile(r"(?i)(\"" + _SECRET_NAME + r"\"\s*:\s*\")(?!\[REDACTED)[^\"]{4,}(\")"),
        r"\1[REDACTED:secret-json]\2",
    ),
]


def redact(text: str) -> tuple[str, int]:
    """``text`` with secrets replaced, and how many were replaced."""
    count = 0
    for kind, rx, repl in _PATTERNS:
        text, n = rx.subn(repl or f"[REDACTED:{kind}]", text)
        count += n
    return text, count
