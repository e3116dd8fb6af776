"""The offline judge: deterministic, no network, no key.

For each entry it asks how much of the entry's informative content (code spans, identifiers, paths,
numbers, rare words) the evidence retrieved for it contains, weighted by rarity; whether its exact
identifiers occur in any source; whether its wording is a plan or directive, in a forward-looking
section, with nothing behind it; and whether it restates the agent's own prose better than any
source. A small logistic model turns these signals into a probability; the evidence line that
covers the entry best is returned as the quote.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sjc_mcp.models import Chunk, JudgeOutput, JudgeRequest, Judgment
from sjc_mcp.text import STOPWORDS

_CODE = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"\"([^\"\n]{3,120})\"")
_IDENT = re.compile(r"[A-Za-z0-9_$@#~+-]*(?:[./:][A-Za-z0-9_$@#~+-]+)+|[A-Za-z_]*\d[\w.]*|[a-z]+[A-Z]\w*|\w+_\w+")
_WORD = re.compile(r"[a-z0-9]+")
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
_FORWARD = re.compile(
    r"pending|todo|next step|current work|decision|plan|task state|task_state|remaining|open ask|"
    r"user asks|next",
    re.IGNORECASE,
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOPWORDS}


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


def is_forward_section(section: str) -> bool:
    return bool(_FORWARD.search(section))


FEATURES = ("coverage", "anchor", "no_anchor", "directive", "forward", "prose")
_DEFAULT = {
    "bias": -1.2,
    "coverage": 3.4,
    "anchor": 1.6,
    "no_anchor": -0.2,
    "directive": -1.3,
    "forward": -1.1,
    "prose": -1.5,
}


@dataclass
class Weights:
    bias: float
    weights: dict[str, float]

    @classmethod
    def default(cls) -> Weights:
        return cls(_DEFAULT["bias"], {k: v for k, v in _DEFAULT.items() if k != "bias"})

    def score(self, f: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in f.items())
        return 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))


def fit_weights(rows: list[list[float]], ys: list[bool], l2: float = 1.0) -> Weights:
    from sjc_mcp.metrics import fit_logistic

    w = fit_logistic(rows, ys, l2=l2)
    return Weights(w[0], dict(zip(FEATURES, w[1:], strict=True)))


class LexicalJudge:
    name = "lexical"
    model = "lexical-1"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or Weights.default()

    def features(self, request: JudgeRequest) -> list[tuple[dict[str, float], Chunk | None, str | None]]:
        chunks = {c.id: c for c in request.evidence}
        chunk_words = {cid: _words(c.text) for cid, c in chunks.items()}
        n_docs = max(1, len(chunks))
        df: dict[str, int] = {}
        for ws in chunk_words.values():
            for w in ws:
                df[w] = df.get(w, 0) + 1
        all_text = "\n".join(c.text for c in request.evidence)
        prose_words = [_words(p) for p in request.assistant_prose]
        out = []
        for e in request.entries:
            ew = _words(e.text)
            weight = {w: math.log(1 + n_docs / (1 + df.get(w, 0))) for w in ew}
            total = sum(weight.values()) or 1.0
            mine = [cid for cid in e.evidence if cid in chunks]
            seen: set[str] = set()
            for cid in mine:
                seen |= chunk_words[cid]
            coverage = sum(v for w, v in weight.items() if w in seen) / total if ew else 0.0
            an = anchors(e.text)
            found = sum(1 for a in an if a in all_text)
            anchor = found / len(an) if an else 0.0
            directive = 1.0 if _DIRECTIVE_START.match(e.text.lstrip("-*+ 0123456789.)")) else 0.0
            if not directive and _DIRECTIVE_CUE.search(e.text):
                directive = 0.5
            prose_cov = 0.0
            for pw in prose_words:
                if ew:
                    prose_cov = max(prose_cov, sum(v for w, v in weight.items() if w in pw) / total)
            feats = {
                "coverage": coverage,
                "anchor": anchor,
                "no_anchor": 0.0 if an else 1.0,
                "directive": directive,
                "forward": 1.0 if is_forward_section(e.section) else 0.0,
                "prose": max(0.0, prose_cov - coverage),
            }
            best, quote = self._quote(e.text, weight, [chunks[c] for c in mine])
            out.append((feats, best, quote))
        return out

    @staticmethod
    def _quote(text: str, weight: dict[str, float], chunks: list[Chunk]) -> tuple[Chunk | None, str | None]:
        best: tuple[float, Chunk | None, str | None] = (0.0, None, None)
        for c in chunks:
            for line in c.text.splitlines():
                lw = _words(line)
                s = sum(v for w, v in weight.items() if w in lw)
                if s > best[0]:
                    best = (s, c, line.strip()[:240])
        return best[1], best[2]

    def feature_vectors(self, request: JudgeRequest) -> list[list[float]]:
        return [[f[k] for k in FEATURES] for f, _, _ in self.features(request)]

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        judgments = []
        for e, (feats, chunk, quote) in zip(request.entries, self.features(request), strict=True):
            judgments.append(
                Judgment(
                    entry_id=e.id,
                    score=round(self.weights.score(feats), 4),
                    quote=quote,
                    origin=chunk.origin if chunk else None,
                )
            )
        return JudgeOutput(judgments=judgments, name=self.name, model=self.model)


def make(config: object) -> LexicalJudge:
    return LexicalJudge()
