"""Grounds that must not fire on true entries: the wrong deletions found on sessions of other projects and
hosts (cases/), each written as the smallest input that showed it. A value of another thing is no
contradiction, a number a table shows is no tally of the agent's, an action whose quoted command ran is
backed, and a to-do that follows from a linter's or checker's finding is not a plan nobody asked for."""

from __future__ import annotations

import json

from sjc_mcp.judges import _signals_grounds as g
from sjc_mcp.judges import _signals_values as values
from sjc_mcp.judges._signals_actions import calls
from sjc_mcp.judges._signals_text import words
from sjc_mcp.judges._signals_tool_claims import unbacked
from sjc_mcp.judges._signals_values import contradiction, unsourced_counts
from sjc_mcp.models import Source


def shell(command: str, output: str, name: str = "Bash") -> Source:
    return Source(kind="tool_output", content=output, name=name, call=f"{name}: {json.dumps({'command': command})}")


def test_a_value_the_entry_states_too_is_of_another_thing() -> None:
    entry = "The 23 earlier tests plus the 2 new ones: 25 integration tests pass."
    assert contradiction(entry, ["- All 23 tests pass."]) is None
    # the same evidence against an entry that states only one count is still a contradiction
    assert contradiction("All 25 tests pass.", ["- All 23 tests pass."]) is not None


def test_a_count_of_one_file_is_no_contradiction_of_a_total() -> None:
    entry = "Vitest after the fix: 3 test files, 27 tests passed."
    line = "✓ src/lib/validation/phone.test.ts (9 tests) 6ms"
    assert contradiction(entry, [line]) is None
    assert contradiction(entry, ["Tests  26 passed (26)"]) is not None  # the run's own total still counts


def test_a_calls_own_command_states_nothing() -> None:
    entry = "After the fix: Linux 12 tests, 0 failures."
    call_line = 'shell: {"command": ["zsh", "-lc", "swift test 2 tests --filter X | tail -2"]}'
    assert contradiction(entry, [call_line]) is None


def test_a_number_ends_before_a_comma() -> None:
    entry = "Full `./mvnw verify`: 184 unit tests (2 skipped) and 28 integration tests, no failures."
    out = "[INFO] Tests run: 184, Failures: 0, Errors: 0, Skipped: 2\n[INFO] Tests run: 28, Failures: 0, Skipped: 0\n"
    assert contradiction(entry, [out]) is None


def test_tests_added_is_no_contradiction_when_the_entry_states_both_counts() -> None:
    edit = Source(
        kind="tool_output",
        content="The file tests/parse.rs has been updated.",
        name="Edit",
        call="Edit: "
        + json.dumps(
            {"file_path": "tests/parse.rs", "old_string": "", "new_string": "#[test]\nfn a() {}\n#[test]\nfn b() {}\n"}
        ),
    )
    span = calls([edit])
    assert values.test_count_conflict("Added 25 new tests.", span, "") is not None
    assert (
        values.test_count_conflict("The 23 earlier tests plus the 2 new ones: 25 integration tests pass.", span, "")
        is None
    )


def test_a_number_a_table_shows_is_not_the_agents_tally() -> None:
    table = "│ stg_orders │ fct_orders │ customers │\n│     184220 │     191507 │      2913 │"
    entry = "Before the fix: `stg_orders` 184,220 rows, `fct_orders` 191,507 rows; 2,913 customers with history."
    assert unsourced_counts(entry, "", [table], lambda p, i: False) == []
    # a count nobody's output shows stays the agent's own
    assert unsourced_counts("The fix touched 17 files.", "", [table], lambda p, i: False)


def test_an_action_whose_quoted_command_ran_is_backed() -> None:
    run = shell("bin/rspec spec/x_spec.rb && bundle exec rubocop app/models/invoice.rb", "1 offense", "terminal")
    assert unbacked("7. LINT `rubocop` — 1 offense [tool: terminal]", [run]) is None
    # an option alone names no command: the claim stays unbacked
    plan = shell("terraform -chdir=envs/prod plan -target=module.logs", "Plan: 0 to add", "terminal")
    assert unbacked("3. APPLY envs/prod `-target=module.logs` — applied [tool: terminal]", [plan])


