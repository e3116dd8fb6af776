"""Grounds to delete an entry that a person can check in one look, or their absence.

An entry is deleted only for a reason its reader could verify: a value of the same thing the
environment showed otherwise (``_signals_values``), an action it claims of a kind no call of the span
was (``_signals_actions``), a count only the agent's own words state, a name it gives that is nowhere
in the span's tool outputs, user messages or previous summary, or a to-do that no user message asks
for and no failing output calls for. A low score without any of these (an entry that says what the
outputs show in other words, a reading of the task) is no such reason: the entry stays, as doubtful.

This module reads the names an entry gives, which of them the span lacks, whether a to-do is one a
user message may have asked for, and whether a failing output calls for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

from sjc_mcp.judges._signals_text import CODE, anchors, strip_marker, words
from sjc_mcp.text import STOPWORDS, is_forward_section, is_user_section

# sections that hold to-dos (a forward-looking section that is not a decision or a state of work)
_TODO_SECTION = re.compile(
    r"pending|todo|to-do|next|remaining|task.?state|open (?:items|questions|tasks)|follow.?ups?|action items",
    re.IGNORECASE,
)
_RUNS = re.compile(r"[a-z0-9]+")
_HUMP = re.compile(r"[a-z][A-Z]")
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_PLACEHOLDER = re.compile(r"<[^<>\s]{1,40}>")
_EDGE = "()[]{}<>,;:'\"`*!?"

# Words any to-do of a coding session may use: they say what kind of work, not what it is about, so a
# user message sharing only these asks for nothing in particular.
_GENERIC = """
    run runs running rerun test tests testing lint linting fmt format formatting commit commits push already
    pushed merge verify verification check checks fix fixes fixed add adding added update updates updated
    make ensure confirm build builds code change changes file files work works working implementation
    implement feature branch user users pass passes passing new still need needs needed continue finish
    complete done remaining again before after then once when also all any other every next step steps
    task tasks todo pending issue issues review reviews look into about sure whether there their them
    suite full whole quick small first last final manual manually properly correctly everything
