"""The wheel a user installs: every module, the data files, the example config and hook files, the licence,
and every imported package declared."""

from __future__ import annotations

import ast
import email
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions

import pytest

from tests.conftest import ROOT

IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0 and "Could not find a version that satisfies" in r.stderr:
        pytest.skip("the build backend cannot be installed here (no package index reachable)")
    assert r.returncode == 0, r.stderr[-2000:]
    (built,) = (tmp / "dist").glob("sjc_mcp-*.whl")
    return zipfile.ZipFile(built)


@pytest.mark.slow
def test_every_module_and_data_file_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    for py in (ROOT / "sjc_mcp").rglob("*.py"):
        assert f"sjc_mcp/{py.relative_to(ROOT / 'sjc_mcp').as_posix()}" in names, py
    for data in (ROOT / "sjc_mcp" / "data").iterdir():
        assert f"sjc_mcp/data/{data.name}" in names, data
    assert "sjc_mcp/py.typed" in names
    assert "sjc_mcp/examples/config.example.toml" in names
    shipped = wheel.read("sjc_mcp/examples/config.example.toml").decode()
    assert shipped == (ROOT / "config.example.toml").read_text()  # the top-level file, as sjc config init writes it
    for f in ("claude-code-settings.json", "codex-hooks.json", "README.md"):
        assert f"sjc_mcp/host_hooks/{f}" in names, f
    # the Claude Code plugin is installed by Claude Code from the repository, never from the wheel
    assert not any(n.startswith(("tests/", "benchmarks/", ".claude-plugin/", "plugin/", "cases/")) for n in names)
    assert not any(n.endswith((".claude-plugin/plugin.json", "host_hooks/hooks.json", "/sjc-hook")) for n in names)


def test_metadata_licence_classifiers_and_entry_points(wheel):
    meta_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(wheel.read(meta_name))
    assert meta["License-Expression"] == "MIT"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel.namelist())
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.10" in classifiers and "Typing :: Typed" in classifiers
    entry = wheel.read(next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))).decode()
    assert "sjc = sjc_mcp.cli:run" in entry and "sjc-mcp = sjc_mcp.server:main" in entry


def _third_party_imports() -> set[str]:
    found: set[str] = set()
    for py in (ROOT / "sjc_mcp").rglob("*.py"):
        if "plugins" in py.relative_to(ROOT / "sjc_mcp").parts:
            continue  # code a host loads into its own interpreter: it imports the host's modules
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("sjc_mcp", "tomli")}


def test_every_imported_package_is_declared(wheel):
    meta_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(wheel.read(meta_name))
    declared = {
        r.split(";")[0].split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower().replace("_", "-")
        for r in meta.get_all("Requires-Dist") or []
        if "extra ==" not in r
    }
    dists = packages_distributions()
    for module in _third_party_imports():
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        assert names & declared, f"{module} is imported but none of {names} is a declared dependency"
