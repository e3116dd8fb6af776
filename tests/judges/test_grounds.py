"""Grounds to delete an entry that a person can check: names the span lacks, to-dos no user asked for and
no failure calls for, action lines whose tool call never ran, the agent's own approximate tallies, and
contradictions only between values of the same thing."""

from __future__ import annotations

import pytest

from sjc_mcp import Config, judge_summary
from sjc_mcp.judges import _signals_grounds as g
from sjc_mcp.judges._signals_span import Span
from sjc_mcp.judges._signals_text import words
from sjc_mcp.judges._signals_values import contradiction, probes, unsourced_counts
from sjc_mcp.models import JudgeRequest, Source


def bash(command: str, output: str, is_error: bool = False) -> Source:
    return Source(
        kind="tool_output",
        content=output,
        name="Bash",
        call=f'Bash: {{"command": "{command}"}}',
        is_error=is_error,
    )


def user(text: str) -> Source:
    return Source(kind="user_message", content=text)


def judged(summary: str, sources: list[Source], tmp_path, prose: tuple[str, ...] = ()):
    r = judge_summary(summary, sources, config=Config.of(decision_log=str(tmp_path / "l.jsonl")), assistant_prose=prose)
    return {e.text.split("\n")[0].lstrip("- "): e for e in r.entries}


@pytest.mark.parametrize(
    ("entry", "want"),
    [
        (
            "Added `findSessionsForWorktree()` to `strategy/manual_commit.go`",
            {"findSessionsForWorktree", "strategy/manual_commit.go"},
        ),
        ("Stored at `<session>/subagents/agent-<agentId>.jsonl`", {"/subagents/agent-"}),
        ("Use TypeScript and GitHub", set()),  # brand names: plain words
        ("Took 3m32s, about ~111k tokens, a 5-minute delay", set()),  # values, not names
        ("Edit done but not verified/committed", set()),
        ("Pushed commit 0a7d3f9 and `docker` job", {"0a7d3f9", "docker"}),
        ("Run `mise run fmt && mise run lint`", set()),  # a command of plain words
    ],
)
def test_names_an_entry_gives(entry, want):
    assert set(g.names(entry)) >= want
    if not want:
        assert g.names(entry) == []


def test_a_name_is_missing_only_when_a_word_of_it_is_nowhere_in_the_span():
    vocab = {"strategy", "manual", "commit", "findsessionsforworktree", "0a7d3f9e11", "session"}
    assert g.missing(["findSessionsForWorktree()", "strategy/manual_commit.go"], vocab) == []
    assert g.missing(["restoreSessionTranscriptFromShadow"], vocab) == ["restoreSessionTranscriptFromShadow"]
    assert g.missing(["0a7d3f9"], vocab) == []  # the short hash of a longer one
    assert g.missing(["strategy/manual_commit_rewind.go"], vocab) == ["strategy/manual_commit_rewind.go"]


def test_what_is_a_to_do():
    assert g.is_todo("Pending Tasks", "Run the tests", 1.0, False)
    assert g.is_todo("Next steps", "Then PR #93", 0.0, False)  # a to-do section: whatever its wording
    assert not g.is_todo("Pending Tasks", "None explicitly remaining - all requested items done", 0.0, False)
    assert not g.is_todo("Pending Tasks", "✅ Add StartedAt", 0.0, True)  # ticked off
    assert not g.is_todo("Current Work", "Modified `hooks.go` to check for REVIEW.md", 0.5, False)
    assert g.is_todo("Current Work", "Run tests and lint", 1.0, False)
    assert g.is_todo("", "publish version 2.0 next", 1.0, False)  # no heading: the wording decides
    assert not g.is_todo("", "the build passed: 48 passed", 0.0, False)
    assert g.is_todo("Pending user asks", "Post a timing table in the PR", 1.0, False)
    assert not g.is_todo("Primary Request and Intent", "Remove the session ID fallback", 1.0, False)
    assert not g.is_todo("Errors and fixes", "Fix: added the grace period", 1.0, False)
    assert g.is_todo("Current Work", "⏳ Still need: `rewind.go`, `resume.go`", 0.5, False)  # marked as still to do


