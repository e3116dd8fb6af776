"""Evidence: the span's sources cut into chunks and passages, and BM25 retrieval per entry.

As the method has it: passages of about 300 characters are scored with BM25 (Okapi, k1 = 1.5,
b = 0.75, the same IDF floor as ``rank_bm25.BM25Okapi``), the top 3 per entry are widened to their
enclosing chunk of at most 2,000 characters, and the chunks are pooled and deduplicated.

The index is an inverted index: scoring an entry touches only the postings of its own words, not
every passage, which is what keeps a 2 MB span fast.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sjc_mcp.models import Chunk, Origin, Source
from sjc_mcp.text import tokens

K1 = 1.5
B = 0.75
EPSILON = 0.25


def _cut(text: str, size: int) -> list[tuple[int, int]]:
    """Cut ``text`` into pieces of at most ``size`` characters, at line ends, else at spaces."""
    out: list[tuple[int, int]] = []
    n = len(text)
    pos = 0
    while pos < n:
        if n - pos <= size:
            out.append((pos, n))
            break
        stop = text.rfind("\n", pos, pos + size)
        if stop <= pos:
            stop = text.rfind(" ", pos, pos + size)
        stop = pos + size if stop <= pos else stop + 1
        out.append((pos, stop))
        pos = stop
    return out


def source_text(src: Source) -> str:
    """What is indexed for a source: a tool output is read together with the call it answers."""
    if src.kind == "tool_output" and src.call:
        return f"{src.call}\n{src.content}"
    return src.content


@dataclass
class Passage:
    chunk: int
    start: int  # offset inside the chunk text
    end: int


class EvidenceIndex:
    """Chunks and passages of every source, with a BM25 inverted index over the passages."""

    def __init__(self, sources: Sequence[Source], passage_chars: int = 300, chunk_chars: int = 2000) -> None:
        self.sources = list(sources)
        self.chunks: list[Chunk] = []
        self.passages: list[Passage] = []
        seen: dict[str, int] = {}
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths: list[int] = []
        for si, src in enumerate(self.sources):
            text = source_text(src)
            origin = Origin(kind=src.kind, name=src.name, call_id=src.call_id)
            for cs, ce in _cut(text, chunk_chars):
                body = text[cs:ce]
                if not body.strip() or body in seen:
                    continue
                cid = len(self.chunks)
                seen[body] = cid
                self.chunks.append(Chunk(id=cid, source=si, origin=origin, text=body, start=cs))
                for ps, pe in _cut(body, passage_chars):
                    toks = tokens(body[ps:pe])
                    pid = len(self.passages)
                    self.passages.append(Passage(cid, ps, pe))
                    lengths.append(len(toks))
                    for term, tf in Counter(toks).items():
                        postings[term].append((pid, tf))
        self.postings = postings
        n = len(self.passages)
        self.avgdl = (sum(lengths) / n) if n else 0.0
        self.norm = [K1 * (1 - B + B * dl / self.avgdl) if self.avgdl else K1 for dl in lengths]
        self.idf: dict[str, float] = {}
        if n:
            idf_sum = 0.0
            negative: list[str] = []
            for term, plist in postings.items():
                df = len(plist)
                val = math.log(n - df + 0.5) - math.log(df + 0.5)
                self.idf[term] = val
                idf_sum += val
                if val < 0:
                    negative.append(term)
            eps = EPSILON * idf_sum / len(self.idf)
            for term in negative:
                self.idf[term] = eps

    def __len__(self) -> int:
        return len(self.passages)

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every passage that shares a word with ``query`` (others score 0)."""
        acc: dict[int, float] = defaultdict(float)
        for term in tokens(query):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for pid, tf in self.postings[term]:
                acc[pid] += idf * tf * (K1 + 1) / (tf + self.norm[pid])
        return acc

    def top_passages(self, query: str, k: int = 3) -> list[tuple[int, float]]:
        acc = self.scores(query)
        # Every passage that shares a word with the query is a candidate, even where Okapi's IDF goes
        # negative (a word in more than half of a tiny span's passages): BM25 only ranks them.
        return heapq.nlargest(k, acc.items(), key=lambda kv: (kv[1], -kv[0]))

    def passage_text(self, pid: int) -> str:
        p = self.passages[pid]
        return self.chunks[p.chunk].text[p.start : p.end]

    def retrieve(self, queries: Sequence[str], k: int = 3) -> tuple[list[list[int]], list[Chunk]]:
        """Per query, the chunks enclosing its top ``k`` passages (best first); and the pooled chunks."""
        per: list[list[int]] = []
        pooled: dict[int, None] = {}
        for q in queries:
            ids: list[int] = []
            for pid, _ in self.top_passages(q, k):
                cid = self.passages[pid].chunk
                if cid not in ids:
                    ids.append(cid)
                pooled.setdefault(cid, None)
            per.append(ids)
        return per, [self.chunks[c] for c in sorted(pooled)]
