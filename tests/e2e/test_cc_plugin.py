"""sjc as a Claude Code plugin, in the real CLI: ``.claude-plugin/plugin.json``, ``.claude-plugin/marketplace.json``
and ``hooks/hooks.json`` installed from a local folder and from a git URL, the MCP tools reaching
the model and answering, a hook of the plugin judging a compaction, and uninstall undoing it all.

Facts of the real CLI (2.1.332), each checked below:

- ``claude plugin validate`` accepts plugin.json and marketplace.json; the MCP server may be declared under
  ``mcpServers`` in plugin.json (used here) or in a ``.mcp.json`` at the plugin root, with the same result;
  a ``.mcp.json`` at the repository root would also be read as the project's own MCP config by anyone
  running ``claude`` in a checkout ("Pending approval"), hence plugin.json. ``hooks/hooks.json`` at the
  plugin root loads without being named in plugin.json. Unquoted ``${CLAUDE_PLUGIN_ROOT}`` in a hook
  command is a warning, not an error.
- ``marketplace add <folder>`` records ``{"source": "directory", "path": <folder>}``; installing a plugin
  whose source is ``"./"`` copies the whole folder, ignored files included (a ``.venv`` too), to
  ``~/.claude/plugins/cache/<marketplace>/<plugin>/<version>/``, yet runs the plugin from the folder itself:
  edits there apply at once, and with the folder moved away the plugin fails to load ("cache-miss").
  Probe hooks and an MCP command printing ``$CLAUDE_PLUGIN_ROOT`` saw the folder; for a git marketplace
  they saw the cached copy.
- A git marketplace is cloned (shallow, so git's smart HTTP protocol is needed; dumb HTTP fails) into
  ``~/.claude/plugins/marketplaces/<marketplace>/``; ``file://`` URLs are refused ("Invalid marketplace
  source format"); ``install <plugin> --marketplace <url>`` adds the marketplace and installs in one step.
- The install is recorded in ``~/.claude/settings.json`` (``extraKnownMarketplaces``, ``enabledPlugins``),
  ``~/.claude/plugins/installed_plugins.json`` and ``~/.claude/plugins/known_marketplaces.json``.
- The plugin's MCP server is named ``plugin:sjc:sjc`` (``claude mcp list``), its tools
  ``mcp__plugin_sjc_sjc__<tool>``. They are deferred: the first request names them in a system message and
  carries only ``ToolSearch``; after ``ToolSearch select:<name>`` the tool's schema is in the tool list. A
  server not yet connected when the first request goes out (sjc-mcp loads the MCP SDK first; on a loaded
  machine that outlasts Claude Code's brief wait) is named there as still connecting instead, and a
  ``ToolSearch`` by keywords waits for it and loads the tool (see ``test_cc_mcp``).
- Without ``sjc-mcp`` on PATH ``claude mcp list`` reports the server as failing to connect.
- Uninstall plus ``marketplace remove`` leave ``enabledPlugins: {}`` and ``extraKnownMarketplaces: {}`` in
  settings.json (every other key as it was), empty registries, and the cached copy marked ``.orphaned_at``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cc_fake
import cc_plugin_fake
import hostcli
import pytest
from cc_plugin_fake import FakeMessages, GitHttp

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # type: ignore[no-redef]

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# what a plugin install needs from the repository; the rest of a checkout would be copied along unused
PLUGIN_FILES = (".claude-plugin", "hooks", "LICENSE", "README.md")
MARKETPLACE = "sjc-mcp"  # "name" in .claude-plugin/marketplace.json
PLUGIN_ID = f"sjc@{MARKETPLACE}"
SERVER = "plugin:sjc:sjc"  # the name claude mcp list gives the plugin's server "sjc"
TOOL_PREFIX = "mcp__plugin_sjc_sjc__"
TOOLS = {"judge_summary", "prune_summary", "judge_tool_results", "prune_tool_results"}
CLI_TIMEOUT = 60


def manifest() -> dict[str, Any]:
    return json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())


def hook_events() -> set[str]:
    return set(json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"])


class Host:
    """The real ``claude`` with a throw-away HOME, offline, its model on the fake."""

    def __init__(self, base: Path, api_url: str) -> None:
        self.home = base / "home"
        self.work = base / "work"
        self.home.mkdir(parents=True)
        self.work.mkdir(parents=True)
        self.exe = str(hostcli.claude_code())
        self.env = hostcli.offline_env(self.home, ANTHROPIC_API_KEY="dummy", ANTHROPIC_BASE_URL=api_url)

    def claude(self, *args: str, ok: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        try:
            r = subprocess.run(
                [self.exe, *args],
                cwd=self.work,
                env={**self.env, **env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"claude {' '.join(args)} ran past {CLI_TIMEOUT}s: {str(exc.stderr)[-800:]}")
        if ok and r.returncode != 0:
            pytest.fail(f"claude {' '.join(args)} exited {r.returncode}: {r.stdout[-1500:]} {r.stderr[-1500:]}")
        return r

    @property
    def claude_dir(self) -> Path:
        return self.home / ".claude"

    def read(self, rel: str) -> Any:
        p = self.claude_dir / rel
        return json.loads(p.read_text()) if p.exists() else None

    def plugins(self) -> dict[str, dict[str, Any]]:
        out = json.loads(self.claude("plugin", "list", "--json").stdout)
        return {p["id"]: p for p in out}

    def mcp_list(self, **env: str) -> str:
        return self.claude("mcp", "list", **env).stdout

    def decisions(self) -> list[dict[str, Any]]:
        log = self.home / ".local" / "state" / "sjc" / "decisions.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


@pytest.fixture(scope="module")
def api() -> Iterator[FakeMessages]:
    server = FakeMessages()
    yield server
    server.close()


def plugin_copy(dest: Path) -> Path:
    """A clean copy of the plugin's files, as a clone of the repository has them."""
    dest.mkdir(parents=True)
    for name in PLUGIN_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def expected_installed(host: Host) -> Path:
    return host.claude_dir / "plugins" / "cache" / MARKETPLACE / "sjc" / manifest()["version"]