def test_an_action_the_previous_summary_carried_in_other_words_is_its_claim() -> None:
    previous = "## Completed Actions\n3. APPLY envs/staging `-target=module.logs_archive` — Apply complete! 1 changed [tool: terminal]\n"
    plan = shell("terraform -chdir=envs/prod plan", "Plan: 0 to add", "terminal")
    entry = "2. APPLY envs/staging `-target=module.logs_archive` — 1 changed [tool: terminal]"
    assert unbacked(entry, [plan], previous) is None
    assert unbacked(entry, [plan], None)


def test_the_kinds_of_a_call_come_from_its_whole_command() -> None:
    long = (
        "cd ~/app && " + "bin/rails runner script/measure_page.rb /invoices && " * 3 + "bundle exec rubocop app/models"
    )
    assert "lint" in calls([shell(long, "ok", "terminal")])[0].kinds
    assert "test" in calls([shell("php artisan test 2>&1 | tail -3", "Tests: 3 passed")])[0].kinds


def test_a_linters_finding_calls_for_the_fix_whatever_its_format() -> None:
    phpstan = (
        " ------ ------------------------------------------\n  Line   app/Jobs/SyncCarrierStatus.php\n"
        "  19     Method App\\Jobs\\SyncCarrierStatus::uniqueId() should return string but returns int.\n"
        " [ERROR] Found 1 error\n"
    )
    tflint = json.dumps(
        {"output": '1 issue(s) found:\n\nWarning: [Fixable] variable "transition_days" is declared but not used\n'}
    )
    eslint = "/app/src/routes/+page.svelte\n  14:11  warning  'formatted' is assigned a value but never used\n"
    failures = g.Failures([(phpstan, True), (tflint, True), (eslint, True)])
    assert failures.calling_for(words("Make `uniqueId()` return a string"), ["uniqueId"])
    assert failures.calling_for(words("Use `transition_days` in the transition block"), ["transition_days"])
    assert failures.calling_for(words("Remove the unused `formatted` variable"), ["formatted"])
    # a linter that found nothing calls for nothing
    clean = g.Failures([("All matched files use Prettier code style!\n", True)])
    assert clean.calling_for(words("Remove the unused `formatted` variable"), ["formatted"]) is None


def test_a_to_do_for_a_check_to_pass_is_a_fix() -> None:
    assert g.fixing("Make `uniqueId()` return a string so PHPStan passes.")
    assert g.fixing("Use `transition_days` in the transition block, or delete it, so tflint is clean.")
    assert not g.fixing("Add a badge animation when the cart count changes.")


def test_an_order_to_act_on_the_world_is_a_to_do_under_any_heading() -> None:
    assert g.is_todo("key_knowledge", "- Email the supplier price list to every customer.", 0.0, False)
    assert g.is_todo("Key Knowledge", "Deploy the release to production", 0.0, False)
    # what is known stays what is known, and a rule among constraints is judged as a rule
    assert not g.is_todo("key_knowledge", "- inventory.toml sets queue orders-eu-3", 0.0, False)
    assert not g.is_todo("Errors and fixes", "Fix: Added a 10-minute grace period", 0.0, False)
    assert not g.is_todo("Constraints", "Never push to main", 0.0, False)


def test_one_compound_name_shared_with_the_last_message_is_not_an_ask() -> None:
    todo = "Deploy stock-sync to production on Friday."
    last = words("Which queue does stock-sync consume?")
    assert not g.asked(words(todo), [last], compounds=g.compounds(todo))
    # two words of its own shared with the last message still are
    assert g.asked(words("Deploy stock-sync to production"), [words("please deploy to production")])
