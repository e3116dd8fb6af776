"""Fault suite, bytes: a summary comes out as it went in, line ends, BOM and all, or is refused in one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, sjc_exe

EXAMPLE = ROOT / "examples" / "summary.md"
OUTPUTS = sorted((ROOT / "examples" / "outputs").glob("*.txt"))


def prune(tmp_path: Path, data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    f = tmp_path / "summary.md"
    f.write_bytes(data)
    ev = [a for p in OUTPUTS for a in ("--evidence", str(p))]
    return subprocess.run(
        [sjc_exe(), "prune", "--summary", str(f), *ev, *args],
        capture_output=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(tmp_path / "log.jsonl")},
    )


def variants() -> dict[str, bytes]:
    text = EXAMPLE.read_bytes().replace(b"\r\n", b"\n")
    return {
        "lf": text,
        "crlf": text.replace(b"\n", b"\r\n"),
        "cr": text.replace(b"\n", b"\r"),
        "mixed": b"".join(line + (b"\r\n" if i % 2 else b"\n") for i, line in enumerate(text.split(b"\n")[:-1])),
        "bom": b"\xef\xbb\xbf" + text,
    }


@pytest.mark.parametrize("name", list(variants()))
def test_nothing_pruned_means_the_same_bytes(tmp_path, name):
    data = variants()[name]
    r = prune(tmp_path, data, "--threshold", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout == data


@pytest.mark.parametrize("name", list(variants()))
def test_pruning_only_deletes_whole_lines_and_keeps_their_bytes(tmp_path, name):
    data = variants()[name]
    r = prune(tmp_path, data)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # what is kept is the input with some stretches cut out: a subsequence of its lines, ends included
    lines_in = data.splitlines(keepends=True)
    lines_out = out.splitlines(keepends=True)
    it = iter(lines_in)
    assert all(any(line == x for x in it) for line in lines_out), "kept lines changed or reordered"
    if name != "cr":  # the example has invented entries: something goes (a lone-CR file may read as one line)
        assert len(out) < len(data)
    if name == "bom":
        assert out.startswith(b"\xef\xbb\xbf")
    if name in ("crlf",):
        assert b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")


@pytest.mark.parametrize(
    "data",
    [
        "## Pending Tasks\n- Caf\xe9 menu: send the list to all customers\n".encode("latin-1"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
    ],
    ids=["latin-1", "binary"],
)
def test_text_that_is_not_utf8_is_refused_in_one_line_never_replaced(tmp_path, data):
    r = prune(tmp_path, data)
    assert r.returncode == 2
    assert r.stdout == b""
    err = r.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "not UTF-8" in err and "Traceback" not in err


def test_stdin_keeps_line_ends_too(tmp_path):
    data = variants()["crlf"]
    ev = [a for p in OUTPUTS for a in ("--evidence", str(p))]
    r = subprocess.run(
        [sjc_exe(), "prune", *ev, "--threshold", "0"],
        input=data,
        capture_output=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SJC_DECISION_LOG": str(tmp_path / "log.jsonl")},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == data


HALF_EMOJI = [
    '{"role": "user", "content": "Which port does the api use? \\ud83d"}',
    '{"role": "tool_call", "name": "read", "content": "{\\"path\\": \\"api.toml\\"}", "call_id": "c1"}',
    '{"role": "tool", "name": "read", "content": "port = 8080 \\ud83d cut", "call_id": "c1"}',
    '{"role": "summary", "content": "## Key facts\\n- The api listens on port 8080 \\ud83d.\\n- Email the list to every customer.\\n"}',
]


@pytest.mark.slow
def test_half_a_surrogate_pair_in_a_transcript_or_evidence_is_text_not_a_crash(tmp_path):
    """A JavaScript host that cuts a string mid-emoji writes a lone ``\\ud83d`` escape (valid JSON, no Unicode
    text): the transcript and JSON-lines evidence read it as U+FFFD, judged and logged like any other text."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(HALF_EMOJI) + "\n")
    env = {"HOME": str(tmp_path), "SJC_DECISION_LOG": str(tmp_path / "log.jsonl"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sjc_exe(), "prune", "--transcript", str(transcript)], capture_output=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "## Key facts\n- The api listens on port 8080 \ufffd.\n"
    assert (tmp_path / "log.jsonl").read_bytes().decode("utf-8")  # the record written, as UTF-8
    ev = tmp_path / "ev.jsonl"
    ev.write_text('{"kind": "tool_output", "content": "port = 8080 \\ud83d"}\n')
    summary = "## Key facts\n- The api listens on port 8080.\n- Email the list to every customer.\n"
    r = subprocess.run(
        [sjc_exe(), "judge", "--evidence-jsonl", str(ev)], input=summary.encode(), capture_output=True, env=env
    )
    assert r.returncode == 0 and b"internal error" not in r.stderr, r.stderr
