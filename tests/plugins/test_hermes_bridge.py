"""The Hermes plugin's way to sjc (``sjc_mcp.plugins.hermes.bridge``): every fault keeps Hermes' summary.

The bridge runs in Hermes' interpreter with the standard library only; here it runs in the test's, against
real child processes standing in for sjc's side. The plugin as Hermes runs it: tests/e2e/test_hermes_plugin.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sjc_mcp.plugins.hermes import bridge

pytestmark = pytest.mark.slow  # every test runs a child process, as the plugin does

SUMMARY = "## Goal\nShip it.\n\n## Key Decisions\n- Keep the cache.\n- Email every customer.\n"
PRUNED = "## Goal\nShip it.\n\n## Key Decisions\n- Keep the cache.\n"


def settings(code: str, timeout: float = 20) -> dict:
    """A stand-in for sjc's side: ``python -c CODE`` reading the payload on stdin."""
    return {"command": [sys.executable, "-c", code], "timeout_s": timeout}


def answer(obj: object) -> str:
    return f"import json, sys; json.load(sys.stdin); print(json.dumps({obj!r}))"


def test_the_pruned_summary_comes_back() -> None:
    got = bridge.run(settings(answer({"summary": PRUNED, "line": "pruned 1"})), {"summary": SUMMARY})
    assert got == PRUNED


def test_the_payload_reaches_sjc_as_json_with_the_protocol_version(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    code = f"import sys; open({str(seen)!r}, 'w').write(sys.stdin.read()); print('{{}}')"
    assert bridge.run(settings(code), {"summary": SUMMARY, "turns": [{"role": "user", "content": "é"}]}) is None
    payload = json.loads(seen.read_text())
    assert payload["v"] == bridge.PROTOCOL and payload["turns"][0]["content"] == "é"


def test_no_summary_in_the_answer_keeps_hermes_summary() -> None:
    assert bridge.run(settings(answer({"line": "kill switch"})), {"summary": SUMMARY}) is None


@pytest.mark.parametrize(
    "code, said",
    [
        ("print('not json')", "not JSON"),
        ("print('[1, 2]')", "not a JSON object"),
        ("import sys; sys.stderr.write('boom\\n'); sys.exit(3)", "exited with 3 (boom)"),
        (answer({"summary": SUMMARY + "- Deploy to production.\n"}), "not a deletion"),
        (answer({"summary": "## Goal\nShip it now.\n"}), "not a deletion"),
        (answer({"summary": "  \n"}), "not a deletion"),
        (answer({"summary": 42}), "not a deletion"),
    ],
)
def test_a_bad_answer_keeps_hermes_summary_and_says_why(code: str, said: str, capsys: pytest.CaptureFixture) -> None:
    assert bridge.run(settings(code), {"summary": SUMMARY}) is None
    err = capsys.readouterr().err
    assert said in err and "left as Hermes wrote it" in err


def test_no_answer_within_the_timeout_ends_the_child(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    assert bridge.run(settings(code, timeout=1), {"summary": SUMMARY}) is None
    assert "no answer from sjc within 1s" in capsys.readouterr().err
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_a_missing_interpreter_keeps_hermes_summary(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = {"command": [str(tmp_path / "gone" / "python"), "-m", "sjc_mcp"], "timeout_s": 5}
    assert bridge.run(missing, {"summary": SUMMARY}) is None
    assert "cannot run" in capsys.readouterr().err


def test_hermes_interpreter_settings_are_not_passed_to_sjc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/somewhere/hermes")
    monkeypatch.setenv("SJC_DECISION_LOG", "/tmp/kept.jsonl")
    seen = tmp_path / "env.json"
    code = (
        "import json, os, sys; json.load(sys.stdin); "
        f"json.dump({{k: os.environ.get(k) for k in ('PYTHONPATH', 'SJC_DECISION_LOG')}}, open({str(seen)!r}, 'w'))"
    )
    assert bridge.run(settings(code), {"summary": SUMMARY}) is None
    assert json.loads(seen.read_text()) == {"PYTHONPATH": None, "SJC_DECISION_LOG": "/tmp/kept.jsonl"}


@pytest.mark.parametrize(
    "content, said",
    [
        (None, "is missing; run `sjc install hermes`"),
        ("{not json", "cannot be read"),
        (json.dumps({"v": 1, "command": []}), "names no command"),
        (json.dumps({"v": 1, "command": "sjc hook hermes"}), "names no command"),
        (json.dumps({"v": 99, "command": ["python"]}), "another version"),
    ],
)
def test_bad_settings_say_what_to_do(tmp_path: Path, content: str | None, said: str) -> None:
    if content is not None:
        (tmp_path / bridge.SETTINGS).write_text(content)
    with pytest.raises(ValueError, match=said.replace("`", ".")):
        bridge.load_settings(tmp_path)


def test_settings_with_an_unusable_timeout_get_the_default(tmp_path: Path) -> None:
    (tmp_path / bridge.SETTINGS).write_text(json.dumps({"v": 1, "command": ["python"], "timeout_s": -4}))
    assert bridge.load_settings(tmp_path)["timeout_s"] == bridge.DEFAULT_TIMEOUT_S


def test_a_deletion_keeps_the_order_of_what_is_left() -> None:
    assert bridge.is_deletion(SUMMARY, PRUNED)
    assert bridge.is_deletion(SUMMARY, SUMMARY)
    assert not bridge.is_deletion(SUMMARY, "- Keep the cache.\n## Goal\n")
