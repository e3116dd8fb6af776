"""OpenClaw without the real host: its transcript database (zstd rows, branches, compactions), its stored
summary's own sections, its summarising requests, ``sjc-hook openclaw`` as the plugin runs it, and
``sjc install openclaw``. The real host is in ``tests/e2e/test_openclaw_*.py``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sjc_mcp.errors import InputError, TranscriptError
from sjc_mcp.formats import openclaw_prompt
from sjc_mcp.hosts import detect, read_boundary
from sjc_mcp.summary import detect as detect_summary
from sjc_mcp.summary import split_summary
from tests.conftest import SHARED, sjc_exe

SAMPLES = SHARED / "e2e" / "openclaw" / "samples"
CONFIG = "service: ledger-api\nport: 8431\ndb_host: db-7.internal\nretry_backoff_ms: 250\n"
LOG = "".join(f"req-{n:05d} status={503 if n == 7 else 200}\n" for n in range(400))


# -- the transcript database ------------------------------------------------------------------------------


def _msg(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": content, **extra}}


def session_entries() -> list[dict[str, Any]]:
    """A session with two compactions, the second after a branch left behind (a retried turn)."""
    plan: list[tuple[str, dict[str, Any]]] = [
        ("u1", _msg("user", "Read the log and the config.")),
        ("a1", _msg("assistant", [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "app.log"}}])),
        ("r1", _msg("toolResult", [{"type": "text", "text": LOG}], toolCallId="t1", toolName="read", isError=False)),
        ("a2", _msg("assistant", [{"type": "toolCall", "id": "t2", "name": "read", "arguments": {"path": "c.yaml"}}])),
        ("r2", _msg("toolResult", [{"type": "text", "text": CONFIG}], toolCallId="t2", toolName="read")),
        ("a3", _msg("assistant", [{"type": "text", "text": "The port is 8431."}])),
        ("x1", {"type": "custom", "customType": "openclaw.cache-ttl", "data": {}}),
        ("c1", {"type": "compaction", "summary": "## Decisions\n- first", "firstKeptEntryId": "a3", "tokensBefore": 9}),
        ("u2", _msg("user", "Run the tests.")),
        (
            "a4",
            _msg("assistant", [{"type": "toolCall", "id": "t3", "name": "exec", "arguments": {"command": "pytest"}}]),
        ),
        (
            "r3",
            _msg("toolResult", [{"type": "text", "text": "3 failed"}], toolCallId="t3", toolName="exec", isError=True),
        ),
        ("u3", _msg("user", "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nruntime\n<<<END>>>")),
        ("a5", _msg("assistant", [{"type": "text", "text": "Three tests fail."}])),
        (
            "c2",
            {"type": "compaction", "summary": "## Decisions\n- second", "firstKeptEntryId": "a5", "tokensBefore": 9},
        ),
    ]
    out: list[dict[str, Any]] = [{"type": "session", "version": 4, "id": "S1", "timestamp": "t0", "cwd": "/w"}]
    parent = None
    for n, (eid, e) in enumerate(plan):
        out.append({**e, "id": eid, "parentId": parent, "timestamp": f"2026-12-01T00:00:{n:02d}Z"})
        parent = eid
    # a branch left behind: a retry of u2 whose entries are not on the path to c2
    out.insert(10, {**_msg("user", "Run the tests, the other way."), "id": "gone", "parentId": "c1", "timestamp": "x"})
    return out


def write_db(path: Path, entries: list[dict[str, Any]], session: str = "S1") -> Path:
    con = sqlite3.connect(path)
    con.executescript(
        "create table session_nodes (session_key text primary key, current_session_id text not null);"
        "create table transcript_events (session_id text not null, seq integer not null, event_json text,"
        " created_at integer not null, event_zstd blob, event_utf8_bytes integer, navigation_json text,"
        " primary key (session_id, seq));"
    )
    con.execute("insert into session_nodes values ('agent:main:main', ?)", (session,))
    packer = zstandard.ZstdCompressor(level=1, write_checksum=True)
    for seq, e in enumerate(entries):
        text = json.dumps(e)
        if len(text) >= 1024:  # as OpenClaw stores a large row
            con.execute(
                "insert into transcript_events values (?,?,NULL,0,?,?,'{}')",
                (session, seq, packer.compress(text.encode()), len(text)),
            )
        else:
            con.execute("insert into transcript_events values (?,?,?,0,NULL,?,NULL)", (session, seq, text, len(text)))
    con.commit()
    con.close()
    return path


def test_database_compactions_spans_and_kept_tails(tmp_path: Path) -> None:
    db = write_db(tmp_path / "openclaw-agent.sqlite", session_entries())
    assert detect(db) == "openclaw"
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from transcript_events where event_zstd is not null").fetchone()[0] == 1
    b0, b1 = read_boundary(db, 0), read_boundary(db, 1)
    assert read_boundary(db).boundary_id == b1.boundary_id == "S1:c2"
    # compaction 0: everything before its firstKeptEntryId; the log (a compressed row) read with its call
    assert [i.role for i in b0.span] == ["user", "tool_call", "tool_output", "tool_call", "tool_output"]
    src = b0.sources()
    assert src[1].call == 'read: {"path": "app.log"}' and "req-00007 status=503" in src[1].content
    assert [i.content for i in b0.retained] == ["The port is 8431."]
    assert b0.previous_summary is None
    # compaction 1: from compaction 0's firstKeptEntryId, on the branch that leads to it, injected text out
    assert b1.previous_summary == "## Decisions\n- first"
    assert [i.content for i in b1.span if i.role == "user"] == ["Run the tests."]
    assert b1.span[0].content == "The port is 8431."  # the earlier kept tail is summarised now
    assert [(i.role, i.is_error) for i in b1.span if i.role == "tool_output"] == [("tool_output", True)]
    assert [i.content for i in b1.retained] == ["Three tests fail."]


def test_an_export_of_the_rows_reads_the_same(tmp_path: Path) -> None:
    entries = session_entries()
    db = write_db(tmp_path / "a.sqlite", entries)
    export = tmp_path / "s.jsonl"
    export.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert detect(export) == "openclaw"
    for i in (0, 1):
        assert read_boundary(export, i).span == read_boundary(db, i).span


def test_damaged_or_foreign_databases_are_a_clear_error(tmp_path: Path) -> None:
    entries = session_entries()
    db = write_db(tmp_path / "bad.sqlite", entries)
    with sqlite3.connect(db) as con:
        con.execute("update transcript_events set event_zstd = x'28b52ffd0000' where event_zstd is not null")
    with pytest.raises(TranscriptError, match="compressed transcript row cannot be read"):
        read_boundary(db)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("create table t (x)")
    with pytest.raises(TranscriptError, match="not an OpenClaw transcript database"):
        read_boundary(other)


# -- the stored summary -------------------------------------------------------------------------------------

STORED = """## Latest user request context
"Read CHANGELOG.md and list the releases. [[read CHANGELOG.md]]"

