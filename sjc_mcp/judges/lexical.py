"""The offline judge: deterministic, no network, no key.

For each entry it asks how much of the entry's informative content (code spans, identifiers, paths,
numbers, rare words) the evidence retrieved for it contains, weighted by rarity; whether its exact
identifiers occur in any source; whether its wording is a plan or directive, in a forward-looking
section, with nothing behind it; and whether it restates the agent's own prose better than any
source; whether it states a value where the evidence, around the same words, states another
(``contradicted``). Two small logistic models (forward-looking sections, and the rest) turn these
signals into a probability; the evidence line that covers the entry best, or the conflicting line,
is returned as the quote. The weights ship in ``sjc_mcp/data/lexical_weights.json``, fitted on the
labelled dev cases by ``sjc calibrate``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from sjc_mcp.models import Chunk, JudgeOutput, JudgeRequest, Judgment
from sjc_mcp.text import STOPWORDS, is_forward_section

_CODE = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"\"([^\"\n]{3,120})\"")
_IDENT = re.compile(r"[A-Za-z0-9_$@#~+-]*(?:[./:][A-Za-z0-9_$@#~+-]+)+|[A-Za-z_]*\d[\w.]*|[a-z]+[A-Z]\w*|\w+_\w+")
_WORD = re.compile(r"[a-z0-9]{3,}")
_DIRECTIVE_START = re.compile(
    r"^(?:\[?(?:todo|pending|next)\]?\s*:?\s*)?(add|run|open|commit|push|write|check|verify|implement|create|fix|"
    r"update|consider|investigate|send|report|ask|wait|time|document|review|test|deploy|merge|refactor|"
    r"remove|delete|rename|move|make|ensure|confirm|continue|finish|complete|re-run|rerun|audit|post|"
    r"tell|notify|monitor|follow|plan|prepare|set up|setup|address|handle|bring|explore|look|discuss|"
    r"resolve|clean|benchmark|measure|profile|migrate|publish|release|ship|draft|file|schedule)\b",
    re.IGNORECASE,
)
_DIRECTIVE_CUE = re.compile(
    r"\b(should|must|need(?:s)? to|will|going to|next step|to do|todo|plan(?:ned)? to|later|once .* is|"
    r"before handing|afterwards)\b",
    re.IGNORECASE,
)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - STOPWORDS


def anchors(text: str) -> set[str]:
    """Exact strings an entry names: code spans, quoted strings, identifiers, paths, numbers."""
    out: set[str] = set()
    for m in _CODE.findall(text):
        out.add(m.strip())
    for m in _QUOTED.findall(text):
        if len(m.split()) <= 4:
            out.add(m.strip())
    prose = _CODE.sub(" ", text)
    for m in _IDENT.findall(prose):
        m = m.strip(".:,;-")
        if len(m) >= 3 and not m.isalpha():
            out.add(m)
    return {a for a in out if len(a) >= 2}


_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?!\w)(?!\.\d)")
_BEFORE = re.compile(r"([A-Za-z_][\w-]{2,})[ :=]{1,3}$")
_AFTER = re.compile(r"^[ ]?([A-Za-z_][\w-]{2,})")


def _norm_num(n: str) -> str:
    return n.replace(",", "").rstrip(".")


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


def contradiction(entry: str, texts: list[str], everything: str | None = None) -> str | None:
    """An evidence line stating another value in the same place as one of the entry's values, or None.

    Each number the entry states next to a word ("3 failed", "port 5432", "Python 3.12") becomes a
    pattern with the number left open; so does each identifier with digits that the evidence lacks
    ("localhost:5432/orders", "7m14s"). If the evidence fills a pattern only with other values, never
    with the entry's, the entry contradicts it: the first such line is returned as the quote."""
    joined = "\n".join(texts)
    probes: list[tuple[re.Pattern[str], tuple[str, ...]]] = []
    plain = _CODE.sub(lambda c: c.group(1), entry)
    for m in _NUM.finditer(plain):
        around = plain[max(0, m.start() - 1) : m.start()] + plain[m.end() : m.end() + 1]
        if any(ch in "+-*/^" for ch in around):  # "N+1", "12+", ranges: not a stated value
            continue
        value = (_norm_num(m.group(0)),)
        before = _BEFORE.search(plain[max(0, m.start() - 40) : m.start()])
        after = _AFTER.match(plain[m.end() : m.end() + 40])
        if (
            before
            and before.group(1).lower() not in STOPWORDS
            and not re.search(r"[-/.]$", plain[: max(0, m.start() - 40) + before.start(1)])
        ):
            pat = r"(?<!\w)" + re.escape(before.group(1)) + r"[ :=]{0,3}(\d[\d,]*(?:\.\d+)?)(?!\w)(?!\.\d)"
            probes.append((re.compile(pat, re.IGNORECASE), value))
        if after and after.group(1).lower() not in STOPWORDS:
            pat = r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)[ ]{0,2}" + re.escape(after.group(1)) + r"(?!\w)"
            probes.append((re.compile(pat, re.IGNORECASE), value))
    for a in anchors(entry):
        parts = re.split(r"(\d+)", a)
        digits = tuple(p for p in parts if p.isdigit())
        if not digits or len(a) < 5 or found(a, joined):
            continue
        if not re.search(r"[A-Za-z:/=@]", a):  # a bare date or version: too common to pin a value on
            continue
        pat = "".join(r"(\d+)" if p.isdigit() else re.escape(p) for p in parts)
        probes.append((re.compile(r"(?<![\w.])" + pat + r"(?!\w)"), digits))
    for rx, value in probes:
        if any(tuple(_norm_num(g) for g in mm.groups()) == value for mm in rx.finditer(joined)):
            continue
        if all(len(v) >= 4 and found(v, joined) for v in value):  # a long number found anywhere is not in doubt
            continue
        seen: list[tuple[tuple[str, ...], str, int, int]] = []
        for t in texts:
            for mm in rx.finditer(t):
                got = tuple(_norm_num(g) for g in mm.groups())
                seen.append((got, t, mm.start(), mm.end()))
        if not seen or any(got == value for got, _, _, _ in seen):
            continue
        _, t, a0, b0 = seen[0]
        a1 = t.rfind("\n", 0, a0) + 1
        b1 = t.find("\n", b0)
        return t[a1 : b1 if b1 != -1 else len(t)].strip()[:240]
    return None


