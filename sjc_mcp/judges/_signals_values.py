"""Values: the numbers (with their units or the thing they count) and numbered identifiers an entry
states, compared with what the matching evidence states for the same thing. A value the evidence
gives only otherwise is a contradiction, returned with both values and the evidence line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sjc_mcp.judges._signals_actions import Call
from sjc_mcp.judges._signals_text import CODE, NUM, anchors, found, norm_num, words
from sjc_mcp.text import STOPWORDS

_BEFORE = re.compile(r"([A-Za-z_][\w-]{2,})[ :=]{1,3}$")
# a count's adjective, if any: "3 new tests", "12 failing tests"
_ADJ = r"(?:(?:new|more|additional|existing|extra|total|unit|integration|failing|passing|stale|other)\s+)?"
_AFTER = re.compile(r"^[ ]?" + _ADJ + r"([A-Za-z_][\w-]{2,})")
_DIGIT = re.compile(r"\d")
_UNIT = re.compile(r"^ ?(%|ms|µs|us|ns|[KMGT]i?B|x|×)(?![\w%])")
_NUMBER = r"(\d(?:,?\d)*(?:\.\d+)?)"
# a line that echoes a call's input ("shell: {"command": …}"): what was asked, not what came out
_CALL_LINE = re.compile(r"^[\w.-]{1,64}: [{\[]")
# a file path with a folder and an extension ("src/lib/phone.test.ts"): a line about that one file
_PATH = re.compile(r"(?:[\w.-]+/)+([\w-]+(?:\.[\w-]+)*\.[A-Za-z]{1,5})(?![\w/])")


# A pattern that begins with a look-behind is tried at every position of the text; one that begins with
# the character it consumes first is tried only where that character occurs (several times faster over a
# span's sources). So "not after X" is written as the first character, then a look-behind over both: the
# same matches as ``(?<!X)`` before it.
def _first_not_after(not_after: str, first: str) -> str:
    """``first`` (a pattern of exactly one character) where the character before it is not ``not_after``."""
    return first + "(?<!" + not_after + r"[\s\S])"


def _not_after(not_after: str, literal: str) -> str:
    """``literal`` (escaped) where the character before it is not ``not_after``."""
    return _first_not_after(not_after, re.escape(literal[:1])) + re.escape(literal[1:])


# ``(?<![\w.])`` + _NUMBER
_NUMBER_ALONE = "(" + _first_not_after(r"[\w.]", r"\d") + r"(?:,?\d)*(?:\.\d+)?)"
MAX_PROBES = 40
MAX_NUMBERS = 200  # numbers looked at per entry
_PLURAL = re.compile(
    r"^[a-z]{2,}[^s]s$|^%$"
)  # a pathological entry with thousands of numbers is checked on its first few


@dataclass(slots=True)
class Conflict:
    """The entry says ``said`` where the evidence says ``found``, on ``line``."""

    said: str
    found: str
    line: str
    text: int = -1  # which of the evidence texts holds the line


@dataclass(slots=True)
class Probe:
    """One value the entry states, as a pattern with the value left open."""

    rx: re.Pattern[str]
    value: tuple[str, ...]
    thing: set[str]  # the words that name what the value is of ("tests", "port")
    count: bool  # a number with its noun or unit (not a numbered identifier)
    key: str = ""  # lower-case text any statement of it must contain (a cheap test before the pattern)
    before: bool = False  # the word is before the number ("port 5432", "retries: 3"): a setting, not a count
    approx: bool = False  # stated as about so much ("~8 lines"): a tally to look for, never a contradiction

    def values(self, text: str) -> list[tuple[tuple[str, ...], int, int]]:
        return [(tuple(norm_num(g) for g in m.groups()), m.start(), m.end()) for m in self.rx.finditer(text)]

    def states(self, text: str) -> bool:
        """Does ``text`` state this very value for the same thing?"""
        return any(v == self.value for v, _, _ in self.values(text))


_APPROX = re.compile(
    r"(?:~|\babout|\baround|\bapprox\w*|\broughly|\bnearly|\balmost|\bover|\bunder|\bup to|\bat least)\s*$"
)
_VERBS = {
    "shows",
    "show",
    "showed",
    "returns",
    "returned",
    "got",
    "gets",
    "says",
    "said",
    "reports",
    "reported",
    "gives",
    "gave",
    "uses",
    "used",
    "than",
    "only",
    "now",
    "still",
    "just",
    "exactly",
    "instead",
}
_POSITIONAL = {"line", "lines", "col", "column", "step", "phase", "task", "issue", "pr", "version", "item", "option"}


def probes(entry: str, in_joined: Callable[[str], bool], names: set[str] | None = None) -> list[Probe]:
    """The values ``entry`` states: numbers next to a word or unit, and numbered identifiers that the
    evidence lacks (``in_joined``: is an identifier in the joined evidence, as ``found`` has it; ``names``:
    the entry's ``anchors``, when already read)."""
    out: list[Probe] = []
    if not _DIGIT.search(entry):  # no decimal digit: NUM finds no number and no identifier splits into digits
        return out
    plain = CODE.sub(lambda c: c.group(1), entry)
    for n, m in enumerate(NUM.finditer(plain)):
        if len(out) >= MAX_PROBES or n >= MAX_NUMBERS:
            break
        around = plain[max(0, m.start() - 1) : m.start()] + plain[m.end() : m.end() + 1]
        tilde = around[:1] == "~" and around[1:] not in ("+", "-", "*", "/", "^", "~", "#")  # "~8": about 8
        if not tilde and any(ch in "+-*/^~#" for ch in around):  # "N+1", "12+", ranges, PR numbers: no value
            continue
        head = plain[max(0, m.start() - 40) : m.start()]
        value = (norm_num(m.group(0)),)
        after = _AFTER.match(plain[m.end() : m.end() + 60])
        if _APPROX.search(head):  # "~300", "about 40": not a value to hold anyone to, but a count to look for
            if after and after.group(1).lower() not in STOPWORDS | _VERBS:  # "~8 lines": a count of lines
                word = after.group(1).lower()
                pat = _NUMBER_ALONE + r"[ ]{0,2}" + _ADJ + re.escape(after.group(1)) + r"(?!\w)"
                out.append(Probe(re.compile(pat, re.IGNORECASE), value, {word}, True, key=word, approx=True))
            continue
        before = _BEFORE.search(head)
        unit = _UNIT.match(plain[m.end() : m.end() + 4])
        if (
            before
            and before.group(1).lower() not in STOPWORDS | _POSITIONAL | _VERBS
            and not re.search(r"[-/.]$", head[: before.start(1)])
        ):
            pat = _not_after(r"\w", before.group(1)) + r"[ :=]{0,3}" + _NUMBER + r"(?!\w)(?!\.\d)"
            word = before.group(1).lower()
            out.append(Probe(re.compile(pat, re.IGNORECASE), value, {word}, True, key=word, before=True))
        if unit:
            u = re.escape(unit.group(1))
            nxt = re.match(r"^[^\n\w]{0,3}(?:of |in |on )?([A-Za-z_][\w-]{2,})", plain[m.end() + unit.end() :])
            if nxt and nxt.group(1).lower() not in STOPWORDS:
                pat = _NUMBER_ALONE + r" ?" + u + r"[^\n\w]{0,3}(?:of |in |on )?" + re.escape(nxt.group(1))
                word = nxt.group(1).lower()
                out.append(Probe(re.compile(pat, re.IGNORECASE), value, {word}, True, key=word))
        elif after and after.group(1).lower() not in STOPWORDS | _POSITIONAL | _VERBS:
            noun = re.escape(after.group(1))
            noun_first = _not_after(r"[\w.]", after.group(1))
            pat = _NUMBER_ALONE + r"[ ]{0,2}" + _ADJ + noun + r"(?!\w)"
            word = after.group(1).lower()
            out.append(Probe(re.compile(pat, re.IGNORECASE), value, {word}, True, key=word))
            # the same count written the other way round: "41 tests passed" / "Tests  40 passed"
            pat = noun_first + r"[ :=]{1,3}" + _NUMBER + r"(?![\w%]|\.\d)"
            out.append(Probe(re.compile(pat, re.IGNORECASE), value, {word}, True, key=word, before=True))
    for a in sorted(anchors(entry) if names is None else names):  # in one order whatever the hash seed
        if len(out) >= MAX_PROBES:
            break
        parts = re.split(r"(\d+)", a)
        digits = tuple(p for p in parts if p.isdigit())
        if not digits or len(a) < 5 or len(a) > 200 or in_joined(a):
            continue
        if not re.search(r"[A-Za-z:/=@]", a):  # a bare date or version: too common to pin a value on
            continue
        # parts alternate text and digits, text first (empty when ``a`` starts with a digit)
        lead = _not_after(r"[\w.]", parts[0]) if parts[0] else "(" + _first_not_after(r"[\w.]", r"\d") + r"\d*)"
        rest = parts[2:] if not parts[0] else parts[1:]
        pat = lead + "".join(r"(\d+)" if p.isdigit() else re.escape(p) for p in rest)
        thing = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", a)}
        key = max((q for q in parts if not q.isdigit()), key=len).lower()
        rx = re.compile(pat + r"(?!\w)", re.IGNORECASE)
        out.append(Probe(rx, digits, thing, False, key=key))
    return out


Verify = Callable[[Probe, int], bool]


def _same_thing(p: Probe, line: str, entry_words: set[str], entry_anchors: list[str]) -> bool:
    """Is an evidence line about what the entry's value is about? It shares more than the value's own
    noun with the entry; for a value with no word of its own ("3m32s"), one of the entry's identifiers."""
    if not p.thing:
        return any(found(a, line) for a in entry_anchors)
    return bool((words(line) & entry_words) - p.thing)


# the word right before a value, with only small words between ("truncated to 12 chars")
_QUALIFIER = re.compile(r"([A-Za-z][A-Za-z-]{2,})(?:\s+(?:to|of|at|by|from|with|in|on|the|a|an|is|are|was|were))*\s+$")


def _qualified_otherwise(p: Probe, before: str, entry_words: set[str]) -> bool:
    """Does the evidence say what its value is of with a word the entry does not have ("hash truncated to
    12 chars" against "the commit hash (40 chars)")? Then the two values are of different things."""
    if p.before:  # "port 5432": the value's word is the entry's own
        return False
    m = _QUALIFIER.search(before)
    if m is None:
        return False
    w = m.group(1).lower()
    return w not in STOPWORDS and w not in entry_words and w.rstrip("s") not in entry_words


def _of_another_thing(p: Probe, got: tuple[str, ...], line: str, entry: str, entry_numbers: set[str]) -> bool:
    """Is the evidence's other value one of another thing than the entry's? The entry states that value
    too ("the 23 earlier tests plus 2 new ones: 25 tests"), or the line is a call's own input (its command,
    not its output), or, for a count, the line is about one file the entry does not name ("phone.test.ts
    (9 tests)" against "3 test files, 27 tests")."""
    if all(g in entry_numbers for g in got) or _CALL_LINE.match(line):
        return True
    if p.count and not p.before:
        return any(m.group(1) not in entry for m in _PATH.finditer(line))
    return False


def contradiction(
    entry: str,
    texts: Sequence[str],
    everything: str | None = None,
    verify: Verify | None = None,
    found_probes: list[Probe] | None = None,
) -> Conflict | None:
    """An evidence line stating another value for the same thing as one of the entry's values, or None.

    Each number the entry states next to a word ("3 failed", "port 5432", "25 new tests", "0.52 % of
    requests") becomes a pattern with the number left open; so does each identifier with digits that
    the evidence lacks ("localhost:5432/orders", "7m14s"). If the entry's own retrieved evidence fills
    a pattern only with other values, on a line that shares more than that pattern with the entry,
    and no evidence fills it with the entry's value (``everything``; or, given ``verify(probe, i)``, no
    source later than ``texts[i]``: the newer state wins), the entry contradicts it: the first such
    line is returned with both values."""
    joined = everything if everything is not None else "\n".join(texts)
    entry_words = words(entry)
    entry_anchors = [a for a in anchors(entry) if len(a) >= 4]
    entry_numbers = {norm_num(m.group(0)) for m in NUM.finditer(CODE.sub(lambda c: c.group(1), entry))}
    for p in found_probes if found_probes is not None else probes(entry, lambda a: found(a, joined)):
        if p.approx:
            continue
        if verify is None and p.states(joined):
            continue
        if all(len(v) >= 4 and found(v, joined) for v in p.value):  # a long number found anywhere is not in doubt
            continue
        hit: tuple[tuple[str, ...], str, int] | None = None
        for ti, t in enumerate(texts):
            for got, a0, b0 in p.values(t):
                if got == p.value:
                    hit = None
                    break
                a1 = t.rfind("\n", 0, a0) + 1
                b1 = t.find("\n", b0)
                line = t[a1 : b1 if b1 != -1 else len(t)].strip()
                if (
                    hit is None
                    and _same_thing(p, line, entry_words, entry_anchors)
                    and not _qualified_otherwise(p, t[max(a1, a0 - 60) : a0], entry_words)
                    and not _of_another_thing(p, got, line, entry, entry_numbers)
                ):
                    hit = (got, line[:240], ti)
            else:
                continue
            break
        if hit is None or (verify is not None and verify(p, hit[2])):
            continue
        return Conflict(said="/".join(p.value), found="/".join(hit[0]), line=hit[1], text=hit[2])
    return None


def _number_in(value: str, sources: Sequence[str]) -> bool:
    """Does a source show this number, with whatever words around it ("out of 57", a table's column)? Only
    a number of two digits or more: a count as small as 3 is everywhere."""
    digits = value.replace(".", "")
    if len(digits) < 2 or not digits.isdigit():
        return False
    rx = re.compile(r"(?<![\w.,])" + ",?".join(map(re.escape, value)) + r"(?![\w]|[.,]\d)")
    return any(value[0] in t and rx.search(t) for t in sources)


def unsourced_counts(
    entry: str,
    prose: str,
    sources: Sequence[str],
    verify: Verify,
    found_probes: list[Probe] | None = None,
    lowered: Sequence[str | None] | None = None,
    prose_lowered: str | None = None,
) -> list[tuple[str, bool]]:
    """Counts the entry states ("16 findings", "6 changes across 7 files") that no source states for
    that thing: tallies of the agent or the compressor. Each with whether the agent's prose states it.
    ``lowered``, ``prose_lowered``: each source's and the prose's ``safe_lower``, if at hand (a text without
    the probe's word is not searched)."""
    out = []
    # without its probes, every identifier with digits is one (no evidence at hand to have it)
    for p in found_probes if found_probes is not None else probes(entry, lambda a: False):
        if not p.count or p.before or not all(_PLURAL.match(t) and t not in _VERBS for t in p.thing):
            continue
        low = lowered if lowered is not None and p.key.isascii() else None
        searched = [t for i, t in enumerate(sources) if not (low and (li := low[i]) is not None and p.key not in li)]
        if any(p.states(t) for t in searched) or verify(p, -1) or _number_in(p.value[0], sources):
            continue
        in_prose = bool(prose) and not (low is not None and prose_lowered is not None and p.key not in prose_lowered)
        out.append((f"{p.value[0]} {sorted(p.thing)[0]}", in_prose and p.states(prose)))
    return out


# -- counted things: tests an edit adds --------------------------------------------------------------

_TEST_DEF = re.compile(
    r"^[ \t+]*(?:async\s+)?def\s+test_?\w*\s*\(|^[ \t+]*func\s+Test\w*\s*\(|^[ \t+]*(?:it|test)\s*\(\s*['\"`]|"
    r"^[ \t+]*#\[(?:tokio::)?test\]|^[ \t+]*test\s+\"[^\"\n]*\"\s*(?:,|do)|^[ \t+]*it\s+['\"][^'\"\n]*['\"]\s*do\b",
    re.MULTILINE,
)
_CLAIMED_TESTS = re.compile(
    r"\b(?:added|adds|wrote|writes|created|new)\b[^.\n]{0,40}?(?<![\w.])(\d+)\s+(?:new\s+|more\s+|additional\s+|"
    r"unit\s+|integration\s+|regression\s+)*(?:tests?|test cases|test functions|specs)\b",
    re.IGNORECASE,
)


def _written(data: dict, whole: bool = True) -> tuple[str, str]:
    """(text written, text replaced) by an edit or write call's input."""
    new, old = [], []
    for key_new, key_old in (("new_string", "old_string"), ("newText", "oldText"), ("new_str", "old_str")):
        if isinstance(data.get(key_new), str):
            new.append(data[key_new])
            old.append(data.get(key_old) or "")
    for key in ("content", "file_text"):
        if whole and isinstance(data.get(key), str):
            new.append(data[key])
    for e in data.get("edits") or []:
        if isinstance(e, dict):
            n, o = _written(e)
            new.append(n)
            old.append(o)
    patch = data.get("input") or data.get("patch")
    if isinstance(patch, str):
        lines = patch.splitlines()
        new += [ln[1:] for ln in lines if ln.startswith("+")]
        old += [ln[1:] for ln in lines if ln.startswith("-")]
    return "\n".join(new), "\n".join(old)


def tests_added(edits: Sequence[Call]) -> int:
    """Test definitions the successful edits and writes add (written minus replaced)."""
    total = 0
    for c in edits:
        if not c.ok or "edit" not in c.kinds:
            continue
        if c.data:
            new, old = _written(c.data, whole=c.created)  # a whole-file write counts only for a new file
            total += len(_TEST_DEF.findall(new)) - len(_TEST_DEF.findall(old))
    return total


def test_count_conflict(entry: str, span_calls: Sequence[Call], outputs: str) -> Conflict | None:
    """ "Added 25 new tests" where the span's edits add 22 test definitions (and no output says 25)."""
    m = _CLAIMED_TESTS.search(entry)
    if not m:
        return None
    said = m.group(1)
    added = tests_added(span_calls)
    if added <= 0 or str(added) == said:
        return None
    if re.search(r"(?<![\w.])" + str(added) + r"(?![\w]|\.\d)", entry):  # "the 2 new ones: 25 tests": both counts
        return None
    if re.search(r"(?<![\w.])" + said + r"\s+(?:new\s+)?(?:tests?|passed)\b", outputs):
        return None
    edit = next(
        (c for c in reversed(span_calls) if c.ok and c.data and _TEST_DEF.search(_written(c.data, c.created)[0])),
        None,
    )
    line = f"{edit.tool} {edit.what}: adds {added} test definitions" if edit else f"edits add {added} tests"
    return Conflict(said=said, found=str(added), line=line)
