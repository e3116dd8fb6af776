from __future__ import annotations

import random

import pytest

from sjc_mcp.evidence import EvidenceIndex, _cut, source_text
from sjc_mcp.models import Source
from sjc_mcp.text import tokens


def _corpus(seed: int, n: int = 60) -> list[Source]:
    rnd = random.Random(seed)
    vocab = [f"w{i}" for i in range(80)] + ["pytest", "failed", "passed", "bucket", "retry", "config"]
    out = []
    for i in range(n):
        lines = [" ".join(rnd.choices(vocab, k=rnd.randint(3, 14))) for _ in range(rnd.randint(1, 30))]
        out.append(Source(kind="tool_output", name="Bash", call_id=f"c{i}", content="\n".join(lines)))
    return out


def test_cut_respects_size_and_covers_text():
    text = "line one\n" * 400 + "x" * 5000
    pieces = _cut(text, 300)
    assert all(b - a <= 300 for a, b in pieces)
    assert "".join(text[a:b] for a, b in pieces) == text


def test_chunks_are_bounded_and_passages_nest():
    idx = EvidenceIndex(_corpus(1), passage_chars=300, chunk_chars=2000)
    assert all(len(c.text) <= 2000 for c in idx.chunks)
    for p in idx.passages:
        assert p.end - p.start <= 300
        assert idx.passage_text(len(idx.passages) - 1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_matches_rank_bm25(seed):
    rank_bm25 = pytest.importorskip("rank_bm25")
    idx = EvidenceIndex(_corpus(seed))
    corpus = [tokens(idx.passage_text(i)) for i in range(len(idx))]
    ref = rank_bm25.BM25Okapi(corpus)
    rnd = random.Random(seed)
    for _ in range(20):
        q = " ".join(rnd.choices(["pytest", "failed", "bucket", "w3", "w17", "w40", "retry", "nothing"], k=4))
        expected = ref.get_scores(tokens(q))
        got = idx.scores(q)
        for pid, score in enumerate(expected):
            assert got.get(pid, 0.0) == pytest.approx(score, abs=1e-9)


def test_retrieve_widens_to_chunks_and_pools():
    srcs = [
        Source(kind="tool_output", name="Bash", content="noise\n" * 50 + "3 failed, 41 passed in 2.31s\n"),
        Source(kind="user_message", content="please fix the failing tests in api/"),
        Source(kind="tool_output", name="Read", content="unrelated words entirely"),
    ]
    idx = EvidenceIndex(srcs)
    per, pooled = idx.retrieve(["Ran pytest: 3 failed, 41 passed", "fix the failing tests"], k=3)
    assert idx.chunks[per[0][0]].origin.kind == "tool_output"
    assert "41 passed" in idx.chunks[per[0][0]].text
    assert any(idx.chunks[c].origin.kind == "user_message" for c in per[1])
    assert len({c.id for c in pooled}) == len(pooled)


def test_tool_output_is_read_with_its_call():
    s = Source(kind="tool_output", name="Edit", call='Edit {"file_path": "a.py"}', content="updated")
    assert source_text(s).startswith('Edit {"file_path"')
    idx = EvidenceIndex([s])
    assert idx.top_passages("a.py edited", 3)


def test_duplicate_outputs_are_indexed_once():
    s = Source(kind="tool_output", content="same text here")
    assert len(EvidenceIndex([s, s]).chunks) == 1


def test_empty_index():
    idx = EvidenceIndex([])
    assert idx.top_passages("anything") == []
    assert idx.retrieve(["a", "b"]) == ([[], []], [])


@pytest.mark.parametrize("seed", [1, 2])
def test_python_and_numpy_indexes_agree(seed, monkeypatch):
    """A small span is indexed in plain Python, a large one with numpy: the same scores to the bit."""
    from sjc_mcp import evidence

    built = {}
    for name, limit in (("python", 10**12), ("numpy", 0)):
        monkeypatch.setattr(evidence, "NUMPY_FROM_WORDS", limit)
        built[name] = EvidenceIndex(_corpus(seed))
    assert not built["python"]._np and built["numpy"]._np
    rnd = random.Random(seed)
    for _ in range(30):
        q = " ".join(rnd.choices(["pytest", "failed", "bucket", "w3", "w17", "w40", "retry", "nothing", "the"], k=4))
        assert built["python"].scores(q) == built["numpy"].scores(q)
        assert built["python"].top_passages(q, 3) == built["numpy"].top_passages(q, 3)
    assert built["python"].idf == built["numpy"].idf


def test_small_span_does_not_import_numpy():
    code = (
        "import sys; from sjc_mcp.evidence import EvidenceIndex; from sjc_mcp.models import Source; "
        "ix = EvidenceIndex([Source(kind='tool_output', name='Bash', content='48 passed in 0.4s')]); "
        "assert ix.top_passages('48 passed', 1)[0][0] == 0; print('numpy' in sys.modules)"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
