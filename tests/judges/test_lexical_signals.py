"""The offline judge's signals, each shown on a labelled dev case and on a small span built here:
completed actions backed by a successful call, values compared with the matching evidence, the
user's words restated, the agent's own words as a counter-source; and the reason every judgment
carries, through the library, the CLI and the decision log."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjc_mcp.config import Config
from sjc_mcp.judges._signals_text import plan_wording
from sjc_mcp.judges.lexical import LexicalJudge, anchors
from sjc_mcp.log import chain as decision_log
from sjc_mcp.models import Chunk, JudgeEntry, JudgeRequest, Origin, Source
from sjc_mcp.pipeline import judge_summary
from tests.conftest import PROVENANCE, need_shared, sjc_exe

DEV = PROVENANCE / "dev"


@cache
def _case(case_id: str):
    from sjc_mcp.eval.cases import load_case
    from sjc_mcp.eval.prepared import case_request

    case = load_case(DEV / f"{case_id}.json")
    _, request = case_request(case, Config())
    return request


def _unmarked(text: str) -> str:
    return re.sub(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?", "", text)


def dev_entry(case_id: str, starts: str):
    """(features, finding, judgment) of the entry of a dev case whose text starts with ``starts``."""
    need_shared(DEV)
    request = _case(case_id)
    judge = LexicalJudge()
    feats = judge.features(request)
    out = judge.judge(request, feats)
    for e, (f, finding), j in zip(request.entries, feats, out.judgments, strict=True):
        if _unmarked(e.text).startswith(starts):
            return f, finding, j
    raise AssertionError(f"no entry starting {starts!r} in {case_id}")


def bash(command: str, output: str, error: bool = False) -> Source:
    return Source(
        kind="tool_output",
        name="Bash",
        call=f"Bash: {json.dumps({'command': command})}",
        content=output,
        is_error=error,
    )


def edit(path: str, old: str, new: str) -> Source:
    call = json.dumps({"file_path": path, "old_string": old, "new_string": new})
    return Source(kind="tool_output", name="Edit", call=f"Edit: {call}", content=f"The file {path} has been updated.")


def judge_one(section: str, entry: str, sources: list[Source], tmp_path, prose: tuple[str, ...] = ()):
    """The judged entry of a one-entry summary (its decision is the guard's: judge by the score)."""
    summary = f"## {section}\n- {entry}\n"
    r = judge_summary(
        summary, sources, config=Config.of(decision_log=str(tmp_path / "log.jsonl")), assistant_prose=prose
    )
    return r.entries[0]


# -- completed actions ---------------------------------------------------------------------------------


def test_completed_checks_are_backed_by_the_passing_runs_on_a_dev_case():
    # real-cc-04, Current Work, labelled supported: lint and tests ran clean at record 724
    f, finding, j = dev_entry("real-cc-04", "All tests pass, lint clean")
    assert f["done_backed"] >= 0.5 and finding.done is not None
    assert finding.done.ok and finding.done.kinds & {"test", "lint"}
    assert j.score >= 0.5 and j.reason.startswith("done: Bash `mise run")


def test_a_ticked_off_item_is_backed_by_the_edit_that_did_it_on_a_dev_case():
    # real-cc-9b, Pending Tasks, labelled supported: the edits adding StartedAt succeeded
    f, finding, j = dev_entry("real-cc-9b", "✅ Add StartedAt to CommittedMetadata")
    assert f["done_backed"] >= 0.5 and "edit" in finding.done.kinds and "StartedAt" in finding.done.text
    assert j.score >= 0.5 and j.reason.startswith("done: Edit")


def test_a_plan_is_not_a_completed_action_even_when_the_run_succeeded():
    # real-cc-13, Pending Tasks, labelled none: a test run did succeed, but the entry is a to-do
    f, finding, j = dev_entry("real-cc-13", "Run tests to verify token calculation tests pass")
    assert f["done_backed"] == 0 and finding.done is None
    assert j.score < 0.45 and j.reason.startswith("no source")


@pytest.mark.parametrize(
    ("section", "entry", "good", "bad"),
    [
        (
            "Current Work",
            "Pushed to origin",
            bash("git push origin main", "To github.com:acme/app.git\n   1a2b3c4..5d6e7f8  main -> main"),
            bash(
                "git push origin main", " ! [rejected]        main -> main (fetch first)\nerror: failed to push", True
            ),
        ),
        (
            "Current Work",
            "All tests pass and lint is clean",
            bash("npm test && npm run lint", "Tests  31 passed (31)\n\n> eslint .\n"),
            bash("npm test && npm run lint", "Tests  2 failed | 29 passed (31)", True),
        ),
        (
            "Current Work",
            "Staged all 4 modified files",
            bash("git add src/a.ts src/b.ts src/c.ts src/d.ts", ""),
            bash("git add src/a.ts", "fatal: pathspec 'src/a.ts' did not match any files", True),
        ),
        (
            "Progress",
            "Installed the highlight package",
            bash("npm install highlight.js", "added 1 package, and audited 212 packages in 2s"),
            bash("npm install highlight.js", "npm ERR! code E404\nnpm ERR! 404 Not Found", True),
        ),
        (
            "Pending Tasks",
            "None — all requested work is done and pushed",
            bash("git push", "To github.com:acme/app.git\n   9f8e7d6..1a2b3c4  feat -> feat"),
            bash("git push", "error: failed to push some refs to 'github.com:acme/app.git'", True),
        ),
    ],
)
def test_completed_action_kinds(tmp_path, section, entry, good, bad):
    other = bash("ls docs", "README.md\nCHANGELOG.md")
    backed = judge_one(section, entry, [other, good], tmp_path)
    failed = judge_one(section, entry, [other, bad], tmp_path)
    absent = judge_one(section, entry, [other], tmp_path)
    assert backed.reason.startswith("done: Bash `") and "succeeded" in backed.reason
    assert backed.score >= 0.5
    assert backed.score > failed.score and backed.score > absent.score


# -- values --------------------------------------------------------------------------------------------


def test_a_changed_count_is_contradicted_on_a_dev_case():
    # syn-dev-08, recent_actions, labelled contradicted: the log says 2 stale files
    f, finding, j = dev_entry("syn-dev-08", "`airflow tasks test weather_ingest load 2024-05-03`")
    assert f["contradicted"] == 1.0 and finding.conflict[:2] == ("3", "2")
    assert j.contradicted and j.score < 0.45
    assert j.reason.startswith("contradicted: ") and "says 2, entry says 3" in j.reason and "stale file(s)" in j.reason


def test_the_newer_output_decides_on_a_dev_case():
    # syn-dev-01: an earlier run said "3 failed"; the full run the entry describes says 4
    _, finding, j = dev_entry("syn-dev-01", "Full `pytest -q` run: 3 failed, 287 passed")
    assert finding.conflict and "4 failed, 287 passed" in finding.conflict[2] and j.score < 0.45
    # real-cc-18: an earlier lint run said "1 issues", the last one "0 issues": not a contradiction
    f, finding, _ = dev_entry("real-cc-18", "`sessionHasNewContentInCommittedFiles` has been deleted")
    assert f["contradicted"] == 0.0 and finding.conflict is None


@pytest.mark.parametrize(
    ("entry", "sources", "said", "found"),
    [
        (
            "Added 25 new tests for the tokenizer in `tests/test_tokenize.py`",
            [
                edit(
                    "/r/tests/test_tokenize.py",
                    "",
                    "".join(f"def test_case_{i}():\n    assert True\n" for i in range(22)),
                )
            ],
            "25",
            "22",
        ),
        (
            "14 keys converted to the new config format",
            [bash("python scripts/convert.py config.yaml", "Converted 11 keys to the new config format\nDone.")],
            "14",
            "11",
        ),
        (
            "Error rate after the change: 0.52 % of requests failed",
            [bash("python bench.py --requests 10000", "requests: 10000\n0.62% of requests failed (62 errors)")],
            "0.52",
            "0.62",
        ),
    ],
)
def test_a_value_the_evidence_states_otherwise_is_contradicted(tmp_path, entry, sources, said, found):
    r = judge_one("Progress", entry, sources, tmp_path)
    assert r.contradicted and r.score < 0.45
    assert f"says {found}, entry says {said}" in r.reason


def test_the_same_value_is_not_contradicted(tmp_path):
    r = judge_one(
        "Progress", "14 keys converted", [bash("python scripts/convert.py", "Converted 14 keys\nDone.")], tmp_path
    )
    assert not r.contradicted and r.score >= 0.5


# -- the user's words ----------------------------------------------------------------------------------


def _without_users(request: JudgeRequest) -> JudgeRequest:
    keep = [c for c in request.evidence if c.origin.kind != "user_message"]
    ids = {c.id for c in keep}
    entries = [dataclasses.replace(e, evidence=[i for i in e.evidence if i in ids]) for e in request.entries]
    sources = [
        s if s.kind != "user_message" else dataclasses.replace(s, kind="tool_output", content="")
        for s in request.sources
    ]
    return dataclasses.replace(request, evidence=keep, entries=entries, sources=sources)


@pytest.mark.parametrize(
    ("case_id", "starts"),
    [("syn-dev-04", "Add a `make seed` target"), ("syn-dev-07", "Add `Currency` to the `Invoice` struct")],
)
def test_a_to_do_that_restates_the_users_request_on_a_dev_case(case_id, starts):
    f, finding, j = dev_entry(case_id, starts)
    assert f["forward"] == 1.0 and plan_wording(starts) == 1.0  # a to-do, in a forward-looking section
    # ... that a user message states: the user's request, not a plan
    assert f["user"] >= 0.9 and f["directive"] == 0.0 and finding.user
    assert j.score >= 0.5 and j.reason.startswith("user message, turn ")
    request = _case(case_id)
    alone = _without_users(request)
    judge = LexicalJudge()
    i = next(k for k, e in enumerate(request.entries) if _unmarked(e.text).startswith(starts))
    assert j.score > judge.judge(alone).judgments[i].score + 0.2


# -- the agent's own words -----------------------------------------------------------------------------


def test_the_agents_own_tally_on_a_dev_case():
    # real-cc-98, Problem Solving, labelled none: no output gives these counts
    f, finding, j = dev_entry("real-cc-98", "Identified and documented 16 findings")
    assert f["tally"] == 1.0 and "16 findings" in finding.tally
    # no output states the count, but neither do the agent's words: it may count what the outputs list,
    # which is no reason to delete it that a person could check (kept, doubtful)
    assert "16 findings" in j.reason and not finding.tally_prose and j.grounded is False
    _, finding, _ = dev_entry("real-cc-9b", "Successfully implemented all 6 changes")
    assert "6 changes" in finding.tally


def test_restating_only_the_agents_prose_on_a_dev_case():
    # real-cc-0e, a task of the agent's own list, labelled none: its words are the agent's analysis
    f, finding, _ = dev_entry("real-cc-0e", "**Task #2** [pending, blocked by #1]")
    assert f["prose"] > 0.25 and finding.prose_only


def test_prose_is_no_source(tmp_path):
    entry = "The cache eviction keeps the hot path well under a microsecond per tile"
    prose = ("I think the cache eviction keeps the hot path well under a microsecond per tile.",)
    ls = bash("ls src", "cache.rs\nmain.rs")
    said = judge_one("Key Technical Concepts", entry, [ls], tmp_path, prose)
    shown = judge_one("Key Technical Concepts", entry, [ls, bash("cargo bench", entry)], tmp_path, prose)
    assert said.score < 0.45 <= 0.5 <= shown.score
    # only the agent's words say it, in other words than any output: no reason to delete it that a person
    # could check (nothing it names is missing, nothing contradicts it), so it is kept, as doubtful
    assert said.decision == "keep" and said.reason.startswith("doubtful, kept: it says in other words what the agent")
    named = judge_one("Key Technical Concepts", entry + " via `TileCache::evict_lru`", [ls], tmp_path, prose)
    assert named.score < 0.45 and "no source: no tool output, user message or previous summary of the span gives" in (
        named.reason
    )  # (a one-entry summary: the guard keeps it whole)
    assert "`TileCache::evict_lru` (only the agent's own words give it)" not in named.reason


# -- reasons -------------------------------------------------------------------------------------------


def test_every_decision_on_a_dev_case_carries_a_reason():
    need_shared(DEV)
    request = _case("real-cc-0f")
    out = LexicalJudge().judge(request)
    assert all(j.reason for j in out.judgments)
    low = [j for j in out.judgments if j.score < 0.5]
    high = [j for j in out.judgments if j.score >= 0.5]
    assert low and high
    assert any(j.grounded for j in low) and any(j.grounded is False for j in low)
    for j in low:
        # grounds a person can check, or (kept, doubtful) what was found instead
        if j.grounded:
            assert j.reason.startswith(("no source: ", "contradicted: ")), j.reason
        else:
            assert not j.reason.startswith(("no source", "contradicted")), j.reason
        if j.quote and not j.contradicted:  # what it was checked against: the nearest evidence, or for a to-do
            # the user's line that comes nearest to it
            assert "; nearest, does not support: " in j.reason or "; the nearest a user message comes: " in j.reason
    for j in high:
        assert j.reason.startswith("done: ") or ", turn " in j.reason or j.reason.startswith("previous summary")


def test_reason_through_library_cli_and_decision_log(tmp_path):
    summary = "## Current Work\n- Pushed to origin\n\n## Pending Tasks\n- Send the release notes to the team\n"
    evidence = tmp_path / "ev.jsonl"
    push = {
        "kind": "tool_output",
        "name": "Bash",
        "call": 'Bash: {"command": "git push"}',
        "content": "To github.com:acme/app.git\n   1a2b3c4..5d6e7f8  main -> main",
    }
    evidence.write_text(json.dumps(push) + "\n" + json.dumps({"kind": "user_message", "content": "push it"}) + "\n")
    (tmp_path / "s.md").write_text(summary)
    log = tmp_path / "log.jsonl"
    env = {"SJC_DECISION_LOG": str(log), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = [sjc_exe(), "judge", "--summary", str(tmp_path / "s.md"), "--evidence-jsonl", str(evidence)]
    out = json.loads(subprocess.run([*run, "--json"], capture_output=True, text=True, env=env, check=True).stdout)
    pushed, notes = out["entries"]
    assert pushed["decision"] == "keep" and pushed["reason"].startswith("done: Bash `git push`")
    assert notes["decision"] == "prune" and notes["reason"].startswith("no source")
    text = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    assert "done: Bash `git push`" in text and "no source" in text
    records = [rec for _, rec, _ in decision_log.read(log)]
    assert records[-1]["entries"][0]["reason"].startswith("done: Bash `git push`")
    assert records[-1]["entries"][1]["reason"].startswith("no source")


# -- hostile shapes (how long they take: benchmarks/worst_case.py) ----------------------------------------

MB = 1_000_000
SHAPES = {
    "letters": "a" * MB,
    "camelCase": "aB" * (MB // 2),
    "digits": "7" * MB,
    "numbers and spaces": "1 " * (MB // 2),
    "comma numbers": "1," * (MB // 2),
    "dotted": "a." * (MB // 2),
    "path": "/a" * (MB // 2),
    "snake": "a_" * (MB // 2),
    "backticks": "`a" * (MB // 2),
    "plan cue": "once " * (MB // 5),
    "percentages": "5 % of " * (MB // 7),
    "done": "✅ Added " + "x" * MB,
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_megabyte_entry_of_a_hostile_shape_is_judged(shape):
    text = SHAPES[shape]
    out = "12 passed in 0.30s\n" + "word " * 300
    src = Source(kind="tool_output", name="Bash", call='Bash: {"command": "pytest -q"}', content=out)
    chunk = Chunk(id=0, source=0, origin=Origin(kind="tool_output", name="Bash"), text=f"{src.call}\n{out}", start=0)
    request = JudgeRequest(
        entries=[JudgeEntry(id=0, section="Current Work", text=text, evidence=[0])],
        evidence=[chunk],
        sources=[src, Source(kind="user_message", content="add tests")],
        assistant_prose=[text[:20_000]],
    )
    out = LexicalJudge().judge(request)
    (j,) = out.judgments
    assert j.entry_id == 0 and j.score is not None and 0.0 <= j.score <= 1.0 and not out.errors


def test_identifiers_of_a_long_unbroken_token():
    assert anchors("x" * MB) == set()
    assert anchors("ab" * 10 + "C" + "d" * MB) == {"ab" * 10 + "C" + "d" * MB}


_TEXT = st.text(alphabet="ab1.,_ -:\n9Ä", max_size=40)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, literal=st.text(alphabet="a1._-Ä", min_size=1, max_size=4))
def test_not_after_matches_as_a_leading_look_behind(text, literal):
    """The probes' patterns start with the character they consume (fast to search), not with a
    look-behind: the matches must be exactly those of the look-behind written first."""
    from sjc_mcp.judges._signals_values import _NUMBER, _NUMBER_ALONE, _not_after

    for not_after in (r"\w", r"[\w.]"):
        old = re.compile("(?<!" + not_after + ")" + re.escape(literal), re.IGNORECASE)
        new = re.compile(_not_after(not_after, literal), re.IGNORECASE)
        assert [m.span() for m in old.finditer(text)] == [m.span() for m in new.finditer(text)]
    old = re.compile(r"(?<![\w.])" + _NUMBER + " ?a", re.IGNORECASE)
    new = re.compile(_NUMBER_ALONE + " ?a", re.IGNORECASE)
    assert [(m.span(), m.groups()) for m in old.finditer(text)] == [(m.span(), m.groups()) for m in new.finditer(text)]


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab_.-/ \n1xé", max_size=60), min_size=1, max_size=4),
    anchor=st.text(alphabet="ab_.-/\n1xé", min_size=1, max_size=6),
    near=st.lists(st.integers(min_value=0, max_value=3), max_size=3),
)
def test_an_anchor_searched_first_in_the_entrys_chunks_is_found_as_in_the_whole_pool(texts, anchor, near):
    """``Span.in_evidence`` looks in the entry's own chunks first, then in the pooled text: the answer is
    the pooled text's (a whole token in one chunk is one in the pool; a token across two chunks is not
    found in either alone)."""
    from sjc_mcp.judges._signals_span import Span
    from sjc_mcp.judges._signals_text import found

    origin = Origin(kind="tool_output", name="t")
    chunks = [Chunk(id=i, source=0, origin=origin, text=t, start=0) for i, t in enumerate(texts)]
    request = JudgeRequest(entries=[], evidence=chunks, sources=[Source(kind="tool_output", content="x")])
    own = [texts[i] for i in near if i < len(texts)]
    assert Span(request).in_evidence(anchor, own) == found(anchor, "\n".join(texts))