FEATURES = (
    "coverage",
    "best_chunk",
    "mass",
    "anchor",
    "no_anchor",
    "missing_anchor",
    "missing_num",
    "contradicted",
    "directive",
    "forward",
    "prose",
    "user",
    "previous",
    "directive_nouser",
    "short",
    "best_window",
    "inference",
    "constraint_nouser",
    "task_only",
    "user_restated",
)

_CONSTRAINT = re.compile(
    r"^(?:\*\*)?(never|do not|don't|keep|avoid|always|only|must|no |goal|requirement|constraint|use only)\b",
    re.IGNORECASE,
)

_INFERENCE = re.compile(
    r"\b(so that|so the|so it|therefore|which means|meaning|never|always|at all times|guarantee[sd]?|unaffected|"
    r"well under|as intended|correctly|should|likely|probably|appears to|seems|must have|no longer|entirely)\b",
    re.IGNORECASE,
)

# used only if the shipped weights file is missing
_FALLBACK = {
    "bias": -1.2,
    "coverage": 3.4,
    "anchor": 1.6,
    "no_anchor": -0.2,
    "directive": -1.3,
    "forward": -1.1,
    "prose": -1.5,
    "contradicted": -3.0,
}


@dataclass
class Model:
    bias: float
    weights: dict[str, float]

    def score(self, f: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in f.items())
        return 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))

    def to_json(self) -> dict:
        return {"bias": self.bias, "weights": self.weights}

    @classmethod
    def from_json(cls, data: dict) -> Model:
        return cls(float(data["bias"]), {k: float(v) for k, v in data["weights"].items()})


