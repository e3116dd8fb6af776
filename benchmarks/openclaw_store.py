"""What OpenClaw's compressed transcript rows cost sjc's reader, against the same rows stored plain.

    python benchmarks/openclaw_store.py [--mb 8] [--runs 7]

Builds two OpenClaw agent databases with the same session (``benchmarks/generate.py``'s tool outputs as
``read``/``exec`` calls and results, ``--mb`` of output, three compactions): one with every row as
``event_json`` (the reference), one with each row of 1 KiB or more stored as OpenClaw 2026.9 stores it,
a zstd frame at level 1 with a checksum in ``event_zstd`` when that saves a tenth. Prints, median of
``--runs`` taken in turn: ``read_boundary`` on each (the newest compaction: every row is read and decoded),
the difference, and the decoding alone per library (``zstandard``, which sjc uses; the standard library's
``compression.zstd`` (3.14) or its backport ``backports.zstd`` when there; the ``zstd`` command, one process
a row, when on PATH), with their import times. Everything is generated here, seeded; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate

SCHEMA = """
create table session_nodes (session_key text primary key, current_session_id text not null);
create table transcript_events (session_id text not null, seq integer not null, event_json text,
  created_at integer not null, event_zstd blob, event_utf8_bytes integer, navigation_json text,
  primary key (session_id, seq));
"""


def _stdlib_zstd():  # type: ignore[no-untyped-def]
    """Python 3.14's compression.zstd, or its backport when installed; None without either."""
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found,unused-ignore,no-redef]
        except ImportError:
            return None
    return zstd


def entries(mb: float) -> list[dict]:
    """One session: a user prompt, then each generated output as a tool call and its result, with a
    compaction after each third of them."""
    outputs = generate.span(int(mb * 1_000_000))
    sid = str(uuid.UUID(int=1))
    out: list[dict] = [{"type": "session", "version": 4, "id": sid, "timestamp": "2026-12-01T00:00:00Z", "cwd": "/w"}]
    parent = None

    def add(e: dict) -> str:
        nonlocal parent
        e.update(
            id=str(uuid.UUID(int=len(out) + 10)), parentId=parent, timestamp=f"2026-12-01T00:{len(out) % 60:02d}:00Z"
        )
        out.append(e)
        parent = e["id"]
        return parent

    add(
        {
            "type": "message",
            "message": {"role": "user", "content": "Look through the service and fix the failing test."},
        }
    )
    thirds = {len(outputs) // 3, 2 * len(outputs) // 3, len(outputs) - 1}
    first_kept = None
    for n, (name, call, text) in enumerate(outputs):
        cid = f"toolu_{n:06d}"
        tool = "read" if name in ("Read", "read") else "exec"
        add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": cid,
                            "name": tool,
                            "arguments": {"command": call} if tool == "exec" else {"path": call},
                        }
                    ],
                },
            }
        )
        kept = add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": tool,
                    "content": [{"type": "text", "text": text}],
                    "isError": False,
                },
            }
        )
        if n in thirds:
            add(
                {
                    "type": "compaction",
                    "summary": "## Decisions\n- Keep going.\n\n## Open TODOs\n- None.\n\n"
                    "## Constraints/Rules\n- None.\n\n## Pending user asks\n- Fix the failing test.\n\n"
                    "## Exact identifiers\n- None captured.",
                    "firstKeptEntryId": first_kept or kept,
                    "tokensBefore": 1000,
                    "details": {"readFiles": [], "modifiedFiles": []},
                }
            )
            first_kept = kept
    return out


