"""The compiled-pattern cache (``sjc_mcp.regex_cache``): a later process takes every fixed pattern from
it, each equal to what ``re.compile`` makes; a bad, missing or unwritable cache changes nothing but time."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

# every module that compiles its fixed patterns through the cache
MODULES = (
    "sjc_mcp.judges.lexical",
    "sjc_mcp.pipeline",
    "sjc_mcp.hosts.claude_code",
    "sjc_mcp.summary.gemini",
    "sjc_mcp.redact",
    "sjc_mcp.tools.supersession",
    "sjc_mcp.tools.truncation",
    "sjc_mcp.audit.summary",
    "sjc_mcp.hook.state",
    "sjc_mcp.hook.codex",
)

# In a child: import the modules (counting the patterns compiled rather than taken from the cache), touch
# redaction's lazy patterns, then check every pattern the cache file holds against ``re.compile``.
CHILD = """
import json, re, sys
from sjc_mcp import regex_cache
made = []
real = regex_cache._compile_and_keep
def counting(pattern, flags):
    made.append(pattern if isinstance(pattern, str) else pattern.decode())
    return real(pattern, flags)
regex_cache._compile_and_keep = counting
import importlib
for m in sys.argv[1].split(","):
    importlib.import_module(m)
from sjc_mcp.redact import redact
redact("token sk-ant-abcdefghijklmnopqrstuvwxyz0123456789 here")
table = regex_cache._load() or {}
same = all(regex_cache.rx(p, f) == re.compile(p, f) for (p, f) in table)
print(json.dumps({"made": len(set(made)), "kept": len(table), "same": same, "path": regex_cache.cache_path()}))
"""


def child(env: dict[str, str]) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(MODULES)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return json.loads(r.stdout)


def env_with(cache: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME", "SJC_REGEX_CACHE")}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    env.update(extra)
    return env


def test_a_later_process_takes_every_fixed_pattern_from_the_cache(tmp_path):
    first = child(env_with(tmp_path))
    assert first["made"] > 50 and first["kept"] == 0  # the first process compiles them all ...
    assert Path(first["path"]).is_file() and Path(first["path"]).parent == tmp_path / "sjc"
    second = child(env_with(tmp_path))
    assert second["made"] == 0  # ... a later one compiles none
    assert second["kept"] >= first["made"]
    assert second["same"]  # and each is the pattern re.compile makes (same flags and code)


def test_a_corrupt_cache_changes_nothing_but_time_and_is_made_again(tmp_path):
    child(env_with(tmp_path))
    path = Path(child(env_with(tmp_path))["path"])
    kept = marshal.loads(path.read_bytes())
    key = next(k for k in kept if isinstance(k[0], str) and len(k[0]) > 40)
    # code the engine refuses, in a well-formed file: that pattern is compiled again, and the file mended
    path.write_bytes(marshal.dumps({**kept, key: (kept[key][0], [999999], 0, {}, ())}))
    again = child(env_with(tmp_path))
    assert again["made"] == 1 and again["same"]
    assert marshal.loads(path.read_bytes())[key] == kept[key]
    for garbage in (b"", b"\x00not marshal at all", path.read_bytes()[:1000], marshal.dumps([1, 2, 3])):
        path.write_bytes(garbage)
        out = child(env_with(tmp_path))
        assert out["same"] and out["made"] > 50
        assert child(env_with(tmp_path))["made"] == 0  # written whole again at the end of that process


def test_no_cache_folder_an_unwritable_one_or_the_cache_off_still_compile(tmp_path):
    # no $HOME and no $XDG_CACHE_HOME: no cache at all
    out = child(env_with(None))
    assert out["path"] is None and out["kept"] == 0
    # switched off
    off = child(env_with(tmp_path / "off", SJC_REGEX_CACHE="0"))
    assert off["path"] is None and not (tmp_path / "off").exists()
    # a file where the cache folder should be: nothing written, nothing said
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "sjc").write_text("not a folder")
    for _ in range(2):
        out = child(env_with(tmp_path / "blocked"))
        assert out["made"] > 50 and out["same"]
    assert list((tmp_path / "blocked").iterdir()) == [tmp_path / "blocked" / "sjc"]


def test_the_judgment_is_the_same_with_and_without_the_cache(tmp_path):
    examples = ROOT / "examples"
    cmd = [
        sys.executable,
        "-m",
        "sjc_mcp",
        "judge",
        "--json",
        "--summary",
        str(examples / "summary.md"),
        "--evidence",
        *sorted(str(p) for p in (examples / "outputs").glob("*.txt")),
        "--evidence-jsonl",
        str(examples / "user-messages.jsonl"),
    ]
    home = tmp_path / "home"
    outs = []
    for extra in ({"SJC_REGEX_CACHE": "0"}, {}, {}):  # without, filling it, from it
        env = env_with(tmp_path / "cache", HOME=str(home), **extra)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(r.stdout))
    for o in outs:
        o.pop("elapsed_ms", None)
        o.get("judge", {}).pop("elapsed_ms", None)
    assert outs[0] == outs[1] == outs[2]
    assert any(e["decision"] == "prune" for e in outs[0]["entries"])
