"""What an entry's wording says, read in one linear pass: its words, the exact strings it names
(code spans, identifiers, paths, numbers), and whether it is worded as a plan, a constraint, an
inference, or a completed action (and of which kind: a push, a commit, a passing test run …).

Every pattern here runs in time linear in the text: an identifier is found as one run of identifier
characters and then classified, never by a pattern that backtracks over a long run.
"""

from __future__ import annotations

import re

from sjc_mcp.text import STOPWORDS

CODE = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"\"([^\"\n]{3,120})\"")
# one maximal run of identifier characters (a char-class run: linear)
_RUN = re.compile(r"[A-Za-z0-9_$@#~+./:\-]+")
_CAMEL = re.compile(r"[a-z][A-Z]")
WORD3 = re.compile(r"[a-z0-9]{3,}")
# a number standing on its own: not part of a word, a version or a dotted identifier
NUM = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w,]|\.\d)")
MARKER = re.compile(r"^[\s>*+\-\d.)]*(?:\[[ xX]\]\s*)?")


# For reading ``WORD3``'s words in C: [a-z0-9] and "\n" kept, every other byte a space; then the runs it
# skips (one or two characters) and stopwords dropped from the split
WORD_BYTES = bytes(b if (97 <= b <= 122 or 48 <= b <= 57 or b == 10) else 32 for b in range(256))
_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
NOT_WORD3 = STOPWORDS | frozenset(_ALNUM) | frozenset(a + b for a in _ALNUM for b in _ALNUM)


def word_runs(text: str) -> str:
    """``text`` lower-cased with every character but [a-z0-9] and line feeds made a space: its ``WORD3``
    words are the runs of three or more (what ``WORD3.findall`` of the lower-cased text finds)."""
    return text.lower().encode("ascii", "replace").translate(WORD_BYTES).decode("ascii")


def words(text: str) -> set[str]:
    """Lower-cased words of three or more letters or digits, stopwords dropped."""
    return set(word_runs(text).split()) - NOT_WORD3


def norm_num(n: str) -> str:
    return n.replace(",", "").rstrip(".")


def _is_ident(run: str) -> bool:
    if len(run) < 3:
        return False
    if run.isalpha():  # a word, unless it is camelCase (``InitialAttribution``, ``useDateRangeParams``)
        return _CAMEL.search(run) is not None
    inner = run[1:-1]
    return any(c in inner for c in "./:") or any(map(str.isdigit, run)) or "_" in run or _CAMEL.search(run) is not None


def anchors(text: str) -> set[str]:
    """Exact strings an entry names: code spans, short quoted strings, identifiers, paths, numbers."""
    out: set[str] = set()
    for m in CODE.findall(text):
        out.add(m.strip())
    for m in _QUOTED.findall(text):
        if len(m.split()) <= 4:
            out.add(m.strip())
    prose = CODE.sub(" ", text)
    for m in _RUN.findall(prose):
        m = m.strip(".:,;-")
        if _is_ident(m):
            out.add(m)
    return {a for a in out if len(a) >= 2}


def found(anchor: str, text: str) -> bool:
    """Is ``anchor`` in ``text`` as a whole token (a dotted or pathed identifier must match whole)?"""
    start = text.find(anchor)
    while start != -1:
        before = text[start - 1] if start else " "
        end = start + len(anchor)
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(anchor, start + 1)
    return False


_POSITION = re.compile(
    r"(?:\blines?|\bL|#|~|\bPR|\bissue|\bstep|\bphase|\btask|\bv|\bversion|\bport)\s*$", re.IGNORECASE
)


def numbers(text: str, counts: bool = False) -> list[str]:
    """The numbers an entry states in prose (not inside an identifier), normalised. With ``counts``,
    only those that state an amount: not a position or a name (line 62, PR #37, ~line 300, v2, port 80)."""
    prose = CODE.sub(" ", text)
    out = []
    for m in NUM.finditer(prose):
        if counts and _POSITION.search(prose[max(0, m.start() - 12) : m.start()]):
            continue
        out.append(norm_num(m.group(0)))
    return out


def strip_marker(text: str) -> str:
    """The entry without its list marker, check box, status emoji or a leading bold or code label."""
    t = MARKER.sub("", text, count=1)
    t = t.lstrip("✅✔☑✓⏳❌🔄 ").lstrip()
    t = re.sub(r"^\[(?:done|todo|x|pending|in progress)\]\s*:?\s*", "", t, flags=re.IGNORECASE)
    return re.sub(r"^(?:\*\*[^*\n]{1,80}\*\*|`[^`\n]{1,200}`)\s*(?:[:\-—–]\s*)?", "", t)