"""
GENERIC = frozenset(_GENERIC.split())

# A line of a command's output that reports a failure: a failing test, a compiler or lint error, a merge
# conflict, an exception. Read from the output of commands (not from files read, where "error" is code).
_FAILURE_LINE = re.compile(
    r"^\s*(?:FAIL(?:ED)?\b|ERROR\b|WARN(?:ING)?\b|E\s{2,}|(?:error|warning)(?:\[[\w-]+\])?:|fatal:|panic:|Traceback|"
    r"CONFLICT\b|"
    r"✗|×|✘|not ok\b|\S+\.\w{1,5}:\d+:\d+:\s|\S+\.\w{1,5}:\d+:\s*(?:error|warning)\b|"
    # Python's warnings ("/src/io.py:8: DeprecationWarning: …")
    r"\S+\.\w{1,5}:\d+:\s*\w*(?:Error|Warning):|"
    r"[\w.]*(?:Error|Exception|Warning):|"
    # TeX and its packages ("LaTeX Warning: …", "Package biblatex Warning: …", "! LaTeX Error: …")
    r"!? ?(?:(?:La)?TeX|Package \S+|Class \S+) (?:Error|Warning):|! (?:Undefined control sequence|Missing \S+ inserted|"
    r"Emergency stop)|"
    # MSBuild and tsc ("Program.cs(12,17): error CS0103: …"), tsc --pretty ("src/a.ts:3:7 - error TS2322: …")
    r"\S+\(\d+,\d+\):\s*(?:error|warning)\b|\S+\.\w{1,5}:\d+:\d+ - (?:error|warning)\b)"
    r"|\b\d+ (?:failed|failing|errors?)\b|\b[1-9]\d* (?:Error|Warning)\(s\)|\bundefined: |\bcannot find\b|"
    r"\bMerge conflict\b",
)
# the lines after such a report that give its detail: indented ("    • Couldn't match expected type …" under
# GHC's "src/Lib.hs:14:7: error:"), or rustc's "  --> src/main.rs:4:18" under "error[E0308]: mismatched types"
_DETAIL_LINE = re.compile(r"^(?:[ \t]+\S|-->|\|)")
MAX_DETAIL_LINES = 3
# what a line must hold to be such a report (each looked for with str.find in the lower-cased output: a
# line is read only when it holds one), and the lines of a linter's output ("x.go:10:2: message")
_FAILURE_WORDS = (
    "fail", "error", "warn", "fatal:", "panic:", "traceback", "conflict", "not ok", "undefined: ",
    "cannot find", "exception", "✗", "×", "✘", "! ",
)  # fmt: skip
# what a linter's output holds when it reports a finding (besides the failure words)
_LINT_LINE = re.compile(r"^\S+\.\w{1,5}:\d+:\d+:?\s", re.MULTILINE)  # "x.go:10:2: message"
_LINT_WORDS = ("warning", "offense", "offence", "problem", "issue(s) found", "violation", "should ")
_NEWLINE = re.compile("\n")
# a to-do that fixes something: its verb
_FIXING = re.compile(
    r"\b(?:fix|resolve|repair|address|handle|investigate|debug|correct|silence|clear|unbreak|"
    # or what it is for is a check that passes: "make X return a string so PHPStan passes", "… so tflint is clean"
    r"(?:make|so)\b[^.\n]{0,60}\b(?:pass(?:es)?|is clean|is green|succeeds|compiles)|"
    r"get\b[^.\n]{0,60}\bpassing|update\b[^.\n]{0,60}\bto (?:pass|match|compile)|"
    # or what it acts on is what failed: "add the missing import", "remove the unused variable", "re-run the
    # failing test"
    r"missing|unused|failing|failed|broken|flaky|undefined|unresolved)\b",
    re.IGNORECASE,
)
MAX_FAILURE_LINES = 4000
MAX_OUTPUT_CHARS = 200_000  # of one output, read for failure lines
MAX_FAILURE_CHARS = 4_000_000  # of a span's outputs in all, the newest
# the kinds of completed action whose absence from the span's calls is a reason to delete: a push, a
# commit, a test run … (an edit or a deletion may be said of code in many words, so not those)
CHECKED_KINDS = frozenset(
    {"push", "commit", "stage", "test", "lint", "build", "install", "format", "reply", "pr", "merge", "deploy"}
)
# "Committed checkpoints - stored on …", "Pushed branches: …": a term being defined, not an action claimed
_DEFINITION = re.compile(r"^\w+\s+[\w-]+\s*(?:[-–—:]\s|\()")


def definition(text: str) -> bool:
    return _DEFINITION.match(strip_marker(text.split("\n", 1)[0])) is not None


ASKED_COVER = 0.5  # an informative word share of a to-do a user message holds: it may be the user's ask
ASKED_ALL = 0.4  # … and a share of all its words
LAST_SHARED = 2  # informative words a to-do shares with the last user message: it may be that message's ask


_STATUS = re.compile(r"^(?:none|no|nothing|n/a)\b", re.IGNORECASE)
# an item marked as still to do: "⏳ Still need …", "[ ] …", "[TODO] …", "… (pending)"
_PENDING_MARK = re.compile(
    r"^[\s>*+\-\d.)]*(?:⏳|🔄|\[ \]|\[(?:todo|pending)\])|.*\((?:pending|todo)\)\s*$", re.IGNORECASE
)


# verbs of an action on the world outside the code: what is sent, published, deleted or paid
_OUTWARD = re.compile(
    r"(?:then\s+|now\s+|also\s+)?(?:e-?mail|send|notify|message|post|publish|announce|deploy|release|ship|delete|"
    r"drop|purge|wipe|rotate|revoke|pay|refund|charge|cancel|invite|share|upload|push|force-push|transfer)\s+"
    r"(?:the|a|an|all|every|each|it|them|this|that|our|their|\S+)\b",
    re.IGNORECASE,
)


def is_todo(section: str, text: str, directive: float, done: bool) -> bool:
    """Is the entry a to-do (whose only possible source is a user message asking for it, or an output
    calling for it)? One in a to-do section, or worded as an order in another forward-looking section or
    under no heading at all;
    not one ticked off, not a status ("None remaining", "No next step"), never one that restates the user."""
    if done or _STATUS.match(strip_marker(text)):
        return False
    if is_user_section(section):  # "Pending user asks": the to-dos a user message asked for, said to be so
        return is_forward_section(section)
    if _TODO_SECTION.search(section):
        return True
    if not section.strip():  # a summary without headings: its wording is all there is to go by
        return directive >= 1.0
    if is_forward_section(section):
        return directive >= 1.0 or _PENDING_MARK.match(text) is not None
    # an order to act on the world, among what is known ("Email the price list to every customer" under Key
    # Knowledge): the kind of invention an agent carries out, whatever heading it sits under
    return _OUTWARD.match(strip_marker(text)) is not None and not _RULE_SECTION.search(section)


# a rule: in a section of constraints or requirements, worded as one ("Never …", "Do not …", "Goal: …")
_RULE_SECTION = re.compile(r"constraint|rule|requirement|preference|guardrail", re.IGNORECASE)
_RULE = re.compile(
    r"^(?:\*\*)?(?:never|do not|don't|avoid|always|only|must|no |goal|requirement|constraint|use only)\b",
    re.IGNORECASE,
)


def is_rule(section: str, text: str) -> bool:
    """Is the entry a rule set for the work (whose only source is a user message or the previous summary)?"""
    return _RULE_SECTION.search(section) is not None and _RULE.match(strip_marker(text).lstrip("*")) is not None


def _identifier(token: str, alone_in_code: bool) -> bool:
    """A name to look up: an identifier (``snake_case``, ``camelCase``, dotted, pathed, with digits), a
    hash, or a code span of one word; not a value (``3m32s``, ``~111k``, ``5-minute``) nor two words with a
    slash (``verified/committed``)."""
    t = token.strip(_EDGE)
    if len(t) < 4 or not any(c.isalpha() for c in t):
        return False
    if t[0].isdigit() or t[0] in "~≈":
        return bool(_HEX.match(t.lower())) and any(c.isdigit() for c in t)
    if re.fullmatch(r"[a-z]+(?:/[a-z]+)+", t):
        return False
    if alone_in_code:
        return True
    inner = t[1:-1]
    if any(c in inner for c in "_./:") or any(c.isdigit() for c in t):
        return True
    humps = len(_HUMP.findall(t))
    return humps >= 2 or (humps == 1 and t[0].islower())


def names(text: str, found_anchors: set[str] | None = None) -> list[str]:
    """The exact names an entry gives: identifiers, hashes, code spans of one word; placeholders
    (``<agentId>``) and plain words left out. ``found_anchors``: the entry's ``anchors``, when read."""
    out: dict[str, None] = {}
    code = set(CODE.findall(text))
    for a in sorted(anchors(text) if found_anchors is None else found_anchors):
        a = _PLACEHOLDER.sub(" ", a)
        toks = a.split()
        alone = len(toks) == 1 and a.strip() in code
        for tok in toks:
            t = tok.strip(_EDGE)
            if _identifier(t, alone):
                out.setdefault(t, None)
    return list(out)