def check_installed_copy(install: Path) -> None:
    """The cached copy holds the plugin's files as they are in the repository, the hook script runnable."""
    for rel in (".claude-plugin/plugin.json", ".claude-plugin/marketplace.json", "hooks/hooks.json", "hooks/sjc-hook"):
        assert (install / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    assert (install / "hooks" / "sjc-hook").stat().st_mode & stat.S_IXUSR


def check_reported(host: Host) -> None:
    """What the CLI reports about the installed plugin: enabled, its MCP server, its hooks, connected."""
    entry = host.plugins()[PLUGIN_ID]
    assert entry["enabled"] is True and entry["scope"] == "user"
    assert entry["version"] == manifest()["version"]
    assert entry["mcpServers"] == manifest()["mcpServers"] == {"sjc": {"command": "sjc-mcp", "args": []}}
    details = host.claude("plugin", "details", PLUGIN_ID).stdout
    events = hook_events()
    hooks_line = next(line for line in details.splitlines() if line.strip().startswith("Hooks ("))
    assert f"Hooks ({len(events)})" in hooks_line, details
    assert set(re.findall(r"[A-Za-z]+", hooks_line.split(")", 1)[1].split("(")[0])) == events, hooks_line
    assert re.search(r"MCP servers \(1\)\s+sjc\b", details), details
    # the venv's bin dir is on PATH (offline_env): the server starts and answers
    assert re.search(rf"^{re.escape(SERVER)}: sjc-mcp\s+- ✔ Connected$", host.mcp_list(), re.M)


def check_settings_restored(host: Host, before: dict[str, Any]) -> None:
    # the two keys the install added stay behind, emptied; every other key is as it was
    assert host.read("settings.json") == {**before, "enabledPlugins": {}, "extraKnownMarketplaces": {}}
    assert host.read("plugins/installed_plugins.json") == {"version": 2, "plugins": {}}
    assert host.read("plugins/known_marketplaces.json") == {}
    assert PLUGIN_ID not in host.plugins()
    assert SERVER not in host.mcp_list()


def test_validate_manifests(tmp_path: Path, api: FakeMessages) -> None:
    # one version everywhere: the package, the plugin and its marketplace entry
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == MARKETPLACE
    (listed,) = [p for p in market["plugins"] if p["name"] == manifest()["name"] == "sjc"]
    assert listed["source"] == "./"
    assert listed["version"] == manifest()["version"] == project["version"]
    host = Host(tmp_path, api.url)
    src = plugin_copy(tmp_path / "src")
    out = json.loads(host.claude("plugin", "validate", "--json", str(src / ".claude-plugin" / "plugin.json")).stdout)
    assert out["success"] is True
    assert out["manifest"]["errors"] == [] and out["manifest"]["warnings"] == [], out["manifest"]
    assert all(c["errors"] == [] for c in out["contents"]), out["contents"]
    assert out["provides"]["mcpServers"] == [{"name": "sjc", "type": "stdio", "target": "sjc-mcp", "args": []}]
    assert {h["event"] for h in out["provides"]["hooks"]} == hook_events()
    assert all("/hooks/sjc-hook" in h["command"] for h in out["provides"]["hooks"])
    r = host.claude("plugin", "validate", "--strict", str(src / ".claude-plugin" / "marketplace.json"))
    assert "Validation passed" in r.stdout
    # the hook commands quote ${CLAUDE_PLUGIN_ROOT} (a path with spaces), so the plugin passes --strict too
    r = host.claude("plugin", "validate", "--strict", str(src / ".claude-plugin" / "plugin.json"))
    assert "Validation passed" in r.stdout, r.stdout + r.stderr

    # the other form: the same server from a .mcp.json at the plugin root
    alt = plugin_copy(tmp_path / "alt")
    man = manifest()
    servers = man.pop("mcpServers")
    (alt / ".claude-plugin" / "plugin.json").write_text(json.dumps(man))
    (alt / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    alt_out = json.loads(
        host.claude("plugin", "validate", "--json", str(alt / ".claude-plugin" / "plugin.json")).stdout
    )
    assert alt_out["success"] is True and alt_out["provides"]["mcpServers"] == out["provides"]["mcpServers"]
    # ... which a checkout would also offer as the project's own server to anyone running claude in it
    r = subprocess.run(
        [host.exe, "mcp", "list"], cwd=alt, env=host.env, capture_output=True, text=True, timeout=CLI_TIMEOUT
    )
    assert re.search(r"^sjc: sjc-mcp\s+- ⏸ Pending approval", r.stdout, re.M), r.stdout


def test_install_from_folder_tools_hooks_uninstall(tmp_path: Path, api: FakeMessages) -> None:
    t0 = time.monotonic()
    host = Host(tmp_path, api.url)
    src = plugin_copy(tmp_path / "sjc-mcp")
    (src / "build").mkdir()
    (src / "build" / "not-tracked.txt").write_text("ignored by .gitignore in a checkout\n")
    before = {"permissions": {"allow": ["Bash(ls:*)"]}, "cleanupPeriodDays": 30}
    host.claude_dir.mkdir()
    (host.claude_dir / "settings.json").write_text(json.dumps(before))

    r = host.claude("plugin", "marketplace", "add", str(src))
    assert f"Successfully added marketplace: {MARKETPLACE}" in r.stdout + r.stderr
    r = host.claude("plugin", "install", PLUGIN_ID)
    assert f"Successfully installed plugin: {PLUGIN_ID}" in r.stdout + r.stderr

    settings = host.read("settings.json")
    assert settings == {
        **before,
        "extraKnownMarketplaces": {MARKETPLACE: {"source": {"source": "directory", "path": str(src)}}},
        "enabledPlugins": {PLUGIN_ID: True},
    }
    known = host.read("plugins/known_marketplaces.json")[MARKETPLACE]
    assert known["source"] == {"source": "directory", "path": str(src)} and known["installLocation"] == str(src)
    (entry,) = host.read("plugins/installed_plugins.json")["plugins"][PLUGIN_ID]
    assert entry["scope"] == "user" and entry["version"] == manifest()["version"]
    install = Path(entry["installPath"])
    assert install == expected_installed(host)
    check_installed_copy(install)
    # a folder is copied whole: files a clone would not have come along
    assert (install / "build" / "not-tracked.txt").exists()
    assert host.plugins()[PLUGIN_ID]["readFromFolder"] == str(src)
    check_reported(host)
    # the folder is read live: an edit of its plugin.json is what the CLI reports next
    live = src / ".claude-plugin" / "plugin.json"
    edited = manifest()
    edited["mcpServers"]["sjc"]["command"] = "sjc-mcp-edited"
    live.write_text(json.dumps(edited))
    assert host.plugins()[PLUGIN_ID]["mcpServers"]["sjc"]["command"] == "sjc-mcp-edited"
    shutil.copy2(ROOT / ".claude-plugin" / "plugin.json", live)
    assert host.plugins()[PLUGIN_ID]["mcpServers"] == manifest()["mcpServers"]

    # one session: the model finds the sjc tools, loads prune_summary and calls it
    tool = TOOL_PREFIX + "prune_summary"
    n0 = len(api.main_requests())
    run = host.claude("-p", "Prune the summary.", "--output-format", "json", "--allowedTools", tool)
    assert json.loads(run.stdout)["result"] == cc_plugin_fake.FINAL
    reqs = api.main_requests()[n0:]
    first = json.dumps(reqs[0])
    named = {t for t in TOOLS if TOOL_PREFIX + t in first}
    # all four named to the model, or the server named as still connecting (its ToolSearch then waits for it)
    assert named == TOOLS or (not named and "still connecting" in first), first[-3000:]
    assert not any(n.startswith(TOOL_PREFIX) for n in cc_plugin_fake.tool_names(reqs[0]))  # deferred
    assert "ToolSearch" in cc_plugin_fake.tool_names(reqs[0])
    assert tool in cc_plugin_fake.tool_names(reqs[-1])  # loaded after ToolSearch
    call = next(c for c in cc_plugin_fake.tool_calls(reqs[-1]) if c["name"] == tool)
    result = json.loads(cc_fake.tool_results(reqs[-1])[call["id"]])
    assert result["removed"] == 1 and result["kept"] == 1
    assert cc_plugin_fake.INVENTED not in result["pruned_summary"]
    assert cc_plugin_fake.SUPPORTED in result["pruned_summary"]
    session = json.loads(run.stdout)["session_id"]

    # a compaction in that session: the plugin's hooks run sjc-hook, which logs its decision
    host.claude("-p", "/compact", "--continue", "--output-format", "json")
    # PostCompact returns at once and judges in a process of its own: wait for its record, bounded
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(
        d.get("surface") == "hook" and d.get("status") == "judged" for d in host.decisions()
    ):
        time.sleep(0.2)
    hooked = [d for d in host.decisions() if d.get("surface") == "hook" and d.get("host") == "claude-code"]
    assert hooked, host.decisions()
    assert {d.get("event") for d in hooked} <= hook_events()
    assert any(d.get("session") == session and d.get("status") == "judged" for d in hooked), hooked

    r = host.claude("plugin", "uninstall", PLUGIN_ID)
    assert "Successfully uninstalled plugin: sjc" in r.stdout + r.stderr
    r = host.claude("plugin", "marketplace", "remove", MARKETPLACE)
    assert f"Successfully removed marketplace: {MARKETPLACE}" in r.stdout + r.stderr
    check_settings_restored(host, before)
    # the cached copy stays, marked for the CLI's later clean-up; the source folder is untouched
    assert (install / ".orphaned_at").read_text().isdigit()
    assert (src / ".claude-plugin" / "plugin.json").exists()
    assert time.monotonic() - t0 < 90


def git_repo(src: Path, bare: Path) -> str:
    """A bare repository holding the plugin files in one commit; its commit id."""
    git = ["git", "-c", "user.name=sjc", "-c", "user.email=sjc@example.invalid", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "plugin files"]):
        subprocess.run([*git, *args], cwd=src, check=True, capture_output=True, timeout=30)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True, capture_output=True, timeout=30)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=bare, check=True, capture_output=True, text=True, timeout=30
    ).stdout.strip()


