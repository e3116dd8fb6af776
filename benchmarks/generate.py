"""Realistic large inputs for the benchmark, made deterministically (seeded), never downloaded.

- ``span(size)``: tool outputs of a coding session (file reads, test logs, grep hits, JSON, git) adding
  up to ``size`` characters, with the calls they answer.
- ``summary(n, outputs)``: an ``n``-entry summary in Claude Code's format, most entries restating
  values from the outputs, some invented plans.
- ``transcript(path, size, compactions)``: a Claude Code JSONL transcript of about ``size`` bytes with
  that many compactions, shaped as the host writes it: one record per content block, ``toolUseResult``
  copies (Edit keeps the whole original file), progress records, file-history snapshots.
"""

from __future__ import annotations

import json
import random
import uuid as uuidlib
from pathlib import Path

_WORDS = """
cache bucket limiter token refill request handler session checkpoint commit branch merge config
parser router schema migration backfill invoice account currency worker queue retry timeout
socket client server metrics counter gauge eviction budget partition loader writer reader
stream buffer encoder decoder
"""
WORDS = _WORDS.split()
MODULES = ["api", "core", "store", "cli", "worker", "billing", "auth", "metrics", "sync", "render"]


def _ident(rnd: random.Random) -> str:
    a, b = rnd.choice(WORDS), rnd.choice(WORDS)
    return rnd.choice([f"{a}_{b}", f"{a}{b.capitalize()}", f"{a.capitalize()}{b.capitalize()}"])


def _path(rnd: random.Random) -> str:
    return f"src/{rnd.choice(MODULES)}/{rnd.choice(WORDS)}_{rnd.choice(WORDS)}.py"


def _file_read(rnd: random.Random) -> tuple[str, str]:
    path = _path(rnd)
    lines = []
    for _ in range(1, rnd.randint(40, 160)):
        kind = rnd.random()
        if kind < 0.15:
            lines.append(f"def {_ident(rnd)}(self, {rnd.choice(WORDS)}: int = {rnd.randint(0, 999)}) -> None:")
        elif kind < 0.3:
            lines.append(f"    {_ident(rnd)} = {_ident(rnd)}.{rnd.choice(WORDS)}({rnd.randint(0, 4096)})")
        elif kind < 0.4:
            lines.append(f"    # {' '.join(rnd.choices(WORDS, k=rnd.randint(4, 10)))}")
        else:
            lines.append(f"    return {_ident(rnd)}({', '.join(rnd.choices(WORDS, k=3))})")
    body = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, 1))
    return json.dumps({"file_path": path}), body


def _test_log(rnd: random.Random) -> tuple[str, str]:
    failed, passed = rnd.randint(0, 6), rnd.randint(40, 900)
    lines = [
        f"{_path(rnd).replace('src', 'tests')}::test_{_ident(rnd)} {'PASSED' if rnd.random() > 0.1 else 'FAILED'}"
        for _ in range(rnd.randint(10, 60))
    ]
    if failed:
        lines.append(f"E       AssertionError: assert {rnd.randint(0, 99)} == {rnd.randint(100, 999)}")
    lines.append(f"{failed} failed, {passed} passed in {rnd.uniform(0.5, 90):.2f}s")
    return json.dumps({"command": "pytest -q"}), "\n".join(lines)


def _grep(rnd: random.Random) -> tuple[str, str]:
    name = _ident(rnd)
    hits = [f"{_path(rnd)}:{rnd.randint(1, 900)}:    {name}({rnd.choice(WORDS)})" for _ in range(rnd.randint(3, 40))]
    return json.dumps({"pattern": name}), "\n".join(hits)


def _json_out(rnd: random.Random) -> tuple[str, str]:
    obj = {
        _ident(rnd): {
            "id": rnd.randint(1, 10**6),
            "status": rnd.choice(["ok", "failed", "pending"]),
            "items": [{_ident(rnd): rnd.randint(0, 999)} for _ in range(rnd.randint(2, 12))],
        }
        for _ in range(rnd.randint(2, 10))
    }
    return json.dumps({"command": f"curl -s localhost:{rnd.randint(3000, 9000)}/status"}), json.dumps(obj, indent=2)


def _git(rnd: random.Random) -> tuple[str, str]:
    sha = "".join(rnd.choices("0123456789abcdef", k=7))
    files = [_path(rnd) for _ in range(rnd.randint(1, 6))]
    return json.dumps({"command": "git log --stat -1"}), (
        f"commit {sha}\nAuthor: dev <dev@example.com>\n\n"
        f"    {rnd.choice(WORDS)}: {' '.join(rnd.choices(WORDS, k=6))}\n\n"
        + "\n".join(f" {f} | {rnd.randint(1, 80)} +++--" for f in files)
        + f"\n {len(files)} files changed, {rnd.randint(1, 300)} insertions(+), {rnd.randint(0, 90)} deletions(-)"
    )


KINDS = [
    ("Read", _file_read, 0.35),
    ("Bash", _test_log, 0.2),
    ("Grep", _grep, 0.2),
    ("Bash", _json_out, 0.15),
    ("Bash", _git, 0.1),
]