DIRECTIVE_START = re.compile(
    r"^(?:\[?(?:todo|pending|next)\]?\s*:?\s*)?(?:(?:then|and|also|next|finally|first|afterwards),?\s+)?"
    r"(?:(?:after|once|when|before|if)\b[^:\n]{0,80}:\s*)?(add|run|keep|use|switch|replace|try|wire|extract|open|commit|push|write|check|verify|implement|create|fix|"
    r"update|consider|investigate|send|report|ask|wait|time|document|review|test|deploy|merge|refactor|"
    r"remove|delete|rename|move|make|ensure|confirm|continue|finish|complete|re-run|rerun|audit|post|"
    r"tell|notify|monitor|follow|plan|prepare|set up|setup|address|handle|bring|explore|look|discuss|"
    r"resolve|clean|benchmark|measure|profile|migrate|publish|release|ship|draft|file|schedule)\b",
    re.IGNORECASE,
)
DIRECTIVE_CUE = re.compile(
    r"\b(should|must|need(?:s)? to|will|going to|next step|to do|todo|plan(?:ned)? to|later|once [^\n]{0,80}? is|"
    r"before handing|afterwards|still need|not yet|pending)\b",
    re.IGNORECASE,
)
CONSTRAINT = re.compile(
    r"^(?:\*\*)?(never|do not|don't|keep|avoid|always|only|must|no |goal|requirement|constraint|use only)\b",
    re.IGNORECASE,
)
INFERENCE = re.compile(
    r"\b(so that|so the|so it|therefore|which means|meaning|never|always|at all times|guarantee[sd]?|unaffected|"
    r"well under|as intended|correctly|should|likely|probably|appears to|seems|must have|no longer|entirely)\b",
    re.IGNORECASE,
)

_VERB_DONE = (
    r"added|updated|modified|changed|created|wrote|written|edited|removed|deleted|renamed|moved|fixed|"
    r"implemented|replaced|refactored|extracted|converted|pushed|committed|staged|installed|ran|merged|rebased|"
    r"replied|responded|posted|opened|closed|resolved|reverted|bumped|upgraded|downgraded|configured|enabled|"
    r"disabled|applied|generated|migrated|deployed|built|tested|verified|restored|cleaned|formatted|amended|"
    r"cherry-picked|squashed|tagged|released|published|simplified|introduced|dropped|wired|hooked|exported|"
    r"imported|documented|inlined|deduplicated|consolidated|called|switched|pinned|kept|addressed|handled|"
    r"completed|finished|answered|investigated|identified|confirmed|reproduced"
)
_DONE_START = re.compile(
    r"^(?:(?:i|we|the agent|claude)\s+(?:have\s+|had\s+)?|just\s+|successfully\s+|already\s+|also\s+|then\s+|and\s+)*"
    r"(?:" + _VERB_DONE + r")\b",
    re.IGNORECASE,
)
_DONE_ANY = re.compile(
    r"(?:^|[\s(])(?:✅|✔|☑|\[x\]|\[done\])|\b(?:COMPLETED|DONE)\b|"
    r"\b(?:has|have|had|was|were|is|are)\s+(?:now\s+|been\s+|already\s+)*(?:" + _VERB_DONE + r"|done|complete|"
    r"completed|finished|green|clean|passing)\b|"
    r"\b(?:tests?|specs?|suites?|lint(?:er|ing)?|builds?|checks?|ci|clippy|vet|type-?checks?|fmt)\b[^.\n]{0,40}?"
    r"\b(?:pass(?:es|ed|ing)?|green|clean|succeed(?:s|ed)?|ok)\b|"
    r"\b0 (?:issues|errors|failures|warnings)\b|\bno (?:lint )?(?:issues|errors|failures)\b|"
    r"\b(?:done|finished|complete)\s+and\s+\w+ed\b|\ball (?:\w+ )?(?:done|complete|completed|finished)\b",
    re.IGNORECASE,
)
_PLAN_AHEAD = re.compile(
    r"\b(?:need(?:s)? to|will|should|must|going to|to be|not yet|haven't|has not|have not|hasn't|still need|"
    r"todo|pending|next|then|once|after|before|remaining|verify|ensure|confirm|check|make sure|until|so that)\b",
    re.IGNORECASE,
)


def plan_wording(text: str) -> float:
    """1 for an imperative ("Run tests", "Then handle x", "`a.go` — Keep HEAD's version", "After
    resolving: run …"), 0.5 for a plan cue ("should", "still need", "later"), 0 otherwise; a ticked-off
    item ("✅ Add X") is done, not planned."""
    first = text.split("\n", 1)[0]
    if _DONE_MARK.search(first):
        return 0.0
    if DIRECTIVE_START.match(strip_marker(first)) or DIRECTIVE_START.match(first.lstrip("-*+ 0123456789.)")):
        return 1.0
    return 0.5 if DIRECTIVE_CUE.search(text[:2000]) else 0.0


_DONE_MARK = re.compile(r"^[\s>*+\-\d.)]*(?:✅|✔|☑|\[[xX]\]|\[(?:DONE|[Dd]one)\])|\b(?:COMPLETED|DONE)\b")


def done_marked(text: str) -> bool:
    """Is the entry's first line ticked off (✅, [x], [DONE], COMPLETED)?"""
    return _DONE_MARK.search(text.split("\n", 1)[0]) is not None