def test_install_from_git_url_in_one_step(tmp_path: Path, api: FakeMessages) -> None:
    host = Host(tmp_path, api.url)
    repos = tmp_path / "repos"
    repos.mkdir()
    sha = git_repo(plugin_copy(tmp_path / "src"), repos / "sjc-mcp.git")
    git = GitHttp(repos)
    try:
        url = f"{git.url}/sjc-mcp.git"
        r = host.claude("plugin", "marketplace", "add", f"file://{repos / 'sjc-mcp.git'}", ok=False)
        assert r.returncode != 0 and "Invalid marketplace source format" in r.stdout + r.stderr
        assert host.read("plugins/known_marketplaces.json") in (None, {})

        r = host.claude("plugin", "install", "sjc", "--marketplace", url)
        out = r.stdout + r.stderr
        assert f"Cloning repository (timeout: 120s): {url}" in out
        assert f"Successfully added marketplace: {MARKETPLACE}" in out
        assert f"Successfully installed plugin: {PLUGIN_ID}" in out
        assert any("git-upload-pack" in h for h in git.hits), git.hits
    finally:
        git.close()

    assert host.read("settings.json") == {
        "extraKnownMarketplaces": {MARKETPLACE: {"source": {"source": "git", "url": url}}},
        "enabledPlugins": {PLUGIN_ID: True},
    }
    known = host.read("plugins/known_marketplaces.json")[MARKETPLACE]
    clone = host.claude_dir / "plugins" / "marketplaces" / MARKETPLACE
    assert known["source"] == {"source": "git", "url": url} and known["installLocation"] == str(clone)
    assert (clone / ".git").is_dir() and (clone / ".claude-plugin" / "marketplace.json").exists()
    (entry,) = host.read("plugins/installed_plugins.json")["plugins"][PLUGIN_ID]
    assert entry["gitCommitSha"] == sha
    assert "readFromFolder" not in host.plugins()[PLUGIN_ID]  # runs from the cached copy
    install = Path(entry["installPath"])
    assert install == expected_installed(host)
    check_installed_copy(install)
    check_reported(host)

    # without sjc-mcp on PATH the server is there but cannot start
    bare_path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    if shutil.which("sjc-mcp", path=bare_path) is None:
        listing = host.mcp_list(PATH=bare_path)
        assert re.search(rf"^{re.escape(SERVER)}: sjc-mcp\s+- ✘ Failed to connect", listing, re.M), listing

    host.claude("plugin", "uninstall", PLUGIN_ID)
    host.claude("plugin", "marketplace", "remove", MARKETPLACE)
    check_settings_restored(host, {})
    assert not clone.exists()  # the marketplace's clone goes with it
