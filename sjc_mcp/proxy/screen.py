r"""Which requests might be a compaction, told from their raw bytes, so that no other is ever decoded.

Every request an agent makes goes through the proxy and almost none is a compaction. Each host module
says what its compaction request must hold (``hosts/base.py``: ``MARKERS``, or ``screen`` when a path or a
header tells it); a request none of them might accept is relayed without its body being decoded or its
history read. Only a request some host might accept is decoded and handed to ``request.recognise``,
which decides as before: the screen never decides that a request *is* a compaction.

A ``[proxy] patterns`` entry other than sjc's own default for its host (or for a host without a module)
is screened by the words it requires: a pattern that is a phrase, perhaps anchored (``\A``, ``^``), with
gaps (``.*``, ``.+?``) between phrases, requires its phrases, and the longest stretch of one that any
JSON encoder writes as it is (plain ASCII without ``"\/<>&'``) is its marker. A pattern sjc cannot read
that way (alternatives, classes, case-insensitive) screens nothing out: with it, every request on a
wire format is decoded, as every request was before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import ModuleType

from sjc_mcp.config import DEFAULT_PATTERNS
from sjc_mcp.formats import RawRequest
from sjc_mcp.hosts import READERS

Check = Callable[[RawRequest], bool]

_FLAGS = re.compile(r"\(\?[sm]+\)")  # leading inline flags that change nothing about a phrase's bytes
_GAP = re.compile(r"\.[*+]\??|\(\?s:\.[*+]\??\)")  # .* .+ .*? .+? and (?s:.*?)
_QUANTIFIER = "*+?"
_META = set("()[]{}|^$.")
_UNSAFE = set("\"\\/<>&'")  # some JSON encoders escape these (and every non-ASCII character)
MIN_MARKER = 4


def _safe_stretch(phrase: str) -> str:
    best, cur = "", ""
    for ch in phrase:
        if " " <= ch <= "~" and ch not in _UNSAFE:
            cur += ch
            best = max(best, cur, key=len)
        else:
            cur = ""
    return best


def pattern_marker(pattern: str) -> bytes | None:
    """The byte string every text ``pattern`` matches holds, as a JSON body carries it; None when the
    pattern is not phrases and gaps (then nothing can be screened out by it)."""
    rest = pattern
    for prefix in (r"\A", "^"):
        rest = rest.removeprefix(prefix)
    while m := _FLAGS.match(rest):
        rest = rest[m.end() :]
    phrases: list[str] = []
    cur = ""
    i = 0
    while i < len(rest):
        if gap := _GAP.match(rest, i):
            phrases.append(cur)
            cur = ""
            i = gap.end()
            continue
        ch = rest[i]
        if ch == "\\":
            nxt = rest[i + 1 : i + 2]
            if not nxt or nxt.isalnum() or nxt == "_":
                if rest[i:] == r"\Z":  # the end of the text: nothing after it
                    break
                return None  # \d, \s, \b, \n ...: not a phrase
            ch, i = nxt, i + 2
        elif ch in _META or ch in _QUANTIFIER:
            if ch == "$" and i == len(rest) - 1:
                break
            return None
        else:
            i += 1
        if i < len(rest) and rest[i] in _QUANTIFIER + "{":
            return None
        cur += ch
    phrases.append(cur)
    best = max((_safe_stretch(p) for p in phrases), key=len, default="")
    return best.encode("ascii") if len(best) >= MIN_MARKER else None


def _markers(markers: tuple[bytes, ...]) -> Check:
    return lambda raw: raw.holds(*markers)


def _always(raw: RawRequest) -> bool:
    return True


def host_check(module: ModuleType) -> Check | None:
    """The host's own screen: its ``screen``, else its ``MARKERS``; None when it has neither."""
    own = getattr(module, "screen", None)
    if callable(own):
        return own  # type: ignore[no-any-return]
    markers = getattr(module, "MARKERS", None)
    if markers is not None:
        return _markers(tuple(markers))
    return None


class Screen:
    """The checks for one set of ``[proxy] patterns`` (built once: the configuration is read once)."""

    def __init__(self, patterns: Mapping[str, str], readers: Mapping[str, ModuleType] | None = None) -> None:
        readers = READERS if readers is None else readers
        self.checks: list[Check] = []
        self.why_not: list[str] = []  # hosts for which every request is decoded, and why
        for name, host in readers.items():
            if getattr(host, "recognise", None) is None:
                continue  # recognised by its pattern alone (below)
            check = host_check(host)
            if check is None:
                self.why_not.append(f"{name} (its module names no MARKERS)")
                check = _always
            self.checks.append(check)
        for name, pattern in patterns.items():
            own = readers.get(name)
            if (
                own is not None
                and getattr(own, "recognise", None) is not None
                and pattern == DEFAULT_PATTERNS.get(name)
            ):
                continue  # its module's screen covers its default pattern
            marker = pattern_marker(pattern)
            if marker is None:
                self.why_not.append(f"{name} (its pattern is no phrase sjc can look for undecoded)")
                self.checks.append(_always)
            else:
                self.checks.append(_markers((marker,)))
        self.everything = _always in self.checks

    def might_be_compaction(self, raw: RawRequest) -> bool:
        """False: no host could recognise this request as its compaction (it need not be decoded)."""
        return self.everything or any(check(raw) for check in self.checks)
