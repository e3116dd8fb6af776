from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, sjc_exe

EX = ROOT / "examples"


def run(*args: str, stdin: str | None = None, env_extra: dict | None = None, home: Path | None = None):
    import os

    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sjc_exe(), *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)


def example_args():
    return [
        "--summary",
        str(EX / "summary.md"),
        "--evidence",
        *map(str, sorted((EX / "outputs").glob("*.txt"))),
        "--evidence-jsonl",
        str(EX / "user-messages.jsonl"),
    ]


def test_prune_prints_the_pruned_summary(tmp_path):
    r = run("prune", *example_args(), env_extra={"SJC_DECISION_LOG": str(tmp_path / "l.jsonl")})
    assert r.returncode == 0, r.stderr
    original = (EX / "summary.md").read_text()
    assert "Publish version 2.0" not in r.stdout and "48 passed in 0.61s" in r.stdout
    assert "7. Pending Tasks:" in r.stdout and len(r.stdout) < len(original)
    assert (tmp_path / "l.jsonl").read_text().count("\n") == 1


def test_prune_json_and_judge_json_shapes(tmp_path):
    env = {"SJC_DECISION_LOG": str(tmp_path / "l.jsonl")}
    out = json.loads(run("prune", *example_args(), "--json", env_extra=env).stdout)
    assert set(out) >= {"pruned_summary", "entries", "removed", "kept", "chars_before", "chars_after"}
    assert out["removed"] == sum(e["decision"] == "prune" for e in out["entries"])
    j = json.loads(run("judge", *example_args(), "--json", env_extra=env).stdout)
    assert set(j) >= {"entries", "threshold", "judge"} and j["judge"]["name"] == "lexical"
    assert set(j["entries"][0]) >= {"id", "section", "text", "score", "decision", "quote", "origin"}


@pytest.mark.slow
def test_a_large_output_reaches_the_pipe_whole(tmp_path):
    """An output larger than a pipe's buffer arrives whole, the exit code is main's, the decision log is
    written, and a bad input afterwards is one line and exit 2."""
    many = tmp_path / "many.jsonl"
    with many.open("w") as fh:  # an output larger than a pipe's buffer
        for i in range(400):
            fh.write(json.dumps({"kind": "tool_output", "name": f"t{i}", "content": f"value {i} is {i * 7}\n" * 30}))
            fh.write("\n")
    summary = tmp_path / "s.md"
    summary.write_text(
        "## Notes\n" + "".join(f"- value {i} is {i * 7}\n- Deploy step {i} to all customers\n" for i in range(300))
    )
    env = {"SJC_DECISION_LOG": str(tmp_path / "l.jsonl"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = run("prune", "--json", "--summary", str(summary), "--evidence-jsonl", str(many), env_extra=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(r.stdout) > 65536 and len(out["entries"]) == 600
    assert (tmp_path / "l.jsonl").read_text().count("\n") == 1
    bad = run("prune", "--summary", str(tmp_path / "missing.md"), env_extra=env)
    assert bad.returncode == 2 and bad.stderr.startswith("sjc: error:")


def test_summary_from_stdin_and_threshold(tmp_path):
    env = {"SJC_DECISION_LOG": str(tmp_path / "l.jsonl")}
    text = (EX / "summary.md").read_text()
    keep_all = run(
        "prune",
        "--threshold",
        "0",
        "--evidence",
        str(EX / "outputs" / "04-pytest-after.txt"),
        stdin=text,
        env_extra=env,
    )
    assert keep_all.returncode == 0 and keep_all.stdout == text


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (["prune", "--no-evidence", "--summary", "/no/such/file"], None, "summary file not found"),
        (["prune", "--evidence", "/no/such/out.txt"], "- a\n", "evidence file not found"),
        (["prune", "--no-evidence", "--host", "vim"], "- a\n", "unknown host"),
        (["prune", "--no-evidence", "--threshold", "3"], "- a\n", "threshold must be between 0 and 1"),
        (["prune", "--no-evidence"], "   \n", "the summary is empty"),
        (["prune"], "- a\n", "no evidence given: pass --evidence FILE..."),
        (["prune", "--evidence", "EMPTY"], "- a\n", "the evidence given is empty"),
        (["judge", "--config", "/no/config.toml"], "- a\n", "config file not found"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, stdin, needle, tmp_path):
    (tmp_path / "empty.txt").write_text("  \n")
    args = [str(tmp_path / "empty.txt") if a == "EMPTY" else a for a in args]
    r = run(*args, stdin=stdin, env_extra={"SJC_DECISION_LOG": str(tmp_path / "l.jsonl")})
    assert r.returncode == 2
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_jsonl_line(tmp_path):
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"kind": "user_message", "content": "ok"}\nnot json\n')
    r = run("prune", "--evidence-jsonl", str(bad), stdin="- a\n")
    assert r.returncode == 2 and f"{bad}:2" in r.stderr


def test_help_and_version():
    assert run("--help").returncode == 0
    assert run("--version").stdout.startswith("sjc ")


@pytest.mark.slow
def test_transcript_and_boundary(tmp_path):
    from tests.hosts.test_hosts import small_cc

    path = small_cc(tmp_path)
    env = {"SJC_DECISION_LOG": str(tmp_path / "l.jsonl")}
    r = run("judge", "--transcript", str(path), "--boundary", "0", "--json", env_extra=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["entries"][0]["text"].strip() == "- fix the flaky test"
    rec = json.loads((tmp_path / "l.jsonl").read_text().splitlines()[-1])
    assert rec["boundary"] == 0 and rec["session"] == "S"
    bad = run("judge", "--transcript", str(path), "--boundary", "9", env_extra=env)
    assert bad.returncode == 2 and "boundary 9 does not exist" in bad.stderr
    nob = run("judge", "--boundary", "1", stdin="- a\n", env_extra=env)
    assert nob.returncode == 2 and "--boundary needs --transcript" in nob.stderr


@pytest.mark.parametrize("args", [["prune", "--threshold", "abc"], ["bogus"], ["tools", "frob"], ["eval"]])
def test_bad_arguments_are_one_line(args):
    r = run(*args, stdin="")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "error:" in r.stderr


def test_main_in_process_and_the_command_print_the_same_audit(tmp_path, monkeypatch, capsys):
    """``main()`` called in-process and the ``sjc`` command print the same report."""
    from sjc_mcp import cli

    log = tmp_path / "l.jsonl"
    monkeypatch.setenv("SJC_DECISION_LOG", str(log))
    assert cli.main(["prune", *example_args()]) == 0
    capsys.readouterr()
    assert cli.main(["audit", "--json", "--log", str(log)]) == 0
    in_process = json.loads(capsys.readouterr().out)
    assert len(in_process["boundaries"]) == 1  # the prune just logged
    r = run("audit", "--json", "--log", str(log))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == in_process