## Decisions
- The build printed "build ok"
- Deploy the ledger service to production.

## Open TODOs
None.

## Constraints/Rules
- port is 8431

## Pending user asks
Latest user request context: "Which port?"
- Which port?

## Exact identifiers
- None captured.

**Turn Context (split turn):**

### Original Request
Read CHANGELOG.md and list the releases.

### Early Progress
- (none)
- Drop the staging database.

## Recent turns preserved verbatim
- User: Read config.yaml
- Tool result (read): service: ledger-api
## 1.0.0
port: 8431
- Assistant: Done.

## Tool Failures
- exec (exit 1): boom

<read-files>
CHANGELOG.md
</read-files>
"""


def test_openclaws_own_sections_are_structure() -> None:
    assert detect_summary(STORED) == "openclaw"
    p = split_summary(STORED)
    texts = [e.text for e in p.entries]
    assert texts == [
        '- The build printed "build ok"',
        "- Deploy the ledger service to production.",
        "- port is 8431",
        "- Which port?",
        "Read CHANGELOG.md and list the releases.",
        "- Drop the staging database.",
    ]
    assert [e.section for e in p.entries][-2:] == ["Original Request", "Early Progress"]
    drop = {e.id for e in p.entries if "Deploy" in e.text or "Drop" in e.text}
    out = p.render(drop)
    assert out == STORED.replace("- Deploy the ledger service to production.\n", "").replace(
        "- Drop the staging database.\n", ""
    )


def test_a_provider_summary_with_the_split_turn_copied_verbatim() -> None:
    text = "## Decisions\n- keep\n\n## Open TODOs\n- plan\n\n**Turn Context (split turn):**\n\n- User: hi\n- Tool result (exec): 3 passed\n\n<read-files>\na\n</read-files>"
    assert [e.text for e in split_summary(text, "openclaw").entries] == ["- keep", "- plan"]


def test_default_mode_is_told_from_hermes() -> None:
    text = "## Goal\n- g\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- [x] d\n\n## Key Decisions\n- k\n\n## Next Steps\n1. n\n\n## Critical Context\n- c"
    assert detect_summary(text) == "openclaw"
    assert [e.text for e in split_summary(text).entries] == ["- g", "- [x] d", "- k", "1. n", "- c"]


# -- the summarising request --------------------------------------------------------------------------------


def test_a_request_read_into_evidence() -> None:
    body = "\n\n".join(
        [
            "[User]: <previous-compaction-summary>\nPrevious compaction summary to re-distill.\n\n## Decisions\n- old\n</previous-compaction-summary>",
            "[User]: <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnot the user\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>",
            '[User sender={"name":"ana"}]: Check it, then read the config.',
            '[Assistant tool calls]: exec(command="echo \\"a, b)\\"; ls", timeout=30); read(path="c.yaml")',
            "[Tool result]: a, b)\n\n[not a speaker]: still the output",
            "[Tool result]: port: 8431",
            "[Assistant]: Done.",
        ]
    )
    text = f"<conversation>\n{body}\n</conversation>\n\nProduce a compact, factual summary with these exact section headings:\n## Decisions"
    assert openclaw_prompt.is_summarising("You are a context summarization assistant. Your task …", text)
    assert not openclaw_prompt.is_summarising("You are a personal assistant running inside OpenClaw.", text)
    conv = openclaw_prompt.read(text)
    assert conv.kind == "safeguard" and conv.previous == ["## Decisions\n- old"]
    roles = [(i.role, i.name) for i in conv.items]
    assert roles == [
        ("user", None),
        ("tool_call", "exec"),
        ("tool_call", "read"),
        ("tool_output", "exec"),
        ("tool_output", "read"),
        ("assistant", None),
    ]
    assert json.loads(conv.items[1].content) == {"command": 'echo "a, b)"; ls', "timeout": 30}
    assert conv.items[3].content == "a, b)\n\n[not a speaker]: still the output"
    assert conv.items[4].call_id == conv.items[2].call_id


def test_merge_and_update_requests_carry_their_summaries() -> None:
    merge = (
        "<conversation>\n[User]: [Chunk 1 — oldest messages [2026-12-01 10:00 UTC]]\n## Decisions\n- a\n\n"
        "[User]: [Chunk 2 — most recent messages]\n## Decisions\n- b\n</conversation>\n\nProduce a compact, factual "
        "summary with these exact section headings:\n\nAdditional focus: Merge these partial summaries into a single cohesive summary."
    )
    conv = openclaw_prompt.read(merge)
    assert conv.kind == "merge" and conv.previous == ["## Decisions\n- a", "## Decisions\n- b"] and not conv.items
    update = "<conversation>\n[User]: go on\n</conversation>\n\n<previous-summary>\n## Goal\n- x\n</previous-summary>\n\nThe messages above are NEW conversation messages to incorporate"
    conv = openclaw_prompt.read(update)
    assert conv.kind == "default-update" and conv.previous == ["## Goal\n- x"]


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/e2e/openclaw/samples is absent: no captured requests")
def test_captured_requests() -> None:
    kinds = {}
    for f in sorted(SAMPLES.glob("request-compaction-*.json")):
        body = json.loads(f.read_text())
        body = body.get("body", body)
        users = [m for m in body["messages"] if m["role"] == "user"]
        text = (
            "".join(c["text"] for c in users[-1]["content"])
            if isinstance(users[-1]["content"], list)
            else users[-1]["content"]
        )
        conv = openclaw_prompt.read(text)
        kinds[f.stem] = conv.kind
        outputs = [i for i in conv.items if i.role == "tool_output"]
        assert all(o.name for o in outputs)  # every result paired with its call
    assert kinds == {
        "request-compaction-default-update": "default-update",
        "request-compaction-safeguard": "safeguard",
        "request-compaction-safeguard-chat": "safeguard",
        "request-compaction-turn-prefix": "turn-prefix",
    }


# -- sjc hook openclaw, as the plugin runs it ---------------------------------------------------------------

SUMMARY = (
    "## Decisions\n- config sets port: 8431 and db_host: db-7.internal\n- Deploy the ledger service to production.\n\n"
    "## Open TODOs\n- Email the quarterly revenue report to all customers.\n\n## Constraints/Rules\n- retry_backoff_ms is 250\n\n"
    "## Pending user asks\n- Read the config and tell me the port.\n\n## Exact identifiers\n- db-7.internal"
)
MESSAGES = [
    {"role": "user", "content": "Read the config and tell me the port."},
    {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "c.yaml"}}],
    },
    {"role": "toolResult", "toolCallId": "t1", "toolName": "read", "content": [{"type": "text", "text": CONFIG}]},
]


def hook(payload: Any, tmp_path: Path, **env: str) -> tuple[str, list[dict[str, Any]]]:
    log = tmp_path / "log.jsonl"
    full = {**os.environ, "SJC_DECISION_LOG": str(log), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), **env}
    full["XDG_STATE_HOME"] = str(tmp_path / "state")
    full.pop("SJC_DISABLE", None) if "SJC_DISABLE" not in env else None
    r = subprocess.run(
        [sjc_exe(), "hook", "openclaw"],
        input=payload if isinstance(payload, str) else json.dumps(payload),
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r.stdout.strip(), records


@pytest.mark.slow  # runs sjc as a process
def test_hook_prunes_the_plugins_summary(tmp_path: Path) -> None:
    out, _ = hook({"hook_event_name": "CompactionStart", "session_id": "s1"}, tmp_path)
    assert json.loads(out) == {"enabled": True, "time_budget_s": 20.0}
    out, log = hook(
        {"hook_event_name": "Summarize", "session_id": "s1", "summary": SUMMARY, "messages": MESSAGES}, tmp_path
    )
    got = json.loads(out)
    assert got["summary"] == SUMMARY.replace("- Deploy the ledger service to production.\n", "").replace(
        "- Email the quarterly revenue report to all customers.\n", ""
    )
    assert got["removed"] == 2 and got["mode"] == "enforce"
    assert log[-1]["status"] == "judged" and log[-1]["host"] == "openclaw" and log[-1]["session"] == "s1"


@pytest.mark.slow  # runs sjc as a process
@pytest.mark.parametrize(
    "payload, status",
    [
        ({"hook_event_name": "Summarize", "summary": SUMMARY}, "error"),  # no messages
        ({"hook_event_name": "Summarize", "summary": 3, "messages": []}, "error"),
        ({"hook_event_name": "Fault", "message": "no answer within 30 s"}, "error"),
    ],
)
def test_hook_faults_answer_nothing_and_are_logged(tmp_path: Path, payload: Any, status: str) -> None:
    out, log = hook(payload, tmp_path)
    assert out == "" and [r["status"] for r in log] == [status]


@pytest.mark.slow  # runs sjc as a process
def test_hook_switched_off_answers_nothing(tmp_path: Path) -> None:
    out, log = hook({"hook_event_name": "CompactionStart"}, tmp_path, SJC_DISABLE="1")
    assert out == "" and [r["status"] for r in log] == ["disabled"]


# -- sjc install openclaw -----------------------------------------------------------------------------------


def sjc(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENCLAW_CONFIG_PATH": str(tmp_path / "openclaw.json"), "HOME": str(tmp_path)}
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.slow  # runs sjc as a process
def test_install_and_uninstall_restore_the_config_byte_for_byte(tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    original = (
        b'{\n    "agents": {"defaults": {"compaction": {"keepRecentTokens": 200}}},\n  "plugins": {"allow": ["x"]}\n}\n'
    )
    cfg.write_bytes(original)
    r = sjc(tmp_path, "install", "openclaw")
    assert r.returncode == 0, r.stderr
    data = json.loads(cfg.read_text())
    assert data["agents"]["defaults"]["compaction"] == {"keepRecentTokens": 200, "provider": "sjc"}
    assert data["plugins"]["allow"] == ["x", "sjc"] and data["plugins"]["entries"]["sjc"]["enabled"] is True
    (path,) = data["plugins"]["load"]["paths"]
    assert (Path(path) / "openclaw.plugin.json").is_file() and (Path(path) / "index.js").is_file()
    assert "already installed" in sjc(tmp_path, "install", "openclaw").stdout
    r = sjc(tmp_path, "uninstall", "openclaw")
    assert r.returncode == 0 and cfg.read_bytes() == original
    assert "not found" in sjc(tmp_path, "uninstall", "openclaw").stdout


@pytest.mark.slow  # runs sjc as a process
def test_install_refuses_what_it_cannot_do_cleanly(tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text('{"agents": {"defaults": {"compaction": {"provider": "other"}}}}')
    r = sjc(tmp_path, "install", "openclaw")
    assert r.returncode != 0 and "already 'other'" in r.stderr and "Traceback" not in r.stderr
    cfg.write_text("{ // JSON5\n agents: {},\n}")
    r = sjc(tmp_path, "install", "openclaw")
    assert r.returncode != 0 and "not plain JSON" in r.stderr and "Traceback" not in r.stderr
    assert cfg.read_text() == "{ // JSON5\n agents: {},\n}"
    r = sjc(tmp_path, "install", "openclaw", "--scope", "project")
    assert r.returncode != 0 and "--scope" in r.stderr


@pytest.mark.slow  # runs sjc as a process
def test_install_into_no_config_and_out_again(tmp_path: Path) -> None:
    from sjc_mcp.setup import openclaw as setup

    assert sjc(tmp_path, "install", "openclaw").returncode == 0
    assert json.loads((tmp_path / "openclaw.json").read_text())["agents"]["defaults"]["compaction"]["provider"] == "sjc"
    assert sjc(tmp_path, "uninstall", "openclaw").returncode == 0
    assert not (tmp_path / "openclaw.json").exists()
    assert setup.removed(setup.merged({}, "sjc")) == {}
    with pytest.raises(InputError):
        setup.merged({"plugins": []}, "sjc")


def test_the_proxy_recognises_openclaws_requests_by_their_shape() -> None:
    from sjc_mcp.formats import WireRequest
    from sjc_mcp.proxy.request import recognise, request_boundary

    system = "You are a context summarization assistant. Your task is to read a conversation …"
    text = (
        '<conversation>\n[User]: Read the config.\n\n[Assistant tool calls]: read(path="c.yaml")\n\n'
        "[Tool result]: port: 8431\n</conversation>\n\nThis is the PREFIX of a turn that was too large to keep."
    )
    anthropic = {
        "system": [{"type": "text", "text": system}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    chat = {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": text}]},
        ]
    }
    patterns = {"openclaw": "(?s)## Decisions.*## Open TODOs.*## Exact identifiers"}
    for req in (WireRequest("anthropic", "/v1/messages", anthropic), WireRequest("chat", "/v1/chat/completions", chat)):
        found = recognise(req, patterns)
        assert found is not None and found.host == "openclaw" and "turn-prefix" in found.how
        b = request_boundary(req, found, patterns)
        assert [(s.kind, s.call) for s in b.sources()] == [
            ("user_message", None),
            ("tool_output", 'read: {"path": "c.yaml"}'),
        ]
    # the same words in an ordinary turn, or a user quoting the system prompt: not a compaction
    ordinary = {
        "system": "You are a personal assistant running inside OpenClaw.",
        "messages": [{"role": "user", "content": text}],
    }
    assert recognise(WireRequest("anthropic", "/v1/messages", ordinary), patterns) is None
    quoted = {"system": system, "messages": [{"role": "user", "content": "What does <conversation> mean?"}]}
    assert recognise(WireRequest("anthropic", "/v1/messages", quoted), patterns) is None
