"""A span given as plain roles (a labelled case, a caller's history) is read as each host means it, as its
transcript reader reads it: what the host injects into a user turn is no one's words. The eval scores what
the product would judge, not the case file's raw text."""

from __future__ import annotations

import json

from sjc_mcp import hosts
from sjc_mcp.hosts.base import Item


def users(items: list[Item]) -> list[str]:
    return [it.content for it in items if it.role == "user"]


def test_claude_code_drops_reminders_and_keeps_the_users_words_after_one() -> None:
    items = [
        Item(
            role="user",
            content="<system-reminder>\nThe user opened x.vue in the IDE.\n</system-reminder>\nfix the cart",
        ),
        Item(
            role="user",
            content="<system-reminder>\nUserPromptSubmit hook success: do not touch /srv\n</system-reminder>",
        ),
        Item(role="user", content="<command-name>/compact</command-name>"),
        Item(role="user", content="<bash-stdout>ok</bash-stdout>"),
    ]
    read = hosts.meaning("claude-code", items)
    assert users(read) == ["\nfix the cart"]
    assert [it.name for it in read if it.role == "tool_output"] == ["user-shell"]


def test_codex_drops_its_environment_and_agents_md() -> None:
    items = [
        Item(
            role="user", content="# AGENTS.md instructions for /src\n\n<INSTRUCTIONS>\n- Run zig fmt\n</INSTRUCTIONS>"
        ),
        Item(role="user", content="<environment_context>\n  <cwd>/src</cwd>\n</environment_context>"),
        Item(role="user", content="bump the version"),
    ]
    assert users(hosts.meaning("codex", items)) == ["bump the version"]


def test_codex_unwraps_its_exec_json_as_the_rollout_reader_does() -> None:
    ok = json.dumps({"output": "t/parse.t .. ok\nAll tests successful.", "metadata": {"exit_code": 0}})
    bad = json.dumps({"output": "Can't locate YAML/Tiny.pm in @INC", "metadata": {"exit_code": 2}})
    plain = "not JSON at all"
    items = [Item(role="tool_output", content=c, name="shell", call_id=f"c{i}") for i, c in enumerate((ok, bad, plain))]
    read = hosts.meaning("codex", items)
    assert [(it.content, it.is_error, it.name, it.call_id) for it in read] == [
        ("t/parse.t .. ok\nAll tests successful.", False, "shell", "c0"),
        ("Can't locate YAML/Tiny.pm in @INC", True, "shell", "c1"),
        ("not JSON at all", False, "shell", "c2"),
    ]


def test_openclaw_drops_its_runtime_context() -> None:
    items = [
        Item(role="user", content="<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nruntime: agent=main\n<<<END>>>"),
        Item(role="user", content="ship it"),
    ]
    assert users(hosts.meaning("openclaw", items)) == ["ship it"]


def test_hermes_unwraps_its_terminal_json() -> None:
    out = Item(
        role="tool_output", content=json.dumps({"output": "12 examples, 0 failures", "exit_code": 0}), name="terminal"
    )
    assert [it.content for it in hosts.meaning("hermes", [out])] == ["12 examples, 0 failures"]


def test_generic_and_unknown_hosts_take_the_items_as_they_are() -> None:
    items = [Item(role="user", content="<system-reminder>x</system-reminder>")]
    assert hosts.meaning("generic", items) == items
    assert hosts.meaning("no-such-host", items) == items