def test_what_is_a_rule():
    assert g.is_rule("Constraints/Rules", "Do not commit anything; the user commits himself.")
    assert g.is_rule("Constraints & Preferences", "- **Never** touch the `accounts` table")
    assert g.is_rule("active_constraints", "Goal: CI under 8 minutes per PR")
    assert not g.is_rule("Constraints", "Each worker needs its own database")  # not worded as a rule
    assert not g.is_rule("Key Technical Concepts", "Never block the event loop")  # not among the constraints


def test_a_rule_no_user_message_or_previous_summary_sets(tmp_path):
    summary = (
        "## Constraints & Preferences\n"
        "- Do not commit anything; the user reviews the changes himself.\n"
        "- Never write to the `accounts` table from these migrations.\n"
        "\n## Files and Code Sections\n- `db/migrate.sql`: the migration\n- `src/app.py`: app\n- `src/db.py`: db\n"
    )
    sources = [
        user("add the currency column; never write to the accounts table, other services own it"),
        bash("ls db src", "migrate.sql app.py db.py"),
    ]
    got = judged(summary, sources, tmp_path)
    made_up = got["Do not commit anything; the user reviews the changes himself."]
    assert made_up.decision == "prune" and "a rule that no user message or previous summary sets" in made_up.reason
    assert got["Never write to the `accounts` table from these migrations."].decision != "prune"


def test_a_to_do_a_user_message_asks_for():
    users = [words("good. last thing: add Currency to the Invoice struct in internal/billing/invoice.go")]
    assert g.asked(words("Add `Currency` to the `Invoice` struct in `internal/billing/invoice.go`."), users)
    assert not g.asked(words("Open a PR with the three migrations and the regenerated sqlc code."), users)
    # the user asked for the feature, not for this step of it
    users = [words("yes, please implement the token calculation"), words("thanks, looks good")]
    assert not g.asked(words("Run tests to verify token calculation tests pass"), users)
    # a to-do of generic words only asks for nothing in particular
    assert not g.asked(words("Commit and push"), [words("commit and push when done")])
    # plurals and verb endings
    users = [words("ah copilot left some comments on the review, let's look at them")]
    assert g.asked(words("Look at the Copilot comment"), users)
    # the last user message, where pending work comes from, in words of its own: two informative words shared
    earlier, last = words("please add a proposal section to the docs"), words("I do not agree with the proposed parser")
    todo = words("Discuss the proposed fix with the user before changing the parser")
    assert g.asked(todo, [earlier, last]) and not g.asked(todo, [last, earlier])


def test_a_to_do_a_failing_output_calls_for():
    failures = g.Failures(
        [
            ("ok  \tpkg/a\nFAIL\tpkg/b [build failed]\ncmd/cli/transcript_test.go:942:15: undefined: json\n", False),
            ("Auto-merging x.go\nCONFLICT (content): Merge conflict in cmd/cli/strategy/auto_commit.go\n", False),
            ("src/parse.rs:10:5: unused variable `depth`\n", True),
        ]
    )
    ew = words("Fix the missing `encoding/json` import in transcript_test.go")
    assert g.fixing("Fix the missing `encoding/json` import in transcript_test.go")
    assert "undefined: json" in (failures.calling_for(ew, g.names("`transcript_test.go`")) or "")
    assert failures.calling_for(words("Resolve the conflict in auto_commit.go"), ["auto_commit.go"])
    assert failures.calling_for(words("Document the README"), []) is None
    assert failures.calling_for(words("Fix the unused `depth` in parse.rs"), ["parse.rs"])  # a linter's finding
    assert not g.fixing("Add a Storybook story for `DateRangePicker`")
    assert g.fixing("Add the missing `encoding/json` import") and g.fixing("Re-run the failing `test_total`")
    # code read from a file is not a failure report
    assert g.Failures([('    return fmt.Errorf("failed to open: %w", err)\n', False)]).lines == []