def span(size: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """``(tool name, call input, output)`` triples adding up to about ``size`` characters of output."""
    rnd = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    total = 0
    while total < size:
        name, fn, _ = rnd.choices(KINDS, weights=[k[2] for k in KINDS])[0]
        call, text = fn(rnd)
        out.append((name, call, text))
        total += len(text)
    return out


def summary(n: int, outputs: list[tuple[str, str, str]], seed: int = 11) -> str:
    """A Claude Code summary with ``n`` entries across the nine sections; about one in six is invented."""
    rnd = random.Random(seed)
    sections = [
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ]
    per = [n // len(sections) + (1 if i < n % len(sections) else 0) for i in range(len(sections))]
    parts = [
        "This session is being continued from a previous conversation that ran out of context. The summary "
        "below covers the earlier portion of the conversation.\n",
        "Summary:",
    ]
    for i, (title, k) in enumerate(zip(sections, per, strict=True), 1):
        parts.append(f"{i}. {title}:")
        for _ in range(k):
            if rnd.random() < 0.17 or title in ("Pending Tasks", "Optional Next Step"):
                parts.append(
                    f"   - {rnd.choice(['Add', 'Refactor', 'Document', 'Benchmark'])} the "
                    f"{_ident(rnd)} {rnd.choice(WORDS)} and open a PR"
                )
                continue
            name, _, text = rnd.choice(outputs)
            line = rnd.choice([ln for ln in text.splitlines() if ln.strip()] or [text])
            parts.append(f"   - `{name}` showed: {line.strip()[:160]}")
        parts.append("")
    parts.append(
        "Please continue the conversation from where we left it off without asking the user any further "
        "questions. Continue with the last task that you were asked to work on."
    )
    return "\n".join(parts) + "\n"


def transcript(path: Path, size: int, compactions: int = 3, seed: int = 3) -> Path:
    """Write a Claude Code transcript of about ``size`` bytes holding ``compactions`` compactions."""
    rnd = random.Random(seed)
    session = str(uuidlib.UUID(int=rnd.getrandbits(128)))
    per_span = size // compactions
    written = 0
    parent: str | None = None
    ts = 1_760_000_000

    def new_id() -> str:
        return str(uuidlib.UUID(int=rnd.getrandbits(128)))

    def rec(kind: str, **body: object) -> dict:
        nonlocal parent, ts
        ts += 1
        uid = new_id()
        r = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": session,
            "version": "2.1.40",
            "gitBranch": "main",
            "type": kind,
            **body,
            "uuid": uid,
            "timestamp": f"2026-11-{1 + ts % 28:02d}T{ts % 24:02d}:{ts % 60:02d}:{ts % 59:02d}.000Z",
        }
        parent = uid
        return r

    with path.open("w") as fh:

        def emit(r: dict) -> None:
            nonlocal written
            line = json.dumps(r, separators=(",", ":")) + "\n"
            fh.write(line)
            written += len(line)

        for c in range(compactions):
            start = written
            emit(rec("user", message={"role": "user", "content": f"please work on the {rnd.choice(WORDS)} module"}))
            n = 0
            while written - start < per_span:
                n += 1
                name, call, text = (
                    rnd.choices(KINDS, weights=[k[2] for k in KINDS])[0][0],
                    *span(1, seed=rnd.randint(0, 10**9))[0][1:],
                )
                tid = f"toolu_{new_id().replace('-', '')[:24]}"
                emit(
                    rec(
                        "assistant",
                        message={
                            "role": "assistant",
                            "content": [
                                {"type": "text", "text": f"Let me look at the {rnd.choice(WORDS)} {rnd.choice(WORDS)}."}
                            ],
                        },
                    )
                )
                emit(
                    rec(
                        "assistant",
                        message={
                            "role": "assistant",
                            "content": [{"type": "tool_use", "id": tid, "name": name, "input": json.loads(call)}],
                        },
                    )
                )
                big = "\n".join(f"{i}\t{' '.join(rnd.choices(WORDS, k=12))}" for i in range(rnd.randint(200, 900)))
                emit(rec("progress", data={"type": "hook_progress", "hookEvent": "PostToolUse", "output": ""}))
                emit(
                    rec(
                        "user",
                        message={
                            "role": "user",
                            "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}],
                        },
                        toolUseResult={"stdout": text, "stderr": "", "originalFile": big},
                    )
                )
                if n % 20 == 0:
                    emit(
                        {
                            "type": "file-history-snapshot",
                            "messageId": new_id(),
                            "snapshot": {
                                "trackedFileBackups": {_path(rnd): {"backupFileName": new_id(), "version": n}}
                            },
                        }
                    )
                if n % 25 == 0:
                    emit(rec("user", message={"role": "user", "content": f"also check the {_ident(rnd)} path"}))
            boundary = new_id()
            last = parent
            parent = None
            fh.write(
                json.dumps(
                    {
                        "parentUuid": None,
                        "logicalParentUuid": last,
                        "isSidechain": False,
                        "sessionId": session,
                        "type": "system",
                        "subtype": "compact_boundary",
                        "content": "Conversation compacted",
                        "uuid": boundary,
                        "timestamp": "2026-11-30T00:00:00.000Z",
                        "compactMetadata": {"trigger": "auto"},
                    },
                    separators=(",", ":"),
                )
                + "\n"
            )
            parent = boundary
            outs = span(400_000, seed=c)
            emit(rec("user", isCompactSummary=True, message={"role": "user", "content": summary(150, outs, seed=c)}))
    return path
