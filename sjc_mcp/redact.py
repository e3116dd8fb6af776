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

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from sjc_mcp.text import safe_lower

_SECRET_WORD = (
    r"(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|APIKEY|PRIVATE_?KEY|ACCESS_?KEY"
    r"|CLIENT_?SECRET|CREDENTIALS?|AUTH_?KEY|ACCOUNT_?KEY|SIGNING_?KEY)[A-Za-z0-9_.-]{0,40}"
)
_SECRET_NAME = r"[A-Za-z0-9_.-]{0,40}" + _SECRET_WORD
_B64 = r"[A-Za-z0-9+/=]"


class _Lazy:
    """A pattern compiled the first time it is needed."""

    __slots__ = ("args", "rx")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.rx: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.rx is None:
            self.rx = re.compile(*self.args)
        return self.rx


_PATTERNS: list[tuple[str, _Lazy, str]] = [
    ("anthropic-key", _Lazy(r"sk-ant-[A-Za-z0-9_-]{20,}"), ""),
    ("openai-key", _Lazy(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), ""),
    ("github-token", _Lazy(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), ""),
    ("gitlab-token", _Lazy(r"\bglpat-[A-Za-z0-9_-]{20,}"), ""),
    ("slack-webhook", _Lazy(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/+-]{20,}"), ""),
    ("slack-token", _Lazy(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), ""),
    ("aws-access-key", _Lazy(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), ""),
    ("google-api-key", _Lazy(r"\bAIza[0-9A-Za-z_-]{35}\b"), ""),
    ("google-oauth", _Lazy(r"\bya29\.[0-9A-Za-z_-]{20,}"), ""),
    ("stripe-key", _Lazy(r"\b(?:[rs]k|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b"), ""),
    ("huggingface-token", _Lazy(r"\bhf_[A-Za-z0-9]{30,}\b"), ""),
    ("npm-token", _Lazy(r"\bnpm_[A-Za-z0-9]{36}\b"), ""),
    ("pypi-token", _Lazy(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), ""),
    ("docker-token", _Lazy(r"\bdckr_pat_[A-Za-z0-9_-]{20,}"), ""),
    ("sendgrid-key", _Lazy(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), ""),
    ("twilio-key", _Lazy(r"\bSK[0-9a-fA-F]{32}\b"), ""),
    ("digitalocean-token", _Lazy(r"\bdo[por]_v1_[a-f0-9]{64}\b"), ""),
    ("shopify-token", _Lazy(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), ""),
    ("databricks-token", _Lazy(r"\bdapi[a-f0-9]{32}\b"), ""),
    ("azure-key", _Lazy(r"(?i)(\b(?:AccountKey|SharedAccessKey)=)" + _B64 + r"{20,}"), r"\1[REDACTED:azure-key]"),
    ("azure-sas", _Lazy(r"([?&]sig=)[A-Za-z0-9%+/=]{20,}"), r"\1[REDACTED:azure-sas]"),
    ("jwt", _Lazy(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ""),
    ("url-password", _Lazy(r"(?<=://)([^/\s:@]+):([^@\s/]+)@"), r"\1:[REDACTED:url-password]@"),
    (
        "cli-password",
        _Lazy(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p)(?![\s\[])([^\s'\"]+|'[^'\n]*'|\"[^\"\n]*\")"),
        r"\1[REDACTED:cli-password]",
    ),
    (
        "cli-password",
        _Lazy(r"(?i)(--(?:password|passwd|token|api-key|secret)[= ])(?!\[REDACTED)([^\s'\"]+|'[^'\n]*'|\"[^\"\n]*\")"),
        r"\1[REDACTED:cli-password]",
    ),
    (
        "auth-header",
        _Lazy(
            r"(?i)(\b(?:x-api-key|api-key|x-auth-token|x-goog-api-key|x-amz-security-token|private-token)"
            r"[\"']?\s*:\s*[\"']?)(?!\[REDACTED)([^\s\"',}]{8,})"
        ),
        r"\1[REDACTED:auth-header]",
    ),
    ("bearer", _Lazy(r"(?i)(\bbearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/-]{16,}=*"), r"\1[REDACTED:bearer]"),
    ("basic-auth", _Lazy(r"(?i)(\bbasic\s+)(?!\[REDACTED)[A-Za-z0-9+/]{12,}=*"), r"\1[REDACTED:basic-auth]"),
    (
        "secret-assignment",
        _Lazy(r"(?m)^(\s*(?:export\s+)?" + _SECRET_NAME + r"\s*[=:]\s*)(?!\[REDACTED)([^\s].*)$", re.I),
        r"\1[REDACTED:secret-assignment]",
    ),
    (
        "secret-json",
        _Lazy(r"(?i)([\"']" + _SECRET_NAME + r"[\"']\s*:\s*)([\"'])(?!\[REDACTED)[^\"'\n]{4,}\2"),
        r"\1\2[REDACTED:secret-json]\2",
    ),
    (
        "secret-keyword",
        _Lazy(r"(?i)(" + _SECRET_WORD + r"\s*=\s*)([\"'])(?!\[REDACTED)[^\"'\n]{4,}\2"),
        r"\1\2[REDACTED:secret-keyword]\2",
    ),
]


# Per kind, what every match contains (see ``_lowered``): one of its words (in the text as it is for a pattern
# that minds case, else in the lower-cased text), and one character of each group. A text without them
# is not searched with that pattern, and a pattern never needed is never compiled.
_SECRET_WORDS = (
    "secret",
    "token",
    "passw",
    "passphrase",
    "pwd",
    "api",
    "private",
    "access",
    "credential",
    "auth",
    "account",
    "signing",
)
_QUOTES = ("'", '"')
_TRIGGERS: dict[str, tuple[bool, tuple[str, ...], tuple[tuple[str, ...], ...]]] = {
    "anthropic-key": (True, ("sk-ant-",), ()),
    "openai-key": (True, ("sk-",), ()),
    "github-token": (True, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    "gitlab-token": (True, ("glpat-",), ()),
    "slack-webhook": (True, ("https://hooks.slack.com/",), ()),
    "slack-token": (True, ("xox",), ()),
    "aws-access-key": (True, ("AKIA", "ASIA", "ABIA", "ACCA"), ()),
    "google-api-key": (True, ("AIza",), ()),
    "google-oauth": (True, ("ya29.",), ()),
    "stripe-key": (True, ("_live_", "_test_"), ()),
    "huggingface-token": (True, ("hf_",), ()),
    "npm-token": (True, ("npm_",), ()),
    "pypi-token": (True, ("pypi-AgE",), ()),
    "docker-token": (True, ("dckr_pat_",), ()),
    "sendgrid-key": (True, ("SG.",), ()),
    "twilio-key": (True, ("SK",), ()),
    "digitalocean-token": (True, ("_v1_",), ()),
    "shopify-token": (True, ("shp",), ()),
    "databricks-token": (True, ("dapi",), ()),
    "azure-key": (False, ("accountkey=", "sharedaccesskey="), ()),
    "azure-sas": (True, ("sig=",), ()),
    "jwt": (True, ("eyJ",), ()),
    "url-password": (True, ("://",), (("@",),)),
    "cli-password": (False, ("mysql", "mariadb", "--passw", "--token", "--api-key", "--secret"), ()),
    "auth-header": (False, ("api-key", "x-auth-token", "x-amz-security-token", "private-token"), ((":",),)),
    "bearer": (False, ("bearer",), ()),
    "basic-auth": (False, ("basic",), ()),
    "secret-assignment": (False, _SECRET_WORDS, (("=", ":"),)),
    "secret-json": (False, _SECRET_WORDS, ((":",), _QUOTES)),
    "secret-keyword": (False, _SECRET_WORDS, (("=",), _QUOTES)),
}


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


def _lowered(text: str) -> str | None:
    """The text lower-cased for the trigger test, or None when the test is unsafe (such a text is searched
    with every pattern): a match's trigger word is then in the text as it is, or in this lower-cased copy."""
    return safe_lower(text)


# Any trigger word at all, as written (the exact kinds') or lower-cased (the others'): a text with none of
# them, which is most text, is left as it is after one search of each instead of a test per pattern.
_EXACT_WORDS = tuple(dict.fromkeys(w for exact, words, _ in _TRIGGERS.values() if exact for w in words))
_LOWER_WORDS = tuple(dict.fromkeys(w for exact, words, _ in _TRIGGERS.values() if not exact for w in words))
_ANY_EXACT = _Lazy("|".join(map(re.escape, _EXACT_WORDS)))
_ANY_LOWER = _Lazy("|".join(map(re.escape, _LOWER_WORDS)))


def redact(text: str) -> tuple[str, int]:
    """``text`` with secrets replaced, and how many were replaced."""
    text, count = _private_keys(text) if "PRIVATE KEY" in text else (text, 0)
    low = _lowered(text)
    if low is not None and not _ANY_EXACT.get().search(text) and not _ANY_LOWER.get().search(low):
        return text, count
    for kind, lazy, repl in _PATTERNS:
        if low is not None:
            exact, words, needs = _TRIGGERS[kind]
            where = text if exact else low
            if not any(w in where for w in words) or not all(any(c in text for c in group) for group in needs):
                continue
        text, n = lazy.get().subn(repl or f"[REDACTED:{kind}]", text)
        if n:
            count += n
            low = _lowered(text)
    return text, count


def redacted(text: str) -> str:
    return redact(text)[0]


def redacted_each(texts: Sequence[str]) -> list[str]:
    """``redacted`` of each text, the trigger-word test run once over all of them (a record's hundreds of
    short texts: one look for each trigger word in all of them, not two searches per text). A trigger
    word is ASCII and holds no line break, so a text holds one exactly where the texts joined by line
    breaks hold one inside it; only those texts are redacted one by one, the others are as they were.
    Texts the joined test cannot vouch for (a private key, or a lower case of another length) are each
    redacted on their own."""
    joined = "\n".join(texts)
    low = _lowered(joined)
    if low is None or len(low) != len(joined) or "PRIVATE KEY" in joined:
        return [redacted(t) for t in texts]
    from bisect import bisect_right

    starts, pos = [], 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + 1
    starts.append(pos)
    flagged: set[int] = set()
    # each trigger word looked for with str.find (the regex engine runs an alternation of ~60 words at
    # ~100 ns a character); once found in a text, the search goes on from the next text
    for words, where in ((_EXACT_WORDS, joined), (_LOWER_WORDS, low)):
        for w in words:
            at = where.find(w)
            while at != -1:
                i = bisect_right(starts, at) - 1
                flagged.add(i)
                at = where.find(w, starts[i + 1])
    return [redacted(t) if i in flagged else t for i, t in enumerate(texts)]


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
        out.append(dataclasses.replace(s, **update) if n else s)
    if previous_summary:
        previous_summary, n = redact(previous_summary)
        total += n
    if task:
        task, n = redact(task)
        total += n
    return out, previous_summary, task, total
