"""Plain records in place of pydantic models: the same answers, and pydantic kept out of the CLI and hook."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from sjc_mcp import _config_schema
from sjc_mcp import config as cfg
from sjc_mcp.models import Entry, Origin, PruneResult, Source, evidence_source

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
# each of these is left to pydantic: a type, a bound, a choice or a key the plain check does not take
LEFT_TO_PYDANTIC = [
    {"threshold": "0.3"},
    {"threshold": 2},
    {"threshold": math.nan},
    {"threshold": math.inf},
    {"threshold": True},
    {"margin": 0.6},
    {"mode": "loud"},
    {"sources": ["tool_output", "assistant"]},
    {"sources": "tool_output"},
    {"retrieval": {"top_k": 0}},
    {"retrieval": {"top_k": 3.0}},
    {"retrieval": {"top_n": 3}},
    {"retrieval": []},
    {"hook": {"time_budget_s": 0}},
    {"proxy": {"patterns": {"x": 1}}},
    {"allowed_roots": ["a", 1]},
    {"treshold": 0.5},
    {"allow_remote": 1},
    {"tools": {"keep_recent_turns": 10**30}},
]


@pytest.mark.parametrize("data", GOOD)
def test_plain_check_gives_what_pydantic_gives(data):
    plain = cfg._checked(cfg.Config, data)
    assert plain is not None, data
    made = _config_schema.validate(cfg.Config, data)
    assert plain.model_dump(mode="json") == made.model_dump(mode="json")
    assert plain.model_fields_set == made.model_fields_set == set(data)
    assert type(plain.threshold) is float and type(made.threshold) is float


@pytest.mark.parametrize("data", LEFT_TO_PYDANTIC)
def test_anything_unusual_is_left_to_pydantic(data):
    assert cfg._checked(cfg.Config, data) is None


def test_errors_are_pydantics(tmp_path):
    from pydantic import ValidationError

    for text, expect in [
        ("threshold = 2\n", "threshold: Input should be less than or equal to 1"),
        ("[retrieval]\ntop_k = 0\n", "retrieval.top_k: Input should be greater than or equal to 1"),
        ('mode = "loud"\n', "mode: Input should be 'enforce' or 'shadow'"),
        ("[tools]\nsupersede = 3\n", "tools.supersede: Input should be a valid boolean, unable to interpret input"),
        ("[proxy]\nlisten = 5\n", "proxy.listen: Input should be a valid string"),
    ]:
        f = tmp_path / "c.toml"
        f.write_text(text)
        with pytest.raises(cfg.ConfigError) as exc:
            cfg.load_config(f, env={})
        assert str(exc.value) == f"{f}: {expect}"
    with pytest.raises(ValidationError):
        cfg.Config(threshold=-1)
    c = cfg.Config(threshold="0.25", tools={"margin": "0.1"})  # coerced, as pydantic does
    assert (c.threshold, c.tools.margin) == (0.25, 0.1) and isinstance(c.tools, cfg.ToolsConfig)


def test_config_api_kept():
    c = cfg.load_config(env={"SJC_THRESHOLD": "0.3"})
    assert c.threshold == 0.3 and "threshold" in c.model_fields_set and "allowed_roots" not in c.model_fields_set
    d = c.model_copy(update={"tools": c.tools.model_copy(update={"supersede": False})})
    assert d.tools.supersede is False and c.tools.supersede is True and d.threshold == 0.3
    assert "disabled_by_env" not in c.model_dump() and "path" not in c.model_dump()
    assert cfg.Config.model_fields["path"].exclude and not cfg.Config.model_fields["threshold"].exclude
    assert cfg.Config().digest() == cfg.load_config(env={}).digest()


def test_evidence_items_as_pydantic_reads_them():
    from sjc_mcp.models import EvidenceItem

    good = [
        {"content": "x"},
        {"kind": "user_message", "content": "hi", "name": None},
        {"kind": "tool_output", "name": "Bash", "call": "ls", "content": "a\ud800b"},
    ]
    for obj in good:
        assert evidence_source(obj) == EvidenceItem.model_validate(obj).to_source()
    for obj in [{"content": 3}, {"kind": "previous_summary", "content": "x"}, {"content": "x", "extra": 1}, {}]:
        with pytest.raises(ValueError) as mine:
            evidence_source(obj)
        with pytest.raises(ValueError) as theirs:
            EvidenceItem.model_validate(obj)
        assert str(mine.value) == str(theirs.value)


def test_record_api():
    e = Entry(id=1, section="S", text="- a", start=0, end=3)
    assert e.model_fields_set == {"id", "section", "text", "start", "end"} and e.parent is None
    assert e.model_dump(include={"id", "parent"}) == {"id": 1, "parent": None}
    assert e.model_dump(exclude_none=True, exclude={"text"}) == {
        "id": 1,
        "section": "S",
        "start": 0,
        "end": 3,
        "kind": "bullet",
    }
    f = e.model_copy(update={"text": "- b"})
    assert f.text == "- b" and e.text == "- a" and f != e and e == Entry(**e.model_dump())
    with pytest.raises(TypeError, match="field 'section' is required"):  # the first missing, in field order
        Entry(id=1, text="- a")
    g = Entry(id=1, section="S", text="- a", start=0, end=3, colour="red")  # a key that is no field: left out
    assert g == e and "colour" not in g.__dict__ and g.model_fields_set == e.model_fields_set
    h = Entry.model_construct(**e.model_dump())  # every field given: the same record
    assert h == e and h.model_fields_set == set(Entry.model_fields)
    r = PruneResult(
        entries=[],
        threshold=0.5,
        margin=0.05,
        judge={"name": "n", "model": "m"},
        host="h",
        pruned_summary="",
        removed=0,
        kept=0,
        chars_before=0,
        chars_after=0,
        would_leave="x",
    )
    assert "would_leave" not in r.model_dump() and r.would_leave == "x"
    assert Source(kind="tool_output", content="c").model_dump(exclude_none=True) == {
        "kind": "tool_output",
        "content": "c",
        "is_error": False,
    }


def test_pydantic_model_holds_a_record():
    from pydantic import BaseModel

    class Holder(BaseModel):
        origin: Origin
        many: list[Origin] = []

    h = Holder(origin=Origin(kind="user_message"), many=[{"kind": "tool_output", "name": "Bash"}])
    assert isinstance(h.many[0], Origin) and h.many[0].name == "Bash"
    assert h.model_dump(exclude_none=True) == {
        "origin": {"kind": "user_message"},
        "many": [{"kind": "tool_output", "name": "Bash"}],
    }
    assert json.loads(h.model_dump_json())["origin"] == {"kind": "user_message", "name": None, "call_id": None}


def test_prune_without_pydantic_or_numpy_below_the_numpy_size(tmp_path):
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