@pytest.mark.parametrize(
    ("output", "todo", "names"),
    [
        # GHC: the name is on the line under the report
        (
            "[2 of 3] Compiling Lib\nsrc/Lib.hs:14:7: error: [GHC-83865]\n"
            "    • Couldn't match expected type ‘Int’ with actual type ‘[Char]’\n"
            "    • In the expression: parseCount raw\n",
            "Fix the type mismatch in parseCount",
            ["parseCount"],
        ),
        # rustc: the file is on the "-->" line
        (
            "error[E0308]: mismatched types\n  --> src/config.rs:4:18\n   |\n4  |     let port: u16 = raw;\n",
            "Fix the mismatched types error in config.rs",
            ["config.rs"],
        ),
        # MSBuild / dotnet build, a warning the user's build reports
        (
            "Program.cs(12,17): warning CS8618: Non-nullable property 'Name' must contain a non-null value "
            "[/src/App/App.csproj]\nBuild succeeded.\n    1 Warning(s)\n    0 Error(s)\n",
            "Silence the CS8618 nullable warning on Name in Program.cs",
            ["Program.cs", "CS8618"],
        ),
        # tsc, plain and --pretty
        (
            "src/api.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
            "Fix the TS2322 error in api.ts",
            ["api.ts", "TS2322"],
        ),
        (
            "src/api.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'.\n",
            "Fix the TS2322 error in api.ts",
            ["api.ts", "TS2322"],
        ),
        # a compiler's warning and pytest's warning summary
        (
            "warning: unused variable: `depth`\n --> src/parse.rs:10:9\n",
            "Remove the unused variable in parse.rs",
            ["parse.rs"],
        ),
        (
            "tests/test_io.py::test_read\n  /src/reader.py:8: DeprecationWarning: datetime.utcnow() is deprecated\n",
            "Fix the utcnow deprecation warning in reader.py",
            ["reader.py"],
        ),
        # biber and LaTeX
        (
            "INFO - This is Biber 2.19\nWARN - Datamodel: entry 'smith2016' (refs.bib): Invalid field 'howpublished' "
            "for entrytype 'article'\n",
            "Fix the `smith2016` entry (howpublished is invalid for an article)",
            ["smith2016"],
        ),
        (
            "LaTeX Warning: Reference `fig:overview' on page 3 undefined on input line 88.\n",
            "Fix the undefined fig:overview reference",
            ["fig:overview"],
        ),
        (
            "! LaTeX Error: File `acmart-tagged.cls' not found.\n",
            "Fix the missing acmart-tagged.cls class file",
            ["acmart-tagged.cls"],
        ),
    ],
)
def test_a_to_do_compiler_reports_call_for(output, todo, names):
    failures = g.Failures([(output, False)])
    assert g.fixing(todo)
    assert failures.calling_for(words(todo), names), failures.lines
    assert failures.calling_for(words("Add a Grafana panel for the eviction rate"), ["Grafana"]) is None


def test_a_failure_in_any_command_s_output_calls_for_a_to_do(tmp_path):
    """A checker the judge knows nothing of (zizmor here) reports a finding; the to-do fixing it follows from it."""
    summary = (
        "## Pending Tasks\n"
        "- Fix the zizmor `artipacked` finding: set `persist-credentials: false` on `actions/checkout`.\n"
        "- Add a Grafana panel for the eviction rate.\n"
        "\n## Files and Code Sections\n- `.github/workflows/release.yml`: the release workflow\n"
    )
    zizmor = (
        "warning[artipacked]: credential persistence through GitHub Actions artifacts\n"
        "  --> .github/workflows/release.yml:22:9\n   |\n"
        "22 |       - uses: actions/checkout@v4 # does not set persist-credentials: false\n"
        "\n1 finding: 0 unknown, 0 informational, 0 low, 1 medium, 0 high\n"
    )
    sources = [
        user("the release workflow fails on tags, look at it"),
        bash("zizmor .github/workflows/release.yml", zizmor),
    ]
    got = judged(summary, sources, tmp_path)
    fix = got["Fix the zizmor `artipacked` finding: set `persist-credentials: false` on `actions/checkout`."]
    assert fix.decision != "prune" and "a failing output may call for" in fix.reason
    assert got["Add a Grafana panel for the eviction rate."].decision == "prune"