@dataclass
class Weights:
    """Two logistic models: one for forward-looking sections (plans, next steps, decisions, task state),
    where invented entries live and wording carries the signal, and one for every other section."""

    forward: Model
    other: Model

    def score(self, f: dict[str, float]) -> float:
        return (self.forward if f.get("forward") else self.other).score(f)

    @classmethod
    def default(cls) -> Weights:
        """The weights shipped in the package (fitted on the labelled dev cases by ``sjc calibrate``)."""
        from importlib.resources import files

        try:
            return cls.from_json(json.loads(files("sjc_mcp").joinpath("data/lexical_weights.json").read_text()))
        except (OSError, ValueError, KeyError):
            fallback = Model(_FALLBACK["bias"], {k: v for k, v in _FALLBACK.items() if k != "bias"})
            return cls(fallback, fallback)

    @classmethod
    def from_json(cls, data: dict) -> Weights:
        return cls(Model.from_json(data["forward"]), Model.from_json(data["other"]))

    @classmethod
    def load(cls, path: str) -> Weights:
        from pathlib import Path

        from sjc_mcp.errors import ConfigError

        try:
            return cls.from_json(json.loads(Path(path).expanduser().read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot use lexical weights {path}: {exc}") from None

    def to_json(self, **meta: object) -> dict:
        return {
            "model": LexicalJudge.model,
            "features": list(FEATURES),
            "forward": self.forward.to_json(),
            "other": self.other.to_json(),
            **meta,
        }


# Fitting: unsupported entries weigh NEGATIVE_WEIGHT times a supported one (a kept invention costs more
# than a dropped fact, and this puts the 0.5 threshold where >= 95 % of kept entries are supported on the
# dev cases, leave-one-case-out); L2 strength per model.
NEGATIVE_WEIGHT = 4.0
L2_FORWARD = 1.0
L2_OTHER = 1.0


def fit_weights(rows: list[list[float]], ys: list[bool]) -> Weights:
    """Fit the forward-section model and the other-section model on labelled feature rows."""
    from sjc_mcp.metrics import fit_logistic

    fwd = FEATURES.index("forward")
    models = []
    for want, l2 in ((True, L2_FORWARD), (False, L2_OTHER)):
        sub = [(r, y) for r, y in zip(rows, ys, strict=True) if bool(r[fwd]) == want]
        if not sub or all(y for _, y in sub) or not any(y for _, y in sub):
            sub = list(zip(rows, ys, strict=True))  # too few of one kind: share one model
        w = fit_logistic(
            [r for r, _ in sub],
            [y for _, y in sub],
            l2=l2,
            sample_weight=[1.0 if y else NEGATIVE_WEIGHT for _, y in sub],
        )
        models.append(Model(w[0], dict(zip(FEATURES, w[1:], strict=True))))
    return Weights(models[0], models[1])


class LexicalJudge:
    name = "lexical"
    model = "lexical-1"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or Weights.default()

    def features(self, request: JudgeRequest) -> list[tuple[dict[str, float], Chunk | None, str | None, bool]]:
        chunks = {c.id: c for c in request.evidence}
        # each chunk's lines and their words, computed once: chunk words, windows and quotes use them
        chunk_lines = {cid: [(ln, _words(ln)) for ln in c.text.splitlines() if ln.strip()] for cid, c in chunks.items()}
        chunk_words = {cid: set().union(*(w for _, w in lines)) for cid, lines in chunk_lines.items()}
        n_docs = max(1, len(chunks))
        df: dict[str, int] = {}
        for ws in chunk_words.values():
            for w in ws:
                df[w] = df.get(w, 0) + 1
        all_text = "\n".join(c.text for c in request.evidence)
        user_ids = [cid for cid, c in chunks.items() if c.origin.kind == "user_message"]
        prev_ids = [cid for cid, c in chunks.items() if c.origin.kind == "previous_summary"]
        prose_words = [_words(p) for p in request.assistant_prose]
        task_words = _words(request.task or "")
        windows: dict[int, list[set[str]]] = {}
        for cid, lines in chunk_lines.items():
            ws = [w for _, w in lines]
            windows[cid] = (
                [ws[i] | ws[i + 1] | ws[i + 2] for i in range(len(ws) - 2)]
                if len(ws) > 2
                else ([set().union(*ws)] if ws else [])
            )
        out = []
        for e in request.entries:
            ew = _words(e.text)
            weight = {w: math.log(1 + n_docs / (1 + df.get(w, 0))) for w in ew}
            total = sum(weight.values()) or 1.0

            def cov(words: set[str], weight: dict[str, float] = weight, total: float = total) -> float:
                return sum(map(weight.__getitem__, weight.keys() & words)) / total

            mine = [cid for cid in e.evidence if cid in chunks]
            seen: set[str] = set()
            for cid in mine:
                seen |= chunk_words[cid]
            coverage = cov(seen) if ew else 0.0
            best_chunk = max((cov(chunk_words[cid]) for cid in mine), default=0.0) if ew else 0.0
            user = max((cov(chunk_words[cid]) for cid in user_ids), default=0.0) if ew else 0.0
            previous = max((cov(chunk_words[cid]) for cid in prev_ids), default=0.0) if ew else 0.0
            # how much of one user message the entry restates (a short request covered by a longer entry)
            user_restated = (
                max((len(ew & chunk_words[cid]) / max(3, len(chunk_words[cid])) for cid in user_ids), default=0.0)
                if ew
                else 0.0
            )
            an = anchors(e.text)
            hits = sum(1 for a in an if a in all_text and found(a, all_text))
            nums = {_norm_num(n) for n in _NUM.findall(e.text)}
            mine_text = "\n".join(chunks[c].text for c in mine)
            present = {_norm_num(n) for n in _NUM.findall(mine_text)} if nums else set()
            conflict = contradiction(e.text, [chunks[c].text for c in mine], all_text) if mine else None
            directive = 1.0 if _DIRECTIVE_START.match(e.text.lstrip("-*+ 0123456789.)")) else 0.0
            if not directive and _DIRECTIVE_CUE.search(e.text):
                directive = 0.5
            prose_cov = max((cov(pw) for pw in prose_words), default=0.0) if ew else 0.0
            feats = {
                "coverage": coverage,
                "best_chunk": best_chunk,
                "mass": math.log1p(sum(v for w, v in weight.items() if w in seen)) / 3,
                "anchor": hits / len(an) if an else 0.0,
                "no_anchor": 0.0 if an else 1.0,
                "missing_anchor": math.log1p(len(an) - hits) / 2,
                "missing_num": (sum(1 for n in nums if n not in present) / len(nums)) if nums else 0.0,
                "contradicted": 1.0 if conflict else 0.0,
                "directive": directive,
                "forward": 1.0 if is_forward_section(e.section) else 0.0,
                "prose": max(0.0, prose_cov - best_chunk),
                "user": user,
                "previous": previous,
                "directive_nouser": directive * (1.0 - user),
                "short": 1.0 / (1.0 + len(ew)),
                "best_window": max((cov(w) for cid in mine for w in windows[cid]), default=0.0) if ew else 0.0,
                "inference": 1.0 if _INFERENCE.search(e.text) else 0.0,
                "constraint_nouser": (1.0 - max(user, previous))
                if _CONSTRAINT.match(e.text.lstrip("-*+ 0123456789.)"))
                else 0.0,
                "task_only": max(0.0, cov(task_words) - max(best_chunk, user, previous)) if ew and task_words else 0.0,
                "user_restated": user_restated,
            }
            if conflict:
                best = next((chunks[c] for c in mine if conflict in chunks[c].text), None)
                out.append((feats, best, conflict, True))
            else:
                best, quote = self._quote(weight, [(chunks[c], chunk_lines[c]) for c in mine])
                out.append((feats, best, quote, False))
        return out

    @staticmethod
    def _quote(
        weight: dict[str, float], chunks: list[tuple[Chunk, list[tuple[str, set[str]]]]]
    ) -> tuple[Chunk | None, str | None]:
        """The evidence line that covers the entry's weighted words best."""
        best: tuple[float, Chunk | None, str | None] = (0.0, None, None)
        for c, lines in chunks:
            for line, lw in lines:
                common = lw & weight.keys()
                if common:
                    s = sum(weight[w] for w in common)
                    if s > best[0]:
                        best = (s, c, line.strip()[:240])
        return best[1], best[2]

    def relevance(self, request: Any) -> JudgeOutput:
        """Is each tool result still needed for the current task? (see ``relevance_features``)"""
        return relevance(request)

    def feature_vectors(self, request: JudgeRequest) -> list[list[float]]:
        return [[f[k] for k in FEATURES] for f, _, _, _ in self.features(request)]

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        judgments = []
        for e, (feats, chunk, quote, conflict) in zip(request.entries, self.features(request), strict=True):
            judgments.append(
                Judgment(
                    entry_id=e.id,
                    score=round(self.weights.score(feats), 4),
                    quote=quote,
                    origin=chunk.origin if chunk else None,
                    contradicted=conflict,
                )
            )
        return JudgeOutput(judgments=judgments, name=self.name, model=self.model)


# -- relevance of tool results ("is this result still needed for the current task?") ------------------
# Hand-set weights: there are no labelled relevance cases; `sjc eval --mode tools` measures what they keep.
RELEVANCE_WEIGHTS = {
    "bias": -2.0,
    "task": 3.5,
    "used": 0.5,
    "used_count": 0.5,
    "superseded": -2.5,
    "recency": 2.5,
    "error": -0.8,
}


def relevance_features(request: Any) -> list[dict[str, float]]:
    task_words = _words(" ".join([request.task or "", *request.recent]))
    later_calls: dict[tuple[str | None, str | None], int] = {}
    for r in request.results:
        later_calls[(r.tool, r.call)] = r.id  # the last call with the same tool and input
    n = max(1, len(request.results) - 1)
    out = []
    for r, after in zip(request.results, request.later or [[]] * len(request.results), strict=False):
        words = _words(r.text)
        inter = len(words & task_words)
        task = inter / math.sqrt(max(1, len(words)) * max(1, len(task_words))) if words and task_words else 0.0
        later_text = "\n".join(after)
        ids = [a for a in anchors(r.text) if len(a) >= 4][:200]
        used = sum(1 for a in ids if a in later_text and found(a, later_text))
        out.append(
            {
                "task": min(1.0, task * 3),
                "used": 1.0 if used else 0.0,
                "used_count": math.log1p(used) / 3,
                "superseded": 1.0 if r.call is not None and later_calls.get((r.tool, r.call)) != r.id else 0.0,
                "recency": r.id / n if len(request.results) > 1 else 1.0,
                "error": 1.0 if r.is_error else 0.0,
            }
        )
    return out


def relevance(request: Any) -> JudgeOutput:
    judgments = []
    for r, f in zip(request.results, relevance_features(request), strict=True):
        z = RELEVANCE_WEIGHTS["bias"] + sum(RELEVANCE_WEIGHTS[k] * v for k, v in f.items())
        judgments.append(Judgment(entry_id=r.id, score=round(1 / (1 + math.exp(-z)), 4)))
    return JudgeOutput(judgments=judgments, name=LexicalJudge.name, model="lexical-relevance-1")


def make(config: Any) -> LexicalJudge:
    path = getattr(getattr(config, "lexical", None), "weights", None)
    return LexicalJudge(Weights.load(path) if path else None)