def _runs(name: str) -> list[str]:
    """The words of a name a span's vocabulary would hold (four characters or more, with a letter)."""
    return [r for r in _RUNS.findall(name.lower()) if len(r) >= 4 and not r.isdigit() and r not in STOPWORDS]


def missing(found_names: Iterable[str], vocabulary: Mapping[str, int] | set[str]) -> list[str]:
    """The names a word of which no source of the span holds (a short hash found as the start of a
    longer one counts as held)."""
    out = []
    for n in found_names:
        for r in _runs(n):
            if r in vocabulary:
                continue
            if _HEX.match(r) and any(w.startswith(r) for w in vocabulary if len(w) > len(r)):
                continue
            out.append(n)
            break
    return out


def holds(text_words: set[str], name: str) -> bool:
    """Does a text (its ``words``) hold every word of ``name``?"""
    runs = _runs(name)
    return bool(runs) and all(r in text_words for r in runs)


def informative(entry_words: set[str]) -> set[str]:
    return {w for w in entry_words if w not in GENERIC and not w.isdigit()}


def _stem(w: str) -> str:
    """A word without its plural or verb ending: ``comments`` is ``comment``, ``fixes`` is ``fix``."""
    if len(w) > 4 and w.endswith("es") and w[-3] in "sxz":
        return w[:-2]
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def stems(ws: Iterable[str]) -> set[str]:
    return {_stem(w) for w in ws}


