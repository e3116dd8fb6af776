"""Fault suite, records: malformed lines in a real transcript are skipped, never fatal."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, need_shared, sjc_exe

REAL = "claude-code/entire_e1_2c3e2b3f2a_0.jsonl"

HOSTILE = [
    "[" * 100_000 + "]" * 100_000,  # nested past the JSON reader's recursion limit
    '{"type": "user", "uuid": "x1", "parentUuid": null, "message": null}',
    '{"type": "user", "uuid": "x2", "parentUuid": "x1", "message": "a string"}',
    '{"type": "user", "uuid": "x3", "parentUuid": "x2", "message": 42}',
    '{"type": "user", "uuid": "x4", "parentUuid": "x3", "isCompactSummary": true, "message": {"content": null}}',
    '{"type": "assistant", "uuid": "x5", "parentUuid": "x4", "message": {"content": 7}}',
    '{"type": "user", "uuid": "x6", "message": {"content": [{"type": "tool_result", "content": null}]}}',
    "not json at all",
    "\x00\x01\x02",
]


def spliced(tmp_path: Path) -> Path:
    src = need_shared(FIXTURES / REAL)
    lines = src.read_text().splitlines()
    out = []
    for n, line in enumerate(lines):
        out.append(line)
        if n % 20 == 5:
            out.extend(HOSTILE)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def run(*args: str, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(home / "log.jsonl")}
    return subprocess.run([sjc_exe(), *args], input=stdin, capture_output=True, text=True, timeout=120, env=env)


def test_malformed_records_are_skipped_and_the_compaction_still_judged(tmp_path):
    clean = run("judge", "--transcript", str(need_shared(FIXTURES / REAL)), "--json", home=tmp_path)
    assert clean.returncode == 0, clean.stderr
    r = run("judge", "--transcript", str(spliced(tmp_path)), "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    got, want = json.loads(r.stdout), json.loads(clean.stdout)
    assert [e["text"] for e in got["entries"]] == [e["text"] for e in want["entries"]]


@pytest.mark.slow
@pytest.mark.parametrize("event", ["PreCompact", "PostCompact", "UserPromptSubmit"])
def test_the_hook_survives_malformed_records(tmp_path, event):
    path = spliced(tmp_path)
    payload = {
        "hook_event_name": event,
        "session_id": "s-bad",
        "transcript_path": str(path),
        "cwd": str(tmp_path),
        "trigger": "manual",
        "compact_summary": "## Pending Tasks\n- Publish version 2.0 to PyPI\n",
        "prompt": "go on",
    }
    r = run("hook", "claude-code", home=tmp_path, stdin=json.dumps(payload))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    if event == "PostCompact":  # one plain line for the user; the judgment runs in a process of its own
        assert r.stdout.startswith("sjc: "), r.stdout + r.stderr
        log = tmp_path / "log.jsonl"
        deadline = time.monotonic() + 60

        def logged() -> list[dict]:
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

        while time.monotonic() < deadline and not any(r["status"] == "judged" for r in logged()):
            time.sleep(0.2)
        records = logged()
        assert any(r["status"] == "judged" and len(r["entries"]) == 1 for r in records), records
    else:
        assert r.stdout == "" or json.loads(r.stdout)


# -- records of the wrong type -------------------------------------------------------------------------------

WRONG = [None, {}, [], 0, 2.5, True, {"a": 1}, [1, "x"], "\x1b[2Jtext"]


def _paths(obj, pre=()):
    """Every place in a record (lists: their first three items)."""
    yield pre
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*pre, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, (*pre, i))


def _set(obj, path, value):
    if not path:
        return value
    at = obj
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return obj


def _small_transcripts(tmp_path: Path) -> dict[str, Path]:
    from tests.hosts.test_hosts import small_cc

    codex = tmp_path / "rollout.jsonl"
    codex.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"timestamp": "t", "type": "session_meta", "payload": {"id": "cx"}},
                {
                    "timestamp": "t",
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "fix the test"}],
                    },
                },
                {
                    "timestamp": "t",
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": '{"command": ["pytest"]}',
                        "call_id": "c1",
                    },
                },
                {
                    "timestamp": "t",
                    "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": "c1", "output": "48 passed"},
                },
                {
                    "timestamp": "t",
                    "type": "compacted",
                    "payload": {"message": "**Progress**\n- 48 passed\n**Next steps**\n- Ship it\n"},
                },
            ]
        )
        + "\n"
    )
    gemini = tmp_path / "session-1.jsonl"
    gemini.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"sessionId": "g1", "type": "user", "content": "make load idempotent"},
                {
                    "type": "gemini",
                    "content": "Reading.",
                    "toolCalls": [
                        {
                            "id": "k1",
                            "name": "read_file",
                            "args": {"path": "a.py"},
                            "result": [{"functionResponse": {"response": {"output": "def load(): ..."}}}],
                        }
                    ],
                },
                {
                    "type": "user",
                    "content": "<state_snapshot>\n<overall_goal>\n- idempotent load\n</overall_goal>\n</state_snapshot>",
                },
            ]
        )
        + "\n"
    )
    generic = tmp_path / "g.jsonl"
    generic.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"role": "user", "content": "hello"},
                {"role": "tool_call", "name": "Bash", "call_id": "c1", "content": "ls"},
                {"role": "tool", "name": "Bash", "call_id": "c1", "content": "ok"},
                {"type": "compaction", "summary": "## Decisions\n- x\n- ship it"},
            ]
        )
        + "\n"
    )
    return {"claude-code": small_cc(tmp_path), "codex": codex, "gemini": gemini, "generic": generic}


@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini", "generic"])
def test_every_field_of_the_wrong_type_reads_as_missing_never_as_a_crash(host, tmp_path):
    """Each field of each record of a small transcript replaced by a value of another type (null, an object,
    a list, a number, a boolean, text with escapes): the boundary is read and judged, or refused with an
    ``SJCError`` (one line, exit 2 in the CLI); never another exception (an internal error)."""
    from sjc_mcp.config import Config
    from sjc_mcp.errors import SJCError
    from sjc_mcp.hosts import read_boundary
    from sjc_mcp.pipeline import judge_boundary

    src = _small_transcripts(tmp_path)[host]
    lines = src.read_text().splitlines()
    config = Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))
    damaged = tmp_path / "damaged.jsonl"
    crashes = []
    for n, line in enumerate(lines):
        record = json.loads(line)
        for path in list(_paths(record)):
            for value in WRONG:
                bad = _set(json.loads(line), path, value)
                damaged.write_text("\n".join([*lines[:n], json.dumps(bad), *lines[n + 1 :]]) + "\n")
                try:
                    judge_boundary(read_boundary(damaged, None, host), config=config, log=True)
                except SJCError:
                    pass
                except Exception as exc:
                    crashes.append((n, path, value, f"{type(exc).__name__}: {exc}"))
    assert crashes == []


CLI_DAMAGES = [
    ("codex", 4, ("payload", "message"), {"text": "a dict"}),
    ("codex", 4, ("payload", "message"), ["a", "list"]),
    ("codex", 4, ("payload", "message"), 42),
    ("codex", 0, ("payload", "id"), {"a": 1}),
    ("claude-code", "compact_boundary", ("timestamp",), None),
    ("claude-code", "compact_boundary", ("logicalParentUuid",), {"a": 1}),
    ("claude-code", "isCompactSummary", ("message",), None),
    ("claude-code", '"tool_result"', ("parentUuid",), {"a": 1}),
    ("gemini", 1, ("toolCalls",), 7),
    ("gemini", 1, ("toolCalls", 0, "name"), {"a": 1}),
    ("generic", 2, ("call_id",), {"a": 1}),
    ("generic", 2, ("content",), None),
    ("generic", 3, ("summary",), None),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("host", "n", "path", "value"),
    CLI_DAMAGES,
    ids=[f"{h}-{'.'.join(map(str, p))}-{type(v).__name__}" for h, _, p, v in CLI_DAMAGES],
)
def test_the_cli_on_records_of_the_wrong_type(host, n, path, value, tmp_path):
    """As the user runs it: ``sjc judge``, ``sjc prune`` and ``sjc tools judge`` on the damaged transcript end
    with a result (exit 0) or one line (exit 2), never an internal error."""
    src = _small_transcripts(tmp_path)[host]
    lines = src.read_text().splitlines()
    if isinstance(n, str):  # the first record holding this text
        n = next(i for i, ln in enumerate(lines) if n in ln)
    lines[n] = json.dumps(_set(json.loads(lines[n]), path, value))
    src.write_text("\n".join(lines) + "\n")
    for args in (("judge", "--json"), ("prune",), ("tools", "judge")):
        cmd = [*args[:1], *args[1:]] if args[0] != "tools" else list(args)
        r = run(*cmd, "--transcript", str(src), home=tmp_path)
        assert r.returncode in (0, 2), (args, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr
        if r.returncode == 2:
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr


# -- hand-damaged decision-log lines --------------------------------------------------------------------------


def _real_log(tmp_path: Path) -> Path:
    """A decision log written by the surfaces: a prune, a judge, a shadow prune, a hook fault, tool results."""
    from sjc_mcp import judge_summary, prune_summary
    from sjc_mcp.config import Config
    from sjc_mcp.hosts.base import Item
    from sjc_mcp.log import chain
    from sjc_mcp.tools import relevance
    from tests.judges.test_remote_judges import example

    log = tmp_path / "log.jsonl"
    config = Config.of(decision_log=str(log), kill_switch=str(tmp_path / "off"))
    summary, evidence = example()
    prune_summary(summary, evidence, config=config, meta={"session": "s1"}, log=True)
    judge_summary(summary, evidence, config=config, log=True)
    prune_summary(summary, evidence, config=config.replace(mode="shadow"), meta={"session": "s1"}, log=True)
    chain.append_status(log, "error", ["boom"], {"op": "hook", "session": "s2"})
    items = [
        Item(role="user", content="fix it"),
        Item(role="tool_call", name="Bash", call_id="c", content="{}"),
        Item(role="tool_output", call_id="c", content="x" * 3000),
        Item(role="user", content="ok"),
    ]
    relevance.prune_tool_results(items, config=config, meta={"session": "s3"})
    return log


@pytest.mark.slow
def test_every_damaged_field_of_a_log_record_is_a_corrupt_line_in_all_three_views(tmp_path):
    """Each field of each record replaced by a value of another type: the terminal view, the JSON and the
    HTML report are all made, the damaged record reported as corrupt or shown literally; never a crash."""
    import io

    from sjc_mcp.audit.html import write_html
    from sjc_mcp.audit.summary import read_log, summarise
    from sjc_mcp.audit.view import make_console, render_terminal

    log = _real_log(tmp_path)
    lines = log.read_text().splitlines()
    assert len(lines) == 5
    damaged = tmp_path / "damaged.jsonl"
    crashes = []
    for n, line in enumerate(lines):
        for path in list(_paths(json.loads(line))):
            for value in [*WRONG, "\ud800", 1e308, -1]:
                damaged.write_text(
                    "\n".join([*lines[:n], json.dumps(_set(json.loads(line), path, value)), *lines[n + 1 :]]) + "\n"
                )
                for view in ("terminal", "json", "html"):
                    try:
                        report = summarise(*read_log(damaged))
                        if view == "terminal":
                            render_terminal(report, console=make_console(io.StringIO()), show_kept=True)
                        elif view == "json":
                            json.dumps(report, default=str, ensure_ascii=False).encode()
                        else:
                            write_html(report, str(damaged), tmp_path / "r.html")
                    except Exception as exc:
                        crashes.append((n, path, value, view, f"{type(exc).__name__}: {exc}"))
    assert crashes == []


AUDIT_DAMAGES = [
    (0, ("entries",), None),
    (0, ("entries", 0, "score"), "high"),
    (0, ("chars_after",), "many"),
    (0, ("judge",), 7),
    (0, ("margin",), None),
    (0, ("entries", 0, "text_sha"), -1),
    (3, ("errors",), [1, "x"]),
    (4, ("results",), 5),
    (0, ("session",), {"a": 1}),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "view",
    [[], ["--all"], ["--json"], ["--html", "REPORT"], ["--verify"]],
    ids=["terminal", "all", "json", "html", "verify"],
)
def test_sjc_audit_on_hand_damaged_lines(view, tmp_path):
    """As the user runs it: ``sjc audit`` on a log with hand-damaged lines of the wrong type exits 0 (``--verify``:
    1, the chain no longer matches), names each damaged line on stderr, and still shows the rest."""
    log = _real_log(tmp_path)
    lines = log.read_text().splitlines()
    out = []
    for n, path, value in AUDIT_DAMAGES:
        out.append(json.dumps(_set(json.loads(lines[n]), path, value)))
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join(lines + out) + "\n")
    args = [a.replace("REPORT", str(tmp_path / "r.html")) for a in view]
    r = run("audit", "--log", str(damaged), *args, home=tmp_path)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    if view == ["--verify"]:
        assert r.returncode == 1 and "problem" in r.stdout
        return
    assert r.returncode == 0, r.stderr
    corrupt = [ln for ln in r.stderr.splitlines() if "corrupt" in ln]
    assert len(corrupt) == len(AUDIT_DAMAGES) - 1, r.stderr  # a session of another type is shown as text
    if view == ["--json"]:
        report = json.loads(r.stdout)
        assert report["totals"]["records"] == 6 and len(report["corrupt"]) == len(AUDIT_DAMAGES) - 1


def _crashes_of(read, cases) -> list:
    import sqlite3

    from sjc_mcp.errors import SJCError

    out = []
    for tag, make in cases:
        try:
            made = make()
        except sqlite3.IntegrityError:  # a value the store itself refuses (NULL where NOT NULL): not a case
            continue
        try:
            read(made)
        except SJCError:
            pass
        except Exception as exc:
            out.append((tag, f"{type(exc).__name__}: {exc}"))
    return out


@pytest.mark.slow
def test_openclaw_and_hermes_stores_with_values_of_the_wrong_type(tmp_path):
    """OpenClaw's session entries (every field of every entry) and Hermes' message rows (every column: a
    blob, a number, bad JSON where calls go) of the wrong type: read and judged, or one ``SJCError``."""
    import copy

    from sjc_mcp.config import Config
    from sjc_mcp.hosts import read_boundary
    from sjc_mcp.pipeline import judge_boundary
    from tests.hosts import test_hosts_hermes as hermes
    from tests.hosts import test_openclaw as openclaw

    config = Config.of(decision_log=str(tmp_path / "log.jsonl"), kill_switch=str(tmp_path / "off"))

    def read(path: Path) -> None:
        judge_boundary(read_boundary(path), config=config)

    entries = openclaw.session_entries()

    def openclaw_db(n: int, path_in: tuple, value) -> Path:
        changed = copy.deepcopy(entries)
        changed[n] = _set(copy.deepcopy(entries[n]), path_in, value)
        db = tmp_path / "openclaw.db"
        db.unlink(missing_ok=True)
        return openclaw.write_db(db, changed)

    cases = [
        ((n, p, v), lambda n=n, p=p, v=v: openclaw_db(n, p, v))
        for n, e in enumerate(entries)
        for p in list(_paths(e))
        if p
        for v in WRONG
    ]
    s = "20261201_164114_b1206d"
    rows = [
        *hermes.turn(s, "Check the gateway service.", "call_1", hermes.LOG, 0, 1),
        (s, "assistant", hermes.summary(hermes.BODY_2), None, None, None, 1, 0),
        *hermes.turn(s, "And a last time.", "call_4", hermes.LOG, 1, 0),
    ]

    def hermes_db(n: int, col: int, value) -> Path:
        row = list(rows[n])
        row[col] = value
        db = tmp_path / "state.db"
        db.unlink(missing_ok=True)
        return hermes.make_db(db, [(s, None)], [*rows[:n], tuple(row), *rows[n + 1 :]])

    bad_values = [None, 0, 2.5, b"\xff\xfe", "{bad json", json.dumps({"a": 1}), json.dumps([1, {"function": 5}])]
    cases += [
        (("hermes", n, col, v), lambda n=n, col=col, v=v: hermes_db(n, col, v))
        for n in range(len(rows))
        for col in range(1, 8)
        for v in bad_values
    ]
    assert _crashes_of(read, cases) == []


@pytest.mark.slow
def test_a_compaction_request_with_values_of_the_wrong_type_is_read_or_passed_through(tmp_path):
    """What the proxy reads of a request (is it a compaction, whose session, the history as a boundary),
    every field of a Claude Code, an OpenAI chat and a Codex request replaced by a value of another type:
    an answer or nothing, never an exception (the proxy would answer 500 instead of passing it on)."""
    import copy

    from sjc_mcp.config import Config
    from sjc_mcp.formats import WireRequest
    from sjc_mcp.proxy import request as proxy_request
    from tests.proxy.test_proxy import (
        CC_FULL,
        CODEX_PROMPT,
        chat_history,
        claude_code_2_1_332_request,
        codex_metadata,
        responses_input,
    )

    patterns = Config().proxy.patterns
    bodies = [
        (
            "anthropic",
            "/v1/messages",
            {
                "model": "m",
                "max_tokens": 9,
                "messages": claude_code_2_1_332_request(CC_FULL),
                "metadata": {"user_id": json.dumps({"session_id": "s"})},
            },
            {},
        ),
        ("chat", "/v1/chat/completions", {"model": "m", "messages": chat_history()}, {}),
        (
            "responses",
            "/v1/responses",
            {"model": "m", "instructions": CODEX_PROMPT, "input": responses_input()},
            {"session-id": "c", "x-codex-turn-metadata": codex_metadata("compaction", "c")},
        ),
    ]

    def read(req: WireRequest) -> None:
        found = proxy_request.recognise(req, patterns)
        if found is not None:
            session = proxy_request.session_of(req, found.host)
            proxy_request.boundary_of(req, found.host, session)
            proxy_request.request_boundary(req, found, patterns)

    cases = [
        (
            (api, p, v),
            lambda api=api, path=path, b=b, h=h, p=p, v=v: WireRequest(api, path, _set(copy.deepcopy(b), p, v), h),
        )
        for api, path, b, h in bodies
        for p in list(_paths(b))
        if p
        for v in WRONG
    ]
    assert _crashes_of(read, cases) == []