def write_db(path: Path, rows: list[dict], compress: bool) -> tuple[int, int]:
    """(rows stored compressed, bytes of the database)."""
    import zstandard

    packer = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=True)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    sid = rows[0]["id"]
    con.execute("insert into session_nodes values ('agent:main:main', ?)", (sid,))
    packed = 0
    for seq, e in enumerate(rows):
        text = json.dumps(e, ensure_ascii=False, separators=(",", ":"))
        raw = text.encode()
        blob = None
        if compress and len(raw) >= 1024 and "\\u" not in text:
            z = packer.compress(raw)
            if len(z) <= len(raw) - max(64, -(-len(raw) // 10)):
                blob = z
        if blob is not None:
            packed += 1
            con.execute("insert into transcript_events values (?,?,NULL,0,?,?,'{}')", (sid, seq, blob, len(raw)))
        else:
            con.execute("insert into transcript_events values (?,?,?,0,NULL,?,NULL)", (sid, seq, text, len(raw)))
    con.commit()
    con.close()
    return packed, path.stat().st_size


def timed(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=8.0)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    from sjc_mcp.hosts import openclaw

    tmp = Path(tempfile.mkdtemp(prefix="sjc-openclaw-bench-"))
    try:
        rows = entries(a.mb)
        plain, packed = tmp / "plain.sqlite", tmp / "packed.sqlite"
        _, plain_size = write_db(plain, rows, compress=False)
        n_packed, packed_size = write_db(packed, rows, compress=True)
        print(
            f"session: {len(rows)} entries, {sum(len(json.dumps(r)) for r in rows) / 1e6:.1f} MB of JSON; "
            f"{n_packed} rows compressed; database {plain_size / 1e6:.1f} MB plain, "
            f"{packed_size / 1e6:.1f} MB as OpenClaw stores it"
        )
        assert openclaw.read_boundary(plain).span == openclaw.read_boundary(packed).span
        tp, tz = [], []
        for _ in range(a.runs):  # taken in turn, so a slow minute slows both alike
            tp.append(timed(lambda: openclaw.read_boundary(plain), 1))
            tz.append(timed(lambda: openclaw.read_boundary(packed), 1))
        mp, mz = statistics.median(tp), statistics.median(tz)
        print(
            f"read_boundary (newest of 3 compactions), median of {a.runs}: plain rows {mp:.0f} ms, "
            f"compressed rows {mz:.0f} ms ({mz - mp:+.0f} ms, {mz / mp:.2f}x)"
        )
        with sqlite3.connect(packed) as con:
            blobs = [
                bytes(b)
                for (b,) in con.execute("select event_zstd from transcript_events where event_zstd is not null")
            ]
        total = sum(len(b) for b in blobs)
        code = "import time; t=time.perf_counter(); {imp}; print((time.perf_counter()-t)*1000)"
        import zstandard

        d = zstandard.ZstdDecompressor()
        libs = [("zstandard (sjc's)", "import zstandard", lambda: [d.decompress(b) for b in blobs])]
        std = _stdlib_zstd()
        if std is not None:
            imp = f"from {std.__name__.rsplit('.', 1)[0]} import zstd"
            libs.append((std.__name__, imp, lambda: [std.decompress(b) for b in blobs]))
        else:
            print("compression.zstd: not in this Python (3.14+), backports.zstd not installed")
        for name, imp, fn in libs:
            imports = [
                float(
                    subprocess.run(
                        [sys.executable, "-c", code.format(imp=imp)], capture_output=True, text=True, check=True
                    ).stdout
                )
                for _ in range(a.runs)
            ]
            ms = timed(fn, a.runs)
            print(
                f"{name}: {len(blobs)} rows ({total / 1e6:.1f} MB compressed) decoded in {ms:.1f} ms "
                f"({total / 1e6 / (ms / 1000):.0f} MB/s of frames); import {statistics.median(imports):.1f} ms"
            )
        exe = shutil.which("zstd")
        if exe:
            sample = blobs[: min(50, len(blobs))]
            ms = timed(
                lambda: [
                    subprocess.run([exe, "-d", "-c", "-q"], input=b, capture_output=True, check=True) for b in sample
                ],
                3,
            )
            each = ms / len(sample)
            print(
                f"zstd command: {each:.1f} ms a row (one process each), {each * len(blobs):.0f} ms for all {len(blobs)}"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