def asked(
    entry_words: set[str],
    users: Sequence[set[str]],
    carried: Sequence[set[str]] = (),
    compounds: Sequence[set[str]] = (),
) -> bool:
    """May a user message have asked for this to-do (or the previous summary carried it over, ``carried``:
    the words of each of its lines)? One holds at least half of its informative words (what it is about,
    ``GENERIC`` words left out) and ``ASKED_ALL`` of all its words (what to do about it: "run the tests for
    X" is not asked by "implement X"); or the last user message shares ``LAST_SHARED`` informative words,
    the words of one compound name (``compounds``: "stock-sync") counting once."""
    every = stems(w for w in entry_words if not w.isdigit())
    info = stems(informative(entry_words))
    if not info:
        return False
    need = max(1.0, ASKED_COVER * len(info))
    for uw in [*users, *carried]:
        u = stems(uw)
        if len(info & u) >= need and len(every & u) >= ASKED_ALL * len(every):
            return True
    # the last user message before the compaction is where pending work most often comes from, in its own words
    if not users:
        return False
    shared = info & stems(users[-1])
    # the words of one compound name ("stock-sync", "orders_eu") are one thing shared, not several
    joined = sum(max(0, len(shared & stems(c)) - 1) for c in compounds)
    return len(shared) - joined >= LAST_SHARED


_COMPOUND = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+")


def compounds(text: str) -> list[set[str]]:
    """The words of each compound name in ``text`` ("stock-sync" -> {"stock", "sync"})."""
    return [ws for m in _COMPOUND.finditer(text) if len(ws := words(m.group(0))) > 1]


def fixing(text: str) -> bool:
    """Is the to-do worded as fixing something (fix, resolve, investigate, make … pass)?"""
    return _FIXING.search(text.split("\n", 1)[0]) is not None


def _output_of(text: str) -> str:
    """A tool result recorded as JSON (Hermes' terminal: ``{"output": …, "error": …}``) read as its text."""
    if not text.startswith('{"'):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    parts = [v for k in ("output", "error", "stderr") if isinstance(v := data.get(k), str) and v]
    return "\n".join(parts) if parts else text


def _detail(text: str, end: int) -> list[str]:
    """The detail lines under a failure report whose line ends at ``end``: up to ``MAX_DETAIL_LINES``."""
    out: list[str] = []
    while end != -1 and len(out) < MAX_DETAIL_LINES:
        nxt = text.find("\n", end + 1)
        line = text[end + 1 : nxt if nxt != -1 else len(text)][:300]
        if not _DETAIL_LINE.match(line):
            break
        out.append(line.strip())
        end = nxt
    return out


class Failures:
    """The lines of the span's command outputs and failed calls that report a failure, with their words
    (read once)."""

    def __init__(self, outputs: Iterable[tuple[str, bool]]) -> None:
        """``outputs``: each output's text, and whether it is a linter's (every line a finding)."""
        self.lines: list[tuple[str, set[str]]] = []
        for raw, lint in outputs:
            text = _output_of(raw[:MAX_OUTPUT_CHARS])
            low = text.lower()
            starts: set[int] = set()
            for w in _FAILURE_WORDS:
                i = low.find(w)
                while i != -1:
                    starts.add(low.rfind("\n", 0, i) + 1)
                    end = low.find("\n", i)
                    i = -1 if end == -1 else low.find(w, end)
            # a linter that reports anything: each of its lines may be a finding, whatever its format
            # (PHPStan's table, ESLint's "14:11  warning  …" under the file, tflint's "Warning: …")
            findings = lint and (
                bool(starts) or any(w in low for w in _LINT_WORDS) or _LINT_LINE.search(text) is not None
            )
            if findings:
                starts.add(0)
                starts.update(m.end() for m in _NEWLINE.finditer(text))
            for a in sorted(starts):
                b = text.find("\n", a)
                line = text[a : b if b != -1 else len(text)][:300]
                if findings and line.strip():
                    self.lines.append((line.strip(), words(line)))
                elif _FAILURE_LINE.search(line):
                    line = " ".join([line.strip(), *_detail(text, b)])[:600]
                    self.lines.append((line, words(line)))
                else:
                    continue
                if len(self.lines) >= MAX_FAILURE_LINES:
                    return

    def calling_for(self, entry_words: set[str], entry_names: list[str]) -> str | None:
        """A failure line the to-do follows from: it gives one of its names, or two informative words."""
        info = informative(entry_words)
        for line, lw in self.lines:
            if any(holds(lw, n) for n in entry_names) or len(info & lw) >= 2:
                return line
        return None
