"""Entries that say which tool did what: Hermes Agent's ``N. ACTION target — outcome [tool: name]``.

Such an entry claims that a call of ``name`` ran in the span and did ACTION. The claim has no source when
no call of that tool ran, or when the action changes something (a deploy, a restart, an upload, a deletion,
a message sent …) and no call of that tool did anything of the kind: what the call's input asked for is
what the environment did. A read or a run of a command (RUN, READ, LIST, CHECK …) claims no more than its
target and outcome say, which the other signals weigh. An entry the previous summary already carried is
that summary's claim, not this span's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sjc_mcp.models import Source

_ITEM = re.compile(
    r"^\s*(?:\d{1,3}[.)]|[-*+•])\s+(?P<verb>[A-Z][A-Z_-]{1,29})\s+(?P<rest>.+?)\s*\[tool:\s*(?P<tool>[^\]\s]+)\s*\]\s*$",
    re.S,
)
_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+•])\s+")
# actions that only look or run what the entry quotes: the verb itself claims nothing more
_LOOKS = frozenset(
    """RUN RAN EXECUTE EXECUTED EXEC CHECK CHECKED READ LIST LISTED VIEW VIEWED INSPECT INSPECTED SEARCH
    SEARCHED GREP FIND FOUND OPEN OPENED LOAD LOADED FETCH FETCHED QUERY QUERIED TEST TESTED VERIFY VERIFIED
    ANALYZE ANALYSE ANALYZED REVIEW REVIEWED EXAMINE EXAMINED LOOKUP CALL CALLED INVOKE INVOKED GET SHOW
    SHOWED DISPLAY CAT COUNT COMPARE MEASURE PROBE PING STAT DIFF SCAN""".split()  # noqa: SIM905
)
# actions that write files: which file is the target's business (the other signals), not the verb's
_EDITS = frozenset(
    """EDIT EDITED WRITE WROTE CREATE CREATED UPDATE UPDATED MODIFY MODIFIED PATCH PATCHED ADD ADDED FIX FIXED
    CHANGE CHANGED REPLACE REPLACED REFACTOR IMPLEMENT IMPLEMENTED APPEND SAVE SAVED""".split()  # noqa: SIM905
)
# other words a call's input uses for an action
_ALSO: dict[str, tuple[str, ...]] = {
    "deploy": ("kubectl apply", "helm upgrade", "helm install", "terraform apply", "release"),
    "restart": ("reload", "systemctl restart", "docker restart"),
    "delete": ("rm ", "rmdir", "unlink", "drop "),
    "remove": ("rm ", "rmdir", "unlink", "uninstall"),
    "upload": ("scp ", "rsync", "curl -t", "--upload-file", "put "),
    "email": ("mail", "sendmail", "smtp"),
    "send": ("mail", "post", "message"),
    "notify": ("notify", "mail", "message", "post"),
    "install": ("pip install", "npm install", "apt-get install", "apt install", "brew install"),
    "stop": ("kill", "systemctl stop", "docker stop"),
    "start": ("systemctl start", "docker start", "docker run", "up -d"),
    "push": ("git push",),
    "commit": ("git commit",),
    "merge": ("git merge", "gh pr merge"),
    "rotate": ("rotate", "passwd", "secret"),
    "archive": ("tar ", "zip ", "archive"),
}


def _stem(verb: str) -> str:
    v = verb.lower()
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(v) - len(suffix) >= 4 and v.endswith(suffix):
            return v[: -len(suffix)]
    return v


_CODE = re.compile(r"`([A-Za-z][^`\n]{1,200})`")


def _carried(text: str, previous_summary: str | None) -> bool:
    """Did the previous summary already carry this claim: the whole item, or its action and target (the
    part before " — ", the outcome worded anew)?"""
    if not previous_summary:
        return False
    body = _MARKER.sub("", text, count=1).strip()
    head = body.split(" — ", 1)[0].strip()
    return bool(body) and (body in previous_summary or (len(head) >= 12 and f" {head} — " in previous_summary))


def _quoted_command_ran(rest: str, inputs: list[str]) -> bool:
    """Does a call's input hold the command the entry quotes (`rubocop`, `cargo clippy --all-targets`)? A
    quoted option or argument alone (`-target=…`) names no command."""
    return any(code.lower() in i for code in _CODE.findall(rest) for i in inputs)


def unbacked(text: str, sources: Sequence[Source], previous_summary: str | None = None) -> str | None:
    """Why the tool claim of ``text`` has no source in the span, or None (no such claim, or a backed one)."""
    m = _ITEM.match(text)
    if m is None or _carried(text, previous_summary):
        return None
    verb, tool = m.group("verb"), m.group("tool")
    calls = [s for s in sources if s.kind == "tool_output" and (s.name or "").lower() == tool.lower()]
    if not calls:
        return f"it says {tool} did it, and no {tool} call ran in this span"
    if verb in _LOOKS or verb in _EDITS:
        return None
    words = (_stem(verb), *_ALSO.get(_stem(verb), ()), *_ALSO.get(verb.lower(), ()))
    inputs = [(s.call or "").lower() for s in calls]
    if any(w in i for w in words for i in inputs) or _quoted_command_ran(m.group("rest"), inputs):
        return None
    return f"it says {tool} did {verb}, and no {tool} call of this span asked for that"
