"""Redaction skips, in ASCII text, the patterns whose trigger words are absent: it must replace exactly what
searching with every pattern replaces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sjc_mcp import redact as R
from sjc_mcp.text import FOLDS_TO_ASCII

SAMPLES = [
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    "sk-proj-abcdefghijklmnopqrstuvwxyz123456",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_abcdefghijklmnopqrstuvwxyz0123456789",
    "glpat-abcdefghijklmnopqrstu",
    "https://hooks.slack.com/services/T000/B000/abcdefghijklmnopqrstuvwx",
    "xoxb-1234567890-abcdefghij",
    "AKIAABCDEFGHIJKLMNOP",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "ya29.abcdefghijklmnopqrstuvwxyz",
    "sk_live_abcdefghijklmnop1234",
    "hf_abcdefghijklmnopqrstuvwxyz01234567",
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVybWlzc2lvbnMiOiAidXNlciJ9",
    "dckr_pat_abcdefghijklmnopqrstuvwx",
    "SG.abcdefghijklmnopqr.abcdefghijklmnopqrstuv",
    "SK0123456789abcdef0123456789abcdef",
    "dop_v1_" + "a" * 64,
    "shpat_" + "0123456789abcdef" * 2,
    "dapi" + "0123456789abcdef" * 2,
    "AccountKey=abcdefghijklmnopqrstuvwxyz0123==",
    "https://x.blob.core.windows.net/c?sv=2020&sig=abcdefghijklmnopqrstuvwxyz%2B",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
    "postgres://orders:hunter2@db:5432/orders",
    "mysql -u root -phunter2 orders",
    "mysqldump --password='hunter2 x' orders",
    'deploy --token=abcdef123456 --api-key "k-123456"',
    "x-api-key: abcdefgh12345678",
    "X-Amz-Security-Token: abcdefgh12345678",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "export DB_PASSWORD=correct-horse",
    "  client_secret: s3cr3t-value",
    '{"api_key": "abcd1234efgh"}',
    "{'Signing_Key': 'abcd1234efgh'}",
    'password="abcd1234efgh"',
    'pwd = "abcd1234efgh"',
    "connect(host, password='abcd1234efgh')",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n",
]
NON_ASCII = [
    "caf\u00e9 \u2014 export API_TOKEN=abc123def \u2192 ok",
    "r\u00e9sum\u00e9: Bearer abcdefghijklmnopqrstuvwxyz0123 \u2026",
    "\u00fcber x-api-key: abcdefgh12345678",
    "to\u212aen = 'abcd1234efgh'",
    "\u017fecret = 'abcd1234efgh'",
    "pa\u017f\u017fword: abcdefgh",
    "caf\u00e9 sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
]


def full_scan(text: str) -> tuple[str, int]:
    """Every pattern over the whole text, as redaction did before the triggers."""
    text, count = R._private_keys(text)
    for kind, lazy, repl in R._PATTERNS:
        text, n = re.compile(*lazy.args).subn(repl or f"[REDACTED:{kind}]", text)
        count += n
    return text, count


def variants(s: str) -> list[str]:
    return [s, s.upper(), s.lower(), s.swapcase(), f"line one\n{s}\nline three", f"({s})", f"a={s}; b={s}"]


@pytest.mark.parametrize("sample", SAMPLES + NON_ASCII)
def test_same_as_searching_with_every_pattern(sample):
    for text in variants(sample):
        assert R.redact(text) == full_scan(text), text


def test_only_the_listed_characters_fold_to_ascii_letters():
    letter = re.compile("(?i)[a-z]")
    found = [chr(cp) for cp in range(128, 0x110000) if not 0xD800 <= cp <= 0xDFFF and letter.fullmatch(chr(cp))]
    assert sorted(found) == sorted(FOLDS_TO_ASCII)


def test_every_kind_has_triggers_and_a_sample_that_redacts():
    kinds = {k for k, _, _ in R._PATTERNS}
    assert kinds <= set(R._TRIGGERS)
    seen = set()
    for s in SAMPLES:
        seen |= set(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", R.redact(s)[0]))
    assert kinds | {"private-key"} <= seen, sorted((kinds | {"private-key"}) - seen)


@pytest.mark.slow
def test_real_transcript_lines_redact_the_same():
    fixtures = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
    if not fixtures.is_dir():
        pytest.skip("../shared/fixtures is absent")
    lines = []
    for f in sorted(fixtures.rglob("*.jsonl"))[:6]:
        lines += f.read_text(errors="replace").splitlines()[:300]
    assert lines
    for line in lines:
        assert R.redact(line) == full_scan(line)