# "Test passed", "Build is green", "Merge succeeded": a noun that reads like an imperative verb
_NOUN_START = re.compile(
    r"^\w+s?\s+(?:passed|passes|passing|failed|fails|succeeded|succeeds|is|are|was|were|has|have|now)\b", re.IGNORECASE
)


def done_wording(text: str) -> bool:
    """Is the entry worded as something already done ("Pushed …", "✅ …", "all tests pass")?

    Not a quotation of someone's words, and not an imperative ("Run tests to verify they pass") unless
    it is ticked off."""
    first = text.split("\n", 1)[0]
    body = strip_marker(first)
    if body.startswith(('"', "'", "“")):
        return False
    if _DONE_MARK.search(first):
        return True
    if DIRECTIVE_START.match(body) and not _NOUN_START.match(body):
        return False
    if _DONE_START.match(body):
        return True
    m = _DONE_ANY.search(first)
    if not m:
        return False
    # "will be pushed", "tests should pass": the completion is planned, not done
    return _PLAN_AHEAD.search(first[max(0, m.start() - 40) : m.end()]) is None


# what kind of action an entry says was done: (kind, pattern on the entry)
CLAIM_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (k, re.compile(p, re.IGNORECASE))
    for k, p in (
        ("push", r"\bpushed\b|\bpush(?:ed)? to\b"),
        ("commit", r"\bcommitted\b|\bamended\b|\bcommit(?:ted)?\s*\(?`?[0-9a-f]{7,40}\b"),
        ("stage", r"\bstag(?:ed|ing)\b|\bgit add\b"),
        (
            "test",
            r"\b(?:tests?|specs?|suites?|pytest|vitest|jest|go test|cargo test)\b[^.\n]{0,40}?"
            r"\b(?:pass(?:es|ed|ing)?|green|ok|succeed(?:s|ed)?)\b|\bpass(?:es|ed|ing)\b[^.\n]{0,20}\btests?\b|"
            r"\b\d+ passed\b|\btested\b|\bran (?:the )?(?:\w+ )?tests?\b",
        ),
        (
            "lint",
            r"\b(?:lint(?:er|ing)?|clippy|ruff|eslint|vet|mypy|type-?checks?|tsc)\b[^.\n]{0,40}?"
            r"\b(?:pass(?:es|ed|ing)?|clean|green|ok|succeed(?:s|ed)?)\b|\b0 issues\b|\bno lint (?:issues|errors)\b|"
            r"\blinted\b",
        ),
        (
            "build",
            r"\bbuil(?:d|ds)\b[^.\n]{0,30}?\b(?:pass(?:es|ed)?|succeed(?:s|ed)?|green|ok|clean)\b|"
            r"\bcompiles\b|\bcompiled (?:cleanly|successfully|without)\b",
        ),
        ("install", r"\binstalled\b"),
        ("format", r"\bformatted\b|\b(?:fmt|format)\b[^.\n]{0,30}?\b(?:pass(?:es|ed)?|clean|ok)\b"),
        ("reply", r"\brepl(?:ied|y|ies)\b|\brespond(?:ed)?\b|\bcomments? (?:posted|added)\b|\bposted\b"),
        ("pr", r"\b(?:opened|created) (?:a |the )?(?:pr|pull request)\b"),
        ("merge", r"\bmerged\b|\brebased\b|\bcherry-picked\b"),
        ("delete", r"\bdeleted\b|\bremoved (?:the )?(?:file|directory|folder)\b"),
        (
            "deploy",
            r"\bdeployed\b|\bdeploy(?:ment|ed)?\b[^.\n]{0,60}?\b(?:succeeded|succeeds|done|completed?|ok|green|live)\b",
        ),
    )
)
EDIT_CLAIM = re.compile(
    r"(?:^|(?:[,;:—–-]|\band|\bthen|\balso|\bbeen|\bhave|\bhas|\bjust|\bsuccessfully|\bi|\bwe)\s+)"
    r"(?:added|updated|modified|changed|created|wrote|written|edited|removed|deleted|renamed|moved|fixed|"
    r"implemented|replaced|refactored|extracted|converted|introduced|dropped|wired|exported|imported|"
    r"simplified|switched|add|update|create|implement|integrate|populate|extract|rename|replace)\b",
    re.IGNORECASE,
)


def claimed_kinds(text: str) -> list[str]:
    """The kinds of action an entry claims were done (empty when it is not worded as done)."""
    if not done_wording(text):
        return []
    first = text.split("\n", 1)[0]
    kinds = [k for k, rx in CLAIM_KINDS if _affirmed(rx, first)]
    if _affirmed(EDIT_CLAIM, strip_marker(first)):
        kinds.append("edit")
    return kinds


_NEGATED = re.compile(r"\b(?:not|n't|never|without|no|yet to|before|not yet|nor)\b[^.;\n]{0,25}$", re.IGNORECASE)


def _affirmed(rx: re.Pattern[str], text: str) -> bool:
    """Does ``rx`` occur in ``text`` other than negated ("not verified/committed", "without pushing")?"""
    return any(not _NEGATED.search(text[max(0, m.start() - 40) : m.start()]) for m in rx.finditer(text))
