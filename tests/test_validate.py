"""The one validator at the edges (``sjc_mcp.validate``): the config file, evidence items, case labels and a
judge's JSON answer become the package's dataclasses, or one line saying where and what is wrong."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from sjc_mcp import config as cfg
from sjc_mcp.errors import ConfigError, InputError
from sjc_mcp.models import EvidenceItem, Source, evidence_source
from sjc_mcp.validate import convert, unknown_key

GOOD = [
    {},
    {"threshold": 1, "margin": 0, "max_prune_share": 0.75},
    {"mode": "shadow", "judge": "openai", "allow_remote": True, "calibrated_model": "m"},
    {"sources": ["tool_output"], "allowed_roots": ["~/a", "/b"], "decision_log": "/tmp/x.jsonl"},
    {"retrieval": {"top_k": 5, "passage_chars": 50}, "tools": {"drop_below": 0, "supersede": False}},
    {"openai": {"base_url": "http://127.0.0.1:9/v1", "concurrency": 64, "total_timeout_s": 1800}},
    {"proxy": {"patterns": {"x": "y"}, "prefilter": True}, "hook": {"time_budget_s": 0.5}},
    {"lexical": {"weights": None}, "jev": {"state_budget_tokens": 1000}},
]
BAD = [
    ({"threshold": 2}, "threshold: expected `float` <= 1.0"),
    ({"threshold": math.nan}, "threshold: expected `float` >= 0.0"),
    ({"threshold": math.inf}, "threshold: expected `float` <= 1.0"),
    ({"threshold": True}, "threshold: expected `float`, got `bool`"),
    ({"margin": 0.6}, "margin: expected `float` <= 0.5"),
    ({"mode": "loud"}, "mode: invalid enum value 'loud'"),
    ({"sources": ["tool_output", "assistant"]}, "sources[1]: invalid enum value 'assistant'"),
    ({"sources": "tool_output"}, "sources: expected `array`, got `str`"),
    ({"retrieval": {"top_k": 0}}, "retrieval.top_k: expected `int` >= 1"),
    ({"retrieval": {"top_n": 3}}, "unknown key 'retrieval.top_n'"),
    ({"retrieval": []}, "retrieval: expected `object`, got `array`"),
    ({"hook": {"time_budget_s": 0}}, "hook.time_budget_s: expected `float` > 0.0"),
    ({"proxy": {"patterns": {"x": 1}}}, "proxy.patterns[...]: expected `str`, got `int`"),
    ({"allowed_roots": ["a", 1]}, "allowed_roots[1]: expected `str`, got `int`"),
    ({"treshold": 0.5}, "unknown key 'treshold'"),
    ({"disabled_by_env": True}, "unknown key 'disabled_by_env'"),
    ({"path": "/x"}, "unknown key 'path'"),
    ({"tools": {"keep_recent_turns": 10**30}}, "tools.keep_recent_turns: expected `int` <= 1000"),
]


@pytest.mark.parametrize("data", GOOD)
def test_good_configs_are_taken_as_they_are(data):
    c = convert(data, cfg.Config, error=ConfigError)
    settings = c.settings()
    for key, value in data.items():
        got = settings[key]
        if isinstance(value, dict) and key != "proxy":
            assert {k: got[k] for k in value} == value
        elif key != "proxy":
            assert got == value
    assert type(c.threshold) is float


@pytest.mark.parametrize(("data", "message"), BAD)
def test_bad_configs_are_one_line_naming_the_place(data, message):
    with pytest.raises(ConfigError) as exc:
        convert(data, cfg.Config, where="c.toml", error=ConfigError)
    assert str(exc.value) == f"c.toml: {message}"
    assert "\n" not in str(exc.value)


def test_a_config_file_and_the_environment(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("threshold = 2\n")
    with pytest.raises(ConfigError, match=r"c\.toml: threshold: expected `float` <= 1\.0$"):
        cfg.load_config(f, env={})
    f.write_text("[tools]\nsupersede = 3\n")
    with pytest.raises(ConfigError, match=r"tools\.supersede: expected `bool`, got `int`"):
        cfg.load_config(f, env={})
    c = cfg.load_config(env={"SJC_THRESHOLD": "0.3"})  # environment overrides are text
    assert c.threshold == 0.3 and c.explicit == frozenset({"threshold"})
    with pytest.raises(ConfigError, match=r"\(with SJC_THRESHOLD\): threshold: expected `float`, got `str`"):
        cfg.load_config(env={"SJC_THRESHOLD": "high"})


def test_config_copies_and_digest():
    c = cfg.load_config(env={"SJC_THRESHOLD": "0.3", "SJC_DISABLE": "1"})
    d = c.replace(threshold=0.4)
    assert (d.threshold, c.threshold) == (0.4, 0.3)
    assert d.disabled_by_env and d.explicit == c.explicit  # where it came from goes with the copy
    assert "disabled_by_env" not in c.settings() and "path" not in c.settings() and "explicit" not in c.settings()
    assert cfg.Config().digest() == cfg.load_config(env={}).digest() != c.digest()


def test_evidence_items():
    good = [
        {"content": "x"},
        {"kind": "user_message", "content": "hi", "name": None},
        {"kind": "tool_output", "name": "Bash", "call": "ls", "content": "a\ud800b"},
    ]
    for obj in good:
        assert evidence_source(obj) == convert(obj, EvidenceItem).to_source()
    assert evidence_source({"content": "x"}) == Source(kind="tool_output", content="x")
    for obj, message in [
        ({"content": 3}, "content: expected `str`, got `int`"),
        ({"kind": "previous_summary", "content": "x"}, "kind: invalid enum value 'previous_summary'"),
        ({"content": "x", "extra": 1}, "unknown key 'extra'"),
        ({}, "object missing required field `content`"),
        ([], "expected `object`, got `array`"),
    ]:
        with pytest.raises(InputError) as exc:
            evidence_source(obj)
        assert str(exc.value) == message


def test_unknown_keys_are_found_in_lists_and_optional_tables():
    from sjc_mcp.eval.cases import Label

    assert unknown_key([{"entry": "a", "section": "s", "supported": True, "colour": 1}], list[Label]) == "[0].colour"
    assert unknown_key({"lexical": {"weights": None, "w": 1}}, cfg.Config) == "lexical.w"
    assert unknown_key({"lexical": None}, cfg.Config) is None


def test_a_judges_json_answer():
    assert convert({"e0": 0.9, "e1": 1}, dict[str, float]) == {"e0": 0.9, "e1": 1.0}
    with pytest.raises(InputError, match=r"expected `float`, got `str`"):
        convert({"e0": 0.9, "e1": "high"}, dict[str, float])


def test_prune_imports_neither_pydantic_nor_numpy_below_the_numpy_size(tmp_path):
    """The CLI's judging path (config, inputs, split, retrieve, judge, log) never imports pydantic."""
    code = (
        "import sys\n"
        "from sjc_mcp.config import load_config\n"
        "from sjc_mcp.inputs import evidence_jsonl\n"
        "from sjc_mcp.pipeline import prune_summary\n"
        f"ev = evidence_jsonl({str(tmp_path / 'ev.jsonl')!r})\n"
        f"c = load_config({str(tmp_path / 'c.toml')!r}, env={{}})\n"
        "r = prune_summary('## Pending Tasks\\n- run the tests\\n- ship it\\n', ev, config=c)\n"
        "print(r.kept, sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core', 'numpy')))\n"
    )
    (tmp_path / "ev.jsonl").write_text(
        json.dumps({"kind": "tool_output", "name": "Bash", "content": "48 passed"}) + "\n"
    )
    (tmp_path / "c.toml").write_text(
        f'threshold = 0.4\ndecision_log = "{tmp_path / "log.jsonl"}"\n[tools]\nmargin = 0.1\n'
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert out[1].strip() == "[]", out
