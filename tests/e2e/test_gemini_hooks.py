"""The sjc hook inside the real Gemini CLI (no proxy: the CLI talks to the scripted model directly).

Facts of Gemini CLI 0.61.0 these tests rely on, each seen in their runs:

- Hook events around a compression (headless, automatic, mid-turn): ``PreCompress(auto)`` before every
  main-loop request (it fires before the threshold test) and before the compression; then the two
  compression requests, which no ``BeforeModel``/``AfterModel`` sees; then ``BeforeModel`` for the next
  request. ``PreCompress`` output reaches nothing; there is no event after a compression.
- The first hook that sees the snapshot is that ``BeforeModel``: ``llm_request.messages`` is the text of
  each content that has text (one message per content, its text parts joined), the snapshot in message 0
  after the ``<session_context>`` text. By then the chat file holds the snapshot too.
- ``hookSpecificOutput.llm_request.messages`` is merged back by position into the contents that have
  text; a shorter list leaves the contents past its end as they were, and each content it covers has its
  text parts collapsed into one. A rewritten snapshot reaches the model for that request only (the
  history and the chat file keep the CLI's), so the hook rewrites every request while the snapshot is
  in the history.
- ``systemMessage`` of a BeforeModel hook is shown to the user (stderr in ``gemini -p``).
- Hooks in ``settings.json`` (user or project) run only in a trusted folder: in an untrusted one (the
  interactive "Don't trust" choice) none of them runs. An extension's hooks (``~/.gemini/extensions/NAME``
  with ``gemini-extension.json`` and ``hooks/hooks.json``) run in every folder. ``gemini -p`` refuses to
  start in an untrusted folder (exit 55) unless ``--skip-trust`` trusts it for the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gemini_fake as gf
import pytest
from gemini_fake import FakeGemini, invented_in, pruned
from gemini_harness import Gemini, need_tmux
from test_gemini_proxy import HEADLESS, headless_session

EXTENSION = Path(".gemini") / "extensions" / "sjc"


def hook_records(g: Gemini) -> list[dict[str, Any]]:
    return [d for d in g.decisions() if d.get("surface") == "hook"]


class Run:
    pass


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``sjc install gemini``, then a headless session that compresses mid-turn."""
    root = tmp_path_factory.mktemp("gemini-hooks")
    g = Gemini(root)
    out = Run()
    out.g = g
    with FakeGemini() as fake:
        g.write_settings(fake.base_url)
        out.install = g.sjc("install", "gemini")
        out.listed = g.run_cli("extensions", "list")
        headless_session(g, fake)
        out.requests = fake.answered()
        (out.compression,) = fake.compressions()
    out.stored = g.stored_snapshots()
    out.records = hook_records(g)
    return out


def test_install_adds_an_extension_with_the_hook(installed: Run) -> None:
    r = installed.install
    assert r.returncode == 0, r.stderr
    ext = installed.g.home / EXTENSION
    manifest = json.loads((ext / "gemini-extension.json").read_text())
    hooks = json.loads((ext / "hooks" / "hooks.json").read_text())["hooks"]
    assert manifest["name"] == "sjc"
    assert "sjc-hook gemini" in json.dumps(hooks["BeforeModel"])
    assert "sjc" in installed.listed.stdout + installed.listed.stderr


def test_requests_before_the_compression_are_left_alone(installed: Run) -> None:
    before = [r for r in installed.requests if r["t"] < installed.compression["first"]["t"]]
    assert before
    for r in before:  # the hook answered nothing: the CLI's parts as it made them
        assert len(gf.contents(r["body"])[0]["parts"]) >= 2


def test_the_model_never_sees_the_invented_entries_after_the_compression(installed: Run) -> None:
    c = installed.compression
    after = [r for r in installed.requests if r["t"] > c["verify"]["t"]]
    assert after and after[0] is c["next"]
    (stored,) = installed.stored
    assert stored == c["verify"]["answer"]["text"], "the CLI's history keeps its own snapshot"
    for r in after:
        first = gf.parts_text(gf.contents(r["body"])[0])
        assert first.endswith(pruned(stored)), first[-600:]
        assert not invented_in(json.dumps(r["body"]))
        for entry in c["verify"]["answer"]["supported"]:
            assert entry in first


def test_one_judgment_per_compression(installed: Run) -> None:
    judged = [d for d in installed.records if d.get("status") == "judged"]
    assert len(judged) == 1, [(d.get("event"), d.get("status")) for d in installed.records]
    (d,) = judged
    assert d["host"] == "gemini" and d["event"] == "BeforeModel" and d["pruned"] == 3
    gone = [e["text"] for e in d["entries"] if e["decision"] == "prune"]
    assert all(invented_in(t) for t in gone)


def test_uninstall_takes_the_extension_away(installed: Run) -> None:
    r = installed.g.sjc("uninstall", "gemini")
    assert r.returncode == 0, r.stderr
    assert not (installed.g.home / EXTENSION).exists()


def test_kill_switch_leaves_every_request_as_the_cli_made_it(tmp_path: Path) -> None:
    g = Gemini(tmp_path)
    with FakeGemini() as fake:
        g.write_settings(fake.base_url)
        assert g.sjc("install", "gemini").returncode == 0
        headless_session(g, fake, env={"SJC_DISABLE": "1"})
        (c,) = fake.compressions()
    assert all(k in json.dumps(c["next"]["body"]) for k in gf.INVENTED_KEYS)
    assert {d.get("status") for d in hook_records(g)} <= {"disabled"}


def test_the_hook_runs_in_an_untrusted_folder(tmp_path: Path) -> None:
    """Folder trust on (Gemini CLI's default), the interactive session told "Don't trust": a hook in
    ``settings.json`` does not run, sjc's extension hook does."""
    need_tmux()
    g = Gemini(tmp_path)
    probe = tmp_path / "probe.jsonl"
    settings_hook = {"type": "command", "command": f"echo settings-hook >> {probe}; echo '{{}}'", "timeout": 10000}
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, {"hooks": {"BeforeModel": [{"hooks": [settings_hook]}]}}, trust=True)
        assert g.sjc("install", "gemini").returncode == 0
        g.tui(["Say hello.", "Say hello again.", "/compress", "Say goodbye.", "/quit"], trust_answer="3")
        (c,) = fake.compressions()
    assert not probe.exists(), "a settings.json hook ran in an untrusted folder"
    records = hook_records(g)
    assert records and records[0]["event"] == "BeforeModel", records
    assert c["next"] is not None


def test_headless_refuses_an_untrusted_folder(tmp_path: Path) -> None:
    g = Gemini(tmp_path)
    with FakeGemini() as fake:
        g.write_settings(fake.base_url, trust=True)
        r = g.run(HEADLESS[0])
        assert r.returncode == 55, (r.returncode, r.stderr[-500:])
        assert "not running in a trusted directory" in r.stderr
        assert fake.answered() == []