def test_a_report_s_detail_lines_stop_at_the_first_other_line():
    text = "src/Lib.hs:14:7: error:\n    • Couldn't match type\nok Lib\n    unrelated indented\n"
    (line, _), *_ = g.Failures([(text, False)]).lines
    assert line == "src/Lib.hs:14:7: error: • Couldn't match type"
    # TeX's own error lines; a Fortran comment that says "error" is none
    tex = g.Failures([("l.42 \\citep\n! Undefined control sequence.\nl.42 \\citep\n", False)]).lines
    assert [line for line, _ in tex] == ["! Undefined control sequence."]
    assert g.Failures([("! returns an error if nx < 2\n", False)]).lines == []
    # build output without a report: nothing
    assert g.Failures([("Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n", False)]).lines == []


def test_to_dos_through_the_judge(tmp_path):
    summary = (
        "## Pending Tasks\n"
        "- Add `Currency` to the `Invoice` struct in `internal/billing/invoice.go`.\n"
        "- Fix the failing `test_order_total` in `tests/test_orders.py`.\n"
        "- Add a Grafana panel for the eviction rate.\n"
        "\n## Files and Code Sections\n- `internal/billing/invoice.go`: the Invoice struct\n"
        "- `tests/test_orders.py`: order tests\n- `src/app.py`: entry point\n- `src/db.py`: the database\n"
    )
    sources = [
        user("add Currency to the Invoice struct in internal/billing/invoice.go"),
        bash("pytest -q", "FAILED tests/test_orders.py::test_order_total - assert 9 == 10\n1 failed, 40 passed"),
        bash("ls src internal/billing", "app.py db.py invoice.go"),
    ]
    got = judged(summary, sources, tmp_path)
    grafana = got["Add a Grafana panel for the eviction rate."]
    assert grafana.decision == "prune"
    assert grafana.reason.startswith("no source: a to-do that no user message asks for and no failing output calls for")
    failing = got["Fix the failing `test_order_total` in `tests/test_orders.py`."]
    assert failing.decision != "prune"
    asked = got["Add `Currency` to the `Invoice` struct in `internal/billing/invoice.go`."]
    assert asked.decision != "prune"


def test_a_to_do_the_previous_summary_carried_over(tmp_path):
    summary = (
        "## Pending Tasks\n- Rotate the signing keys for the staging bucket.\n- Add a Grafana panel for eviction.\n"
    )
    evidence = [user("thanks, go on"), bash("ls", "main.tf variables.tf")]
    r = judge_summary(
        summary,
        evidence,
        previous_summary="## Pending Tasks\n- Rotate the staging bucket's signing keys\n",
        config=Config.of(decision_log=str(tmp_path / "l.jsonl"), max_prune_share=1.0),
    )
    carried, invented = r.entries
    assert carried.decision == "keep" and invented.decision == "prune"


def test_an_action_a_user_message_reports_is_not_unbacked(tmp_path):
    summary = "## Progress\n- Pushed the fix to origin/main.\n- Deployed the release to production.\n"
    r = judge_summary(
        summary,
        [user("I pushed the fix to origin/main myself"), bash("ls", "app.py")],
        config=Config.of(decision_log=str(tmp_path / "l.jsonl"), max_prune_share=1.0),
    )
    pushed, deployed = r.entries
    assert "no such call ran" not in (pushed.reason or "") and pushed.decision != "prune"
    assert deployed.decision == "prune" and "deploy was done, and no such call ran in the span" in deployed.reason


