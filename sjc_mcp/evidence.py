"""Evidence: the span's sources cut into chunks and passages, and BM25 retrieval per entry.

As the method has it: passages of about 300 characters are scored with BM25 (Okapi, k1 = 1.5,
b = 0.75, the same IDF floor as ``rank_bm25.BM25Okapi``), the top 3 per entry are widened to their
enclosing chunk of at most 2,000 characters, and the chunks are pooled and deduplicated.

The index is an inverted index: scoring an entry touches only the postings of its own words, not
every passage, which is what keeps a 2 MB span fast. It is compiled (``_bm25.c``) where the install had a
C compiler; otherwise a small span is indexed in Python and a large one with numpy. All three give the
same passages with the same scores, to the bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sjc_mcp.models import Chunk, Origin, Source
from sjc_mcp.text import STOPWORDS, tokens

try:  # built at install where a C compiler was present (``optional`` in pyproject.toml)
    from sjc_mcp import _bm25
except ImportError:  # pragma: no cover - depends on the install
    _bm25 = None

_KEEP = bytes(b if (97 <= b <= 122 or 48 <= b <= 57 or b == 1) else 32 for b in range(256))
_STOP_BYTES = frozenset(w.encode() for w in STOPWORDS) | {b"\x01"}
K1 = 1.5
B = 0.75
EPSILON = 0.25
# spans of more words than this (about 400 KB of tool output) are indexed with numpy; smaller ones in Python
NUMPY_FROM_WORDS = 50_000
# the text of this many characters of chunks is read into words at a time (memory: no list of every word)
BATCH_CHARS = 1_000_000


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


class EvidenceIndex:
    """Chunks and passages of every source, with a BM25 inverted index over the passages.

    Every posting's BM25 contribution is computed once at build time, so scoring a query adds up the
    postings of its words. ``backend`` says which build holds them: ``compiled`` (``_bm25``), else for a
    large span flat numpy arrays grouped by term (a query is a few vector additions per word), for a small
    one Python lists (numpy is not imported)."""

    def __init__(self, sources: Sequence[Source], passage_chars: int = 300, chunk_chars: int = 2000) -> None:
        self.sources = list(sources)
        self.chunks: list[Chunk] = []
        # each passage as (its chunk, its start and end inside the chunk's text): 7,700 of them in 2 MB
        self.passages: list[tuple[int, int, int]] = []
        seen: dict[str, int] = {}
        self.vocab: dict[str, int] = {}
        self.idf: dict[str, float] = {}
        # Words are read a batch of passages at a time, as bytes: every byte that is not [a-z0-9] becomes
        # a space, and a separator token closes each passage (words are the runs the regex in ``tokens``
        # finds). Each word gets its id when first seen (-1: the separator, -2: a stopword or a letter).
        self._lookup: dict[bytes, int] = {b"\x01": -1}
        self._words: list[bytes] | None = []  # every word, while the span is small enough for Python
        self._ids: list[Any] = []  # numpy arrays of word ids, batch by batch, once it is not
        self._n_words = 0
        self._c: Any = _bm25.Index(_STOP_BYTES) if _bm25 is not None else None
        self.backend: str = "python"
        pieces: list[str] = []  # the batch's passages, lower-cased
        size = 0
        for si, src in enumerate(self.sources):
            text = source_text(src)
            origin = Origin(kind=src.kind, name=src.name, call_id=src.call_id)
            for cs, ce in _cut(text, chunk_chars):
                body = text[cs:ce]
                if not body.strip() or body in seen:
                    continue
                cid = len(self.chunks)
                seen[body] = cid
                # built from validated sources: no need to validate again
                self.chunks.append(Chunk(id=cid, source=si, origin=origin, text=body, start=cs))
                lowered = body.lower()
                if "\x01" in lowered:  # the byte that closes a passage below: as any other non-word character
                    lowered = lowered.replace("\x01", " ")
                for ps, pe in _cut(body, passage_chars):
                    self.passages.append((cid, ps, pe))
                    pieces.append(lowered[ps:pe])
                size += len(body)
                if size >= BATCH_CHARS:
                    self._read_batch(pieces)
                    pieces, size = [], 0
        if pieces:
            self._read_batch(pieces)
        if self._c is not None:
            self.backend = "compiled"
            self._weigh_compiled()
        else:
            # A small span is indexed in plain Python (no numpy to import: most hook runs judge a span of a
            # few hundred kilobytes); a large one with numpy, in one vectorised pass. Both give the same scores.
            self._np = self._words is None
            self.backend = "numpy" if self._np else "python"
            if self._np:
                self._build_numpy()
            else:
                self._build_python(self._words or [])
        del self._lookup, self._words, self._ids

    def _read_batch(self, pieces: list[str]) -> None:
        data = (" \x01 ".join(pieces) + " \x01 ").encode("utf-8", "surrogatepass")
        if self._c is not None:
            self._c.add(data)
            return
        words = data.translate(_KEEP).split()
        lookup, vocab = self._lookup, self.vocab
        for w in set(words).difference(lookup):
            if len(w) < 2 or w in _STOP_BYTES:
                lookup[w] = -2
            else:
                lookup[w] = vocab[w.decode()] = len(vocab)
        self._n_words += len(words)
        if self._words is not None:
            self._words += words
            if self._n_words <= NUMPY_FROM_WORDS:
                return
            words, self._words = self._words, None  # large: from here on, ids in numpy arrays
        import numpy as np

        self._ids.append(np.fromiter(map(lookup.__getitem__, words), dtype=np.int64, count=len(words)))

    def _idf(self, n: int, df: list[int]) -> list[float]:
        idf = [math.log(n - d + 0.5) - math.log(d + 0.5) for d in df]
        # the mean of every word's IDF, summed exactly: the words' order (which differs between the builds,
        # and with the hash seed) changes nothing
        floor = EPSILON * (math.fsum(idf) / len(idf)) if idf else 0.0
        return [floor if v < 0 else v for v in idf]  # rank_bm25's floor for very common words

    def _weigh_compiled(self) -> None:
        c = self._c
        df = c.close()
        n = len(self.passages)
        if c.passages != n:  # the passages read are the passages cut: anything else is a bug, not a span
            raise RuntimeError(f"the compiled index read {c.passages} passages of {n}")
        words = c.words
        self.vocab = {w: i for i, w in enumerate(words)}
        idf = self._idf(n, df)
        c.weigh(idf, K1, B)
        self.idf = dict(zip(words, idf, strict=True))

    def _build_python(self, words: list[bytes]) -> None:
        vocab = self.vocab
        lookup = {w.encode(): i for w, i in vocab.items()}
        n = len(self.passages)
        lens: list[int] = []
        get = lookup.get
        # per word, the passages holding it with its count there, in passage order (a passage's words are
        # those up to the next separator token, counted in C); BM25 contributions are worked out per word
        # when a query first needs it (``_postings``): most words of a span are in no entry
        raw: list[list[tuple[int, int]]] = [[] for _ in vocab]
        start, find, pid = 0, words.index, 0
        while True:
            try:
                stop = find(b"\x01", start)
            except ValueError:
                break
            length = 0
            for w, tf in Counter(words[start:stop]).items():
                t = get(w)
                if t is not None:
                    raw[t].append((pid, tf))
                    length += tf
            lens.append(length)
            start, pid = stop + 1, pid + 1
        self._raw = raw
        self._post: list[list[tuple[int, float]] | None] = [None] * len(vocab)
        if not n or not vocab:
            self._post = [[] for _ in vocab]
            return
        idf = self._idf(n, [len(r) for r in raw])
        avgdl = sum(lens) / n
        self._norm = [K1 * (1 - B + B * ln / avgdl) if avgdl else K1 for ln in lens]
        self._idf_list = idf
        self.idf = dict(zip(vocab, idf, strict=True))

    def _postings(self, t: int) -> list[tuple[int, float]]:
        """Word ``t``'s passages and its BM25 contribution to each (small spans; worked out once)."""
        post = self._post[t]
        if post is None:
            idf, norm, k1p = self._idf_list[t], self._norm, K1 + 1
            post = [(pid, idf * float(tf) * k1p / (float(tf) + norm[pid])) for pid, tf in self._raw[t]]
            self._post[t] = post
        return post

    def _build_numpy(self) -> None:
        import numpy as np

        vocab = self.vocab
        n = len(self.passages)
        ids = np.concatenate(self._ids) if self._ids else np.zeros(0, dtype=np.int64)
        self._ids = []
        is_sep = ids == -1
        pids = np.cumsum(is_sep) - is_sep  # the passage each word belongs to
        keep = ids >= 0
        ids, pids = ids[keep], pids[keep]
        del is_sep, keep  # a 32 MB span has millions of words: let each array go once used
        if not n or not vocab:
            self._starts = np.zeros(1, dtype=np.int64)
            self._pids = self._contrib = np.zeros(0)
            return
        lens = np.bincount(pids, minlength=n).astype(np.float64)
        # one posting per (word, passage), sorted by word then passage; its count is the term frequency
        ids *= n
        ids += pids
        del pids
        pairs, tf = np.unique(ids, return_counts=True)
        del ids
        post_word, post_pid = pairs // n, pairs % n
        del pairs
        df = np.bincount(post_word, minlength=len(vocab))
        idf = np.asarray(self._idf(n, df.tolist()), dtype=np.float64)
        avgdl = float(lens.mean())
        norm = K1 * (1 - B + B * lens / avgdl) if avgdl else np.full(n, K1)
        tf = tf.astype(np.float64)
        self._pids = post_pid
        self._contrib = idf[post_word] * tf * (K1 + 1) / (tf + norm[post_pid])
        self._starts = np.concatenate(([0], np.cumsum(df)))
        self.idf = dict(zip(vocab, idf.tolist(), strict=True))

    def __len__(self) -> int:
        return len(self.passages)

    def _ids_of(self, query: str) -> list[int]:
        """The query's words that the span has, as ids, in order (a repeated word counts again)."""
        get = self.vocab.get
        return [t for t in map(get, tokens(query)) if t is not None]

    def _accumulate_python(self, query: str) -> dict[int, float]:
        acc: dict[int, float] = {}
        get = acc.get
        for term in tokens(query):  # a repeated word counts again, as in rank_bm25
            t = self.vocab.get(term)
            if t is not None:
                if not acc:  # the first word's contributions as they are (0.0 + c is c)
                    acc.update(self._postings(t))
                    continue
                for pid, c in self._postings(t):
                    acc[pid] = get(pid, 0.0) + c
        return acc

    def _accumulate(self, query: str) -> tuple[Any, Any]:
        import numpy as np

        acc = np.zeros(len(self.passages), dtype=np.float64)
        touched = np.zeros(len(self.passages), dtype=bool)
        for term in tokens(query):  # a repeated word counts again, as in rank_bm25
            t = self.vocab.get(term)
            if t is not None:
                a, b = self._starts[t], self._starts[t + 1]
                ids = self._pids[a:b]
                acc[ids] += self._contrib[a:b]
                touched[ids] = True
        return acc, touched

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every passage that shares a word with ``query`` (others score 0)."""
        if not self.passages:
            return {}
        if self._c is not None:
            return self._c.scores(self._ids_of(query))
        if not self._np:
            return self._accumulate_python(query)
        import numpy as np

        acc, touched = self._accumulate(query)
        return {int(i): float(acc[i]) for i in np.flatnonzero(touched)}

    def top_passages(self, query: str, k: int = 3) -> list[tuple[int, float]]:
        """The ``k`` best passages, best first (ties: the earlier passage). Every passage that shares a
        word with the query is a candidate, even where Okapi's IDF goes negative (a word in more than half
        of a tiny span's passages): BM25 only ranks them."""
        if not self.passages:
            return []
        if self._c is not None:
            return self._c.top(self._ids_of(query), k)
        if not self._np:
            acc = self._accumulate_python(query)
            if len(acc) > k:  # only passages scoring at least the k-th best score can be among the k
                kth = sorted(acc.values(), reverse=True)[k - 1]
                items = [kv for kv in acc.items() if kv[1] >= kth]
            else:
                items = list(acc.items())
            items.sort(key=lambda kv: (-kv[1], kv[0]))
            return items[:k]
        import numpy as np

        acc, touched = self._accumulate(query)
        cand = np.flatnonzero(touched)
        if cand.size == 0:
            return []
        if cand.size > 4 * k:  # keep the best few, then order them exactly
            part = np.argpartition(-acc[cand], 4 * k)[: 4 * k]
            kth = np.sort(acc[cand][part])[-k]
            cand = cand[acc[cand] >= kth]
        order = np.lexsort((cand, -acc[cand]))[:k]
        return [(int(cand[i]), float(acc[cand[i]])) for i in order]

    def passage_text(self, pid: int) -> str:
        cid, start, end = self.passages[pid]
        return self.chunks[cid].text[start:end]

    def retrieve(self, queries: Sequence[str], k: int = 3) -> tuple[list[list[int]], list[Chunk]]:
        """Per query, the chunks enclosing its top ``k`` passages (best first); and the pooled chunks."""
        per: list[list[int]] = []
        pooled: dict[int, None] = {}
        for q in queries:
            ids: list[int] = []
            for pid, _ in self.top_passages(q, k):
                cid = self.passages[pid][0]
                if cid not in ids:
                    ids.append(cid)
                pooled.setdefault(cid, None)
            per.append(ids)
        return per, [self.chunks[c] for c in sorted(pooled)]
