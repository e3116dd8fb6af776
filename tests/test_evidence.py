from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    for _, start, end in idx.passages:
        assert end - start <= 300
        assert idx.passage_text(len(idx.passages) - 1)


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


def _build(backend: str, sources: list[Source], monkeypatch, **kw) -> EvidenceIndex:
    """The index as one backend builds it: ``compiled`` (skipped where it was not built), ``numpy``, ``python``."""
    from sjc_mcp import evidence

    with monkeypatch.context() as m:
        if backend == "compiled":
            if evidence._bm25 is None:
                pytest.skip("the compiled index (sjc_mcp._bm25) was not built in this install")
        else:
            m.setattr(evidence, "_bm25", None)
            m.setattr(evidence, "NUMPY_FROM_WORDS", -1 if backend == "numpy" else 10**12)
        idx = EvidenceIndex(sources, **kw)
    assert idx.backend == backend or not idx.passages  # no passage: nothing read, no numpy
    return idx


BACKENDS = ["compiled", "numpy", "python"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_matches_rank_bm25(seed, backend, monkeypatch):
    rank_bm25 = pytest.importorskip("rank_bm25")
    idx = _build(backend, _corpus(seed), monkeypatch)
    corpus = [tokens(idx.passage_text(i)) for i in range(len(idx))]
    ref = rank_bm25.BM25Okapi(corpus)
    rnd = random.Random(seed)
    for _ in range(20):
        q = " ".join(rnd.choices(["pytest", "failed", "bucket", "w3", "w17", "w40", "retry", "nothing"], k=4))
        expected = ref.get_scores(tokens(q))
        got = idx.scores(q)
        for pid, score in enumerate(expected):
            assert got.get(pid, 0.0) == pytest.approx(score, abs=1e-9)


def _same(built: dict[str, EvidenceIndex], queries: list[str]) -> None:
    first, *rest = built.values()
    for other in rest:
        assert other.passages == first.passages
        assert other.idf == first.idf
        for q in queries:
            assert other.scores(q) == first.scores(q), q
            assert other.top_passages(q, 3) == first.top_passages(q, 3), q


@pytest.mark.parametrize("seed", [1, 2])
def test_every_index_build_agrees(seed, monkeypatch):
    """Compiled, numpy and plain Python: the same passages, IDF, scores and top passages, to the bit."""
    from sjc_mcp import evidence

    built = {b: _build(b, _corpus(seed), monkeypatch) for b in BACKENDS if b != "compiled" or evidence._bm25}
    rnd = random.Random(seed)
    words = ["pytest", "failed", "bucket", "w3", "w17", "w40", "retry", "nothing", "the"]
    _same(built, [" ".join(rnd.choices(words, k=4)) for _ in range(30)])


_TEXT = st.text(st.sampled_from(list("abcxyz019 \n\x01\x00-_.:/İKßΣé日\u2028\r\t")), max_size=400)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, min_size=1, max_size=6), queries=st.lists(_TEXT, min_size=1, max_size=4))
def test_every_index_build_agrees_on_any_text(texts, queries, monkeypatch):
    """Any text: control characters (0x01 among them, the byte that closes a passage), Unicode whose
    lower case is longer, blank passages, words of one letter, stopwords."""
    from sjc_mcp import evidence

    sources = [Source(kind="tool_output", name="Bash", content=t) for t in texts]
    built = {
        b: _build(b, sources, monkeypatch, passage_chars=40, chunk_chars=120)
        for b in BACKENDS
        if b != "compiled" or evidence._bm25
    }
    _same(built, [*queries, *texts])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_control_byte_in_a_tool_output_does_not_shift_the_passages(backend, monkeypatch):
    """0x01 closes a passage in the index's reading: one in a tool output is read as a space, so the
    passages read are the passages cut and the best passage is the right one."""
    srcs = [
        Source(kind="tool_output", name="Bash", content="alpha \x01 beta\n" * 3),
        Source(kind="tool_output", name="Bash", content="gamma delta"),
    ]
    idx = _build(backend, srcs, monkeypatch, passage_chars=20)
    (pid, _), *_ = idx.top_passages("gamma", 3)
    assert idx.passage_text(pid) == "gamma delta"
    assert [idx.passage_text(p) for p, _ in idx.top_passages("beta", 5)] == ["alpha \x01 beta\n"] * 3


def test_the_compiled_index_is_built_where_a_compiler_is():
    """The install builds ``sjc_mcp._bm25`` when it can (optional, so a failed build would go unnoticed)."""
    import shutil
    import sysconfig

    from sjc_mcp import evidence

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if not shutil.which(cc) or not Path(sysconfig.get_paths()["include"], "Python.h").exists():
        pytest.skip(f"no C compiler ({cc}) or Python headers here: the index runs in Python and numpy")
    assert evidence._bm25 is not None, "sjc_mcp._bm25 is missing: the optional extension failed to build"
    assert EvidenceIndex([Source(kind="tool_output", content="48 passed")]).backend == "compiled"


def test_the_compiled_index_refuses_misuse():
    """Errors, not crashes: reading after close, weighing twice or before close, a query before weighing,
    an unknown word id, a k out of range."""
    from sjc_mcp import evidence

    if evidence._bm25 is None:
        pytest.skip("the compiled index (sjc_mcp._bm25) was not built in this install")
    ix = evidence._bm25.Index(frozenset({b"the"}))
    ix.add(b"the cat sat \x01 cat cat \x01 ")
    with pytest.raises(RuntimeError):
        ix.weigh([1.0], 1.5, 0.75)
    with pytest.raises(RuntimeError):
        ix.top([0], 3)
    assert ix.close() == [2, 1]  # "cat" in both passages, "sat" in the first; "the" is a stopword
    assert ix.words == ["cat", "sat"] and ix.passages == 2
    with pytest.raises(RuntimeError):
        ix.add(b"more")
    with pytest.raises(ValueError):
        ix.weigh([1.0], 1.5, 0.75)  # one IDF per word
    ix.weigh([1.0, 2.0], 1.5, 0.75)
    with pytest.raises(RuntimeError):
        ix.weigh([1.0, 2.0], 1.5, 0.75)
    with pytest.raises(IndexError):
        ix.top([2], 3)
    with pytest.raises(ValueError):
        ix.top([0], 65)
    assert [p for p, _ in ix.top([0, 1], 3)] == [0, 1]
    assert ix.top([], 3) == [] and ix.scores([]) == {}
    with pytest.raises(TypeError):
        evidence._bm25.Index(["not", "a", "set"])


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