def test_an_action_line_whose_tool_call_never_ran(tmp_path):
    """Hermes' action items (``_signals_tool_claims``): a claim no call of the span backs is grounds."""
    summary = (
        "## Completed Actions\n"
        "1. RUN `echo build ok; cat build.log` — printed `build ok` [tool: terminal]\n"
        "2. EMAIL report_q3.csv to all customers — sent [tool: send_message]\n"
        "3. DEPLOY dist/app-2.4.1.tar.gz to production — succeeded [tool: terminal]\n"
        "\n## Active State\n- The workspace holds `build.log`\n- Version 2.4.1\n- 41 tests passed\n"
        "- Artifact `dist/app-2.4.1.tar.gz`\n"
    )
    out = "build ok\nversion 2.4.1, 41 tests passed, artifact dist/app-2.4.1.tar.gz\nreport_q3.csv"
    term = Source(
        kind="tool_output", content=out, name="terminal", call='terminal: {"command": "echo build ok; cat build.log"}'
    )
    got = judged(summary, [term, user("what is the artifact size?")], tmp_path)
    assert got["1. RUN `echo build ok; cat build.log` — printed `build ok` [tool: terminal]"].decision == "keep"
    email = got["2. EMAIL report_q3.csv to all customers — sent [tool: send_message]"]
    assert email.decision == "prune" and email.reason.startswith("no source: it says send_message did it")
    deploy = got["3. DEPLOY dist/app-2.4.1.tar.gz to production — succeeded [tool: terminal]"]
    assert deploy.decision == "prune" and "did DEPLOY, and no terminal call" in deploy.reason


def test_the_agents_approximate_tally():
    entry = "User added ~8 lines to the config by hand"
    ps = probes(entry, lambda a: False)
    assert [p.value for p in ps if p.approx] == [("8",)]
    prose = "Looks like the user added ~8 lines to the config."
    got = unsourced_counts(entry, prose, ["config.yaml: 12 lines changed"], lambda p, i: False, ps)
    assert got == [("8 lines", True)]
    # an approximate value is never held against the evidence as a contradiction
    assert contradiction("The file has about 40 lines", ["the file has 52 lines"]) is None


def test_values_of_differently_qualified_things_do_not_contradict():
    line = '195→// Format: "<branch>@<commit-hash-prefix>" (hash truncated to 12 chars)'
    assert contradiction("Falls back to commit hash (40 chars) which fails validation", [line]) is None
    assert (
        contradiction("The branch name keeps 40 chars of the commit hash", ["commit hash: 12 chars kept"]) is not None
    )


def test_the_failure_scan_reads_the_newest_outputs_within_its_budget(monkeypatch):
    """A span of many megabytes of command output is read for failures in bounded time: the newest outputs,
    up to ``MAX_FAILURE_CHARS`` in all, and never a file's text."""
    sources = [
        user("the order totals look wrong"),
        bash("pytest -q", "FAILED tests/test_orders.py::test_order_total - assert 9 == 10\n1 failed, 40 passed"),
        Source(kind="tool_output", content="raise ValueError: not a report\n", name="Read", call="Read: a.py"),
        *(bash(f"ls build{i}", "ok " * 100) for i in range(3)),
        bash("latexmk", "LaTeX Warning: Citation `knuth84' undefined on input line 12.\n"),
    ]

    def lines() -> list[str]:
        return [line for line, _ in Span(JudgeRequest(entries=[], evidence=[], sources=sources)).failures.lines]

    assert lines() == [
        "FAILED tests/test_orders.py::test_order_total - assert 9 == 10",
        "1 failed, 40 passed",
        "LaTeX Warning: Citation `knuth84' undefined on input line 12.",
    ]
    monkeypatch.setattr(g, "MAX_FAILURE_CHARS", 500)  # the newest outputs fill it before the test run
    assert lines() == ["LaTeX Warning: Citation `knuth84' undefined on input line 12."]
