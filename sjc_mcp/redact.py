"""Secret redaction for anything that leaves the machine or is written beside the decision log.

Tool output is untrusted data that may hold credentials. Before a remote judge sees it (and before
entry text goes into a report or a state file), these are replaced by ``[REDACTED:<kind>]``:
private-key blocks (PEM, OpenSSH, PGP; with or without their END line, and inside JSON strings such as
a GCP service-account file), provider API keys and tokens (Anthropic, OpenAI, GitHub, GitLab, Slack
tokens and webhook URLs, AWS, Google, Stripe, Hugging Face, npm, PyPI, Docker Hub, SendGrid, Twilio,
DigitalOcean, Shopify, Databricks, Azure storage keys and SAS signatures), JWTs, passwords in URLs
and on ``mysql -p…`` / ``--password=…`` command lines, ``Authorization`` / ``x-api-key`` style headers,
bearer and basic credentials, and values assigned to secret-looking names in shell, env, JSON, YAML
and Python (``KEY=value``, ``"token": "…"``, ``{'password': '…'}``, ``password="…"``).

Redact whole texts, before they are cut into chunks: a key split across two chunks matches neither.
Every pattern is linear in its input (no nested quantifiers over the same characters).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_SECRET_WORD = (
    r"(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|APIKEY|PRIVATE_?KEY|ACCESS_?KEY"
    r"|CLIENT_?SECRET|CREDENTIALS?|AUTH_?KEY|ACCOUNT_?KEY|SIGNING_?KEY)[A-Za-z0-9_.-]{0,40}"
)
_SECRET_NAME = r"[A-Za-z0-9_.-]{0,40}" + _SECRET_WORD
_B64 = r"[A-Za-z0-9+/=]"

_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"), ""),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), ""),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), ""),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), ""),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/+-]{20,}"), ""),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), ""),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), ""),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), ""),
    ("google-oauth", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), ""),
    ("stripe-key", re.compile(r"\b(?:[rs]k|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b"), ""),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), ""),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ""),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), ""),
    ("docker-token", re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}"), ""),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), ""),
    ("twilio-key", re.compile(r"\bSK[0-9a-fA-F]{32}\b"), ""),
    ("digitalocean-token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b"), ""),
    ("shopify-token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), ""),
    ("databricks-token", re.compile(r"\bdapi[a-f0-9]{32}\b"), ""),
    ("azure-key", re.compile(r"(?i)(\b(?:AccountKey|SharedAccessKey)=)" + _B64 + r"{20,}"), r"\1[REDACTED:azure-key]"),
    ("azure-sas", re.compile(r"([?&]sig=)[A-Za-z0-9%+/=]{20,}"), r"\1[REDACTED:azure-sas]"),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ""),
    ("url-password", re.compile(r"(?<=://)([^/\s:@]+):([^@\s/]+)@"), r"\1:[REDACTED:url-password]@"),
    (
        "cli-password",
        re.compile(
            r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p)(?![\s\[])([^\s'\"]+|'[^'\n]*'|\"[^\"\n]*\")"
        ),
        r"\1[REDACTED:cli-password]",
    ),
    (
        "cli-password",
        re.compile(
            r"(?i)(--(?:password|passwd|token|api-key|secret)[= ])(?!\[REDACTED)([^\s'\"]+|'[^'\n]*'|\"[^\"\n]*\")"
        ),
        r"\1[REDACTED:cli-password]",
    ),
    (
        "auth-header",
        re.compile(
            r"(?i)(\b(?:x-api-key|api-key|x-auth-token|x-goog-api-key|x-amz-security-token|private-token)"
            r"[\"']?\s*:\s*[\"']?)(?!\[REDACTED)([^\s\"',}]{8,})"
        ),
        r"\1[REDACTED:auth-header]",
    ),
    ("bearer", re.compile(r"(?i)(\bbearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/-]{16,}=*"), r"\1[REDACTED:bearer]"),
    ("basic-auth", re.compile(r"(?i)(\bbasic\s+)(?!\[REDACTED)[A-Za-z0-9+/]{12,}=*"), r"\1[REDACTED:basic-auth]"),
    (
        "secret-assignment",
        re.compile(r"(?m)^(\s*(?:export\s+)?" + _SECRET_NAME + r"\s*[=:]\s*)(?!\[REDACTED)([^\s].*)$", re.I),
        r"\1[REDACTED:secret-assignment]",
    ),
    (
        "secret-json",
        re.compile(r"(?i)([\"']" + _SECRET_NAME + r"[\"']\s*:\s*)([\"'])(?!\[REDACTED)[^\"'\n]{4,}\2"),
        r"\1\2[REDACTED:secret-json]\2",
    ),
    (
        "secret-keyword",
        re.compile(r"(?i)(" + _SECRET_WORD + r"\s*=\s*)([\"'])(?!\[REDACTED)[^\"'\n]{4,}\2"),
        r"\1\2[REDACTED:secret-keyword]\2",
    ),
]


_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# a key's body when its END line is missing: base64 lines and PEM header lines, real or JSON-escaped newlines
_KEY_BODY = re.compile(
    r"(?:(?:\r?\n|\\n)(?:[A-Za-z0-9+/=]{16,}|[A-Za-z0-9+/=]{1,15}(?=\r?\n|\\n|$)|[A-Za-z-]+: [^\n]*))*"
)


def _private_keys(text: str) -> tuple[str, int]:
    """Private-key blocks from BEGIN to END (or, with no END line, to the end of the base64 that follows).
    One forward scan: an END searched for once is reused by every BEGIN before it."""
    out: list[str] = []
    pos = count = 0
    end_at: re.Match[str] | None = None
    no_end_after = len(text) + 1
    for m in _KEY_BEGIN.finditer(text):
        if m.start() < pos:
            continue
        if m.end() >= no_end_after:
            end = None
        elif end_at is None or end_at.start() < m.end():
            end = end_at = _KEY_END.search(text, m.end())
            if end is None:
                no_end_after = m.end()
        else:
            end = end_at
        stop = end.end() if end is not None else _KEY_BODY.match(text, m.end()).end()  # type: ignore[union-attr]
        out.append(text[pos : m.start()])
        out.append("[REDACTED:private-key]")
        pos = stop
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def redact(text: str) -> tuple[str, int]:
    """``text`` with secrets replaced, and how many were replaced."""
    text, count = _private_keys(text)
    for kind, rx, repl in _PATTERNS:
        text, n = rx.subn(repl or f"[REDACTED:{kind}]", text)
        count += n
    return text, count


def redacted(text: str) -> str:
    return redact(text)[0]


def redact_inputs(
    sources: Sequence[Any], previous_summary: str | None, task: str | None
) -> tuple[list[Any], str | None, str | None, int]:
    """Sources (each ``content`` and ``call``), the previous summary and the task, redacted whole."""
    total = 0
    out = []
    for s in sources:
        content, n = redact(s.content)
        update: dict[str, Any] = {"content": content}
        if getattr(s, "call", None):
            update["call"], m = redact(s.call)
            n += m
        total += n
        out.append(s.model_copy(update=update) if n else s)
    if previous_summary:
        previous_summary, n = redact(previous_summary)
        total += n
    if task:
        task, n = redact(task)
        total += n
    return out, previous_summary, task, total
