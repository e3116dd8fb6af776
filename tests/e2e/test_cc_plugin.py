"""sjc as a Claude Code plugin, in the real CLI, the way a new user sets it up: a fresh HOME, sjc put on PATH by
``uv tool install`` (of a clone, or of a git URL), then the plugin (``plugin/``, listed by the marketplace
``.claude-plugin/marketplace.json`` at the repository's root) installed from the clone's folder and from a git
URL: its MCP tools reaching the model and answering, its hooks judging a compaction, the plugin cache holding
only the plugin's files, and uninstall, with what it leaves behind. No venv of the checkout or of the test run
is on any PATH here.

Facts of the real CLI (2.1.332), each checked below:

- ``claude plugin validate`` accepts plugin.json and marketplace.json; the MCP server may be declared under
  ``mcpServers`` in plugin.json (used here) or in a ``.mcp.json`` at the plugin root, with the same result;
  a ``.mcp.json`` there would also be read as the project's own MCP config by anyone running ``claude`` in
  that folder ("Pending approval"), hence plugin.json. ``hooks/hooks.json`` at the plugin root loads without
  being named in plugin.json. Unquoted ``${CLAUDE_PLUGIN_ROOT}`` in a hook command is a warning, not an
  error. The plugin-directory checks of ``validate`` refuse a plugin folder without a README.md.
- A marketplace entry ``"source": "./plugin"`` installs that folder alone: the plugin cache
  (``~/.claude/plugins/cache/<marketplace>/<plugin>/<version>/``) holds the plugin's files (4 files, about
  3.5 KB), nothing else of the repository, not its ``.venv``. (With ``"source": "./"`` the whole folder was
  copied, ignored files included.)
- ``marketplace add <folder>`` records ``{"source": "directory", "path": <folder>}`` and the CLI then runs
  the plugin from ``<folder>/plugin`` itself (``readFromFolder``; edits there apply at once), not from the
  cached copy. A git marketplace is cloned (shallow, so git's smart HTTP protocol is needed; dumb HTTP fails)
  into ``~/.claude/plugins/marketplaces/<marketplace>/`` (the whole repository) and runs from the cached copy;
  ``file://`` URLs are refused ("Invalid marketplace source format"); ``install <plugin> --marketplace <url>``
  adds the marketplace and installs in one step.
- The install is recorded in ``~/.claude/settings.json`` (``extraKnownMarketplaces``, ``enabledPlugins``),
  ``~/.claude/plugins/installed_plugins.json`` and ``~/.claude/plugins/known_marketplaces.json``; once the
  plugin is loaded there is a data folder ``~/.claude/plugins/data/<plugin>-<marketplace>/`` (empty for sjc).
- The plugin's MCP server is named ``plugin:sjc:sjc`` (``claude mcp list``), its tools
  ``mcp__plugin_sjc_sjc__<tool>``. They are deferred: the first request names them in a system message and
  carries only ``ToolSearch``; after ``ToolSearch select:<name>`` the tool's schema is in the tool list. A
  server not yet connected when the first request goes out (sjc-mcp loads the MCP SDK first; on a loaded
  machine that outlasts Claude Code's brief wait) is named there as still connecting instead, and a
  ``ToolSearch`` by keywords waits for it and loads the tool (see ``test_cc_mcp``).
- Without ``sjc-mcp`` on PATH ``claude mcp list`` reports the server as failing to connect; without
  ``sjc-hook`` the plugin's hook script says so on stderr and exits 0: the session goes on, and the line is
  seen only in the debug log (``claude --debug hooks``: ``~/.claude/debug/``).
- Uninstall plus ``marketplace remove`` leave ``enabledPlugins: {}`` and ``extraKnownMarketplaces: {}`` in
  settings.json (every other key as it was), empty registries, no data folder, no marketplace clone, and the
  cached copy marked ``.orphaned_at``. Claude Code deletes a copy marked more than 14 days before (by the
  mark's mtime) at a later start, but only while some plugin is installed: with none, the copy stays.
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
from cc_plugin_fake import FakeMessages
from tool_install import check_on_path, clone, installer, run, serve, user_env, user_path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # type: ignore[no-redef]

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
MARKETPLACE = "sjc-mcp"  # "name" in .claude-plugin/marketplace.json
PLUGIN_ID = f"sjc@{MARKETPLACE}"
SERVER = "plugin:sjc:sjc"  # the name claude mcp list gives the plugin's server "sjc"
TOOL_PREFIX = "mcp__plugin_sjc_sjc__"
TOOLS = {"judge_summary", "prune_summary", "judge_tool_results", "prune_tool_results"}
CLI_TIMEOUT = 120
# how long the test waits for the hook's judgment to reach the log (it runs in a process of its own)
HOOK_WAIT = 120
BARE_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())


def manifest() -> dict[str, Any]:
    return json.loads((ROOT / "plugin" / ".claude-plugin" / "plugin.json").read_text())


def hook_events() -> set[str]:
    return set(json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text())["hooks"])


class Host:
    """The real ``claude`` for a user with a throw-away HOME, offline, its model on the fake, and the PATH such
    a user has after ``uv tool install``: ``~/.local/bin`` and the system's folders."""

    def __init__(self, home: Path, api_url: str) -> None:
        self.home = home
        self.work = home.parent / "work"
        self.home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        self.exe = str(hostcli.claude_code())
        self.env = hostcli.offline_env(self.home, ANTHROPIC_API_KEY="dummy", ANTHROPIC_BASE_URL=api_url)
        self.env["PATH"] = user_path(home)
        assert str(hostcli.VENV_BIN) not in self.env["PATH"].split(os.pathsep)

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

    def sjc(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The user's ``sjc``, from the tool install on their PATH."""
        return run(["sjc", *args], user_env(self.home))


@pytest.fixture(scope="module")
def api() -> Iterator[FakeMessages]:
    server = FakeMessages()
    yield server
    server.close()


@pytest.fixture(scope="module")
def uv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installer(tmp_path_factory.mktemp("installers"), "uv")


def worked_in_clone(dest: Path) -> Path:
    """A clone someone has worked in: the README's earlier in-clone venv and a build folder beside the files."""
    src = clone(dest)
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / ".venv" / "bin" / "python").write_bytes(b"\0" * 1_000_000)
    (src / "build").mkdir()
    (src / "build" / "not-tracked.txt").write_text("ignored by .gitignore\n")
    return src


def uv_tool_install(uv: Path, home: Path, spec: str) -> None:
    """The docs' first command, in the user's HOME: sjc, sjc-hook and sjc-mcp on PATH."""
    r = run([str(uv), "tool", "install", spec], user_env(home))
    assert "Installed 3 executables: sjc, sjc-hook, sjc-mcp" in r.stdout + r.stderr
    check_on_path(home, "uv")


def expected_installed(host: Host) -> Path:
    return host.claude_dir / "plugins" / "cache" / MARKETPLACE / "sjc" / manifest()["version"]


def files_under(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def check_cache_holds_only_the_plugin(install: Path, plugin: Path) -> None:
    """The cached copy is the plugin folder, file for file, byte for byte, the hook script runnable; nothing
    else of the repository (no .venv, no build output, no package)."""
    cached = {k: v for k, v in files_under(install).items() if k != ".orphaned_at"}
    expected = {".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/sjc-hook", "README.md"}
    assert set(cached) == set(files_under(plugin)) == expected, sorted(cached)
    for rel, path in cached.items():
        assert path.read_bytes() == (plugin / rel).read_bytes() == (ROOT / "plugin" / rel).read_bytes(), rel
    assert (install / "hooks" / "sjc-hook").stat().st_mode & stat.S_IXUSR
    assert sum(p.stat().st_size for p in cached.values()) < 16_000


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
    # the server the plugin starts is the tool install's, found on the user's PATH
    assert shutil.which("sjc-mcp", path=host.env["PATH"]) == str(host.home / ".local" / "bin" / "sjc-mcp")
    assert re.search(rf"^{re.escape(SERVER)}: sjc-mcp\s+- ✔ Connected$", host.mcp_list(), re.M)


def tools_and_compaction(host: Host, api: FakeMessages) -> str:
    """One session: the model finds the sjc tools, loads prune_summary and calls it; then a compaction in that
    session, which the plugin's hooks judge. The session's id."""
    tool = TOOL_PREFIX + "prune_summary"
    n0 = len(api.main_requests())
    run_ = host.claude("-p", "Prune the summary.", "--output-format", "json", "--allowedTools", tool)
    assert json.loads(run_.stdout)["result"] == cc_plugin_fake.FINAL, run_.stdout[-1500:]
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
    session = str(json.loads(run_.stdout)["session_id"])

    host.claude("-p", "/compact", "--continue", "--output-format", "json")
    # PostCompact returns at once and judges in a process of its own: wait for its record (bounded, so a
    # hook that never judges fails the test instead of hanging it)
    deadline = time.monotonic() + HOOK_WAIT
    while time.monotonic() < deadline and not any(
        d.get("surface") == "hook" and d.get("session") == session and d.get("status") == "judged"
        for d in host.decisions()
    ):
        time.sleep(0.2)
    hooked = [d for d in host.decisions() if d.get("surface") == "hook" and d.get("host") == "claude-code"]
    assert hooked, host.decisions()
    assert {d.get("event") for d in hooked} <= hook_events()
    assert any(d.get("session") == session and d.get("status") == "judged" for d in hooked), hooked
    return session


def uninstall(host: Host) -> None:
    r = host.claude("plugin", "uninstall", PLUGIN_ID)
    assert "Successfully uninstalled plugin: sjc" in r.stdout + r.stderr
    r = host.claude("plugin", "marketplace", "remove", MARKETPLACE)
    assert f"Successfully removed marketplace: {MARKETPLACE}" in r.stdout + r.stderr


def check_settings_restored(host: Host, before: dict[str, Any]) -> None:
    # the two keys the install added stay behind, emptied; every other key is as it was
    assert host.read("settings.json") == {**before, "enabledPlugins": {}, "extraKnownMarketplaces": {}}
    assert host.read("plugins/installed_plugins.json") == {"version": 2, "plugins": {}}
    assert host.read("plugins/known_marketplaces.json") == {}
    assert not (host.claude_dir / "plugins" / "data" / f"sjc-{MARKETPLACE}").exists()
    assert PLUGIN_ID not in host.plugins()
    assert SERVER not in host.mcp_list()


def test_validate_manifests(tmp_path: Path, api: FakeMessages) -> None:
    # one version everywhere: the package, the plugin and its marketplace entry
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == MARKETPLACE
    (listed,) = [p for p in market["plugins"] if p["name"] == manifest()["name"] == "sjc"]
    assert listed["source"] == "./plugin"
    assert listed["version"] == manifest()["version"] == project["version"]
    assert not (ROOT / ".claude-plugin" / "plugin.json").exists()  # the repository's root is no plugin
    host = Host(tmp_path / "home", api.url)
    src = clone(tmp_path / "src")
    plugin_json = str(src / "plugin" / ".claude-plugin" / "plugin.json")
    out = json.loads(host.claude("plugin", "validate", "--json", plugin_json).stdout)
    assert out["success"] is True
    assert out["manifest"]["errors"] == [] and out["manifest"]["warnings"] == [], out["manifest"]
    assert all(c["errors"] == [] for c in out["contents"]), out["contents"]
    assert out["provides"]["mcpServers"] == [{"name": "sjc", "type": "stdio", "target": "sjc-mcp", "args": []}]
    assert {h["event"] for h in out["provides"]["hooks"]} == hook_events()
    assert all("/hooks/sjc-hook" in h["command"] for h in out["provides"]["hooks"])
    # the plugin-directory checks: nothing they would refuse (they do refuse a plugin folder without a README)
    assert not [f for f in out["directory"]["findings"] if f["blocking"]], out["directory"]["findings"]
    r = host.claude("plugin", "validate", "--strict", str(src / ".claude-plugin" / "marketplace.json"))
    assert "Validation passed" in r.stdout
    # the hook commands quote ${CLAUDE_PLUGIN_ROOT} (a path with spaces), so the plugin passes --strict too
    r = host.claude("plugin", "validate", "--strict", plugin_json)
    assert "Validation passed" in r.stdout, r.stdout + r.stderr
    bare = tmp_path / "no-readme"
    shutil.copytree(src / "plugin", bare)
    (bare / "README.md").unlink()
    findings = json.loads(host.claude("plugin", "validate", "--json", str(bare), ok=False).stdout)["directory"]
    assert any(f["code"] == "README_MISSING" and f["blocking"] for f in findings["findings"]), findings

    # the other form: the same server from a .mcp.json at the plugin root
    alt = tmp_path / "alt"
    shutil.copytree(src / "plugin", alt)
    man = manifest()
    servers = man.pop("mcpServers")
    (alt / ".claude-plugin" / "plugin.json").write_text(json.dumps(man))
    (alt / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    alt_out = json.loads(
        host.claude("plugin", "validate", "--json", str(alt / ".claude-plugin" / "plugin.json")).stdout
    )
    assert alt_out["success"] is True and alt_out["provides"]["mcpServers"] == out["provides"]["mcpServers"]
    # ... which would also be offered as the project's own server to anyone running claude in that folder
    r = subprocess.run(
        [host.exe, "mcp", "list"], cwd=alt, env=host.env, capture_output=True, text=True, timeout=CLI_TIMEOUT
    )
    assert re.search(r"^sjc: sjc-mcp\s+- ⏸ Pending approval", r.stdout, re.M), r.stdout


def test_readme_install_then_the_plugin_from_a_folder(tmp_path: Path, api: FakeMessages, uv: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    src = worked_in_clone(tmp_path / "sjc-mcp")
    uv_tool_install(uv, home, str(src))
    host = Host(home, api.url)
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
    check_cache_holds_only_the_plugin(install, src / "plugin")
    assert host.plugins()[PLUGIN_ID]["readFromFolder"] == str(src / "plugin")
    check_reported(host)
    data = host.claude_dir / "plugins" / "data" / f"sjc-{MARKETPLACE}"
    assert data.is_dir() and not any(data.iterdir())  # made once the plugin loads; sjc keeps nothing there
    # the folder is read live: an edit of its plugin.json is what the CLI reports next
    live = src / "plugin" / ".claude-plugin" / "plugin.json"
    edited = manifest()
    edited["mcpServers"]["sjc"]["command"] = "sjc-mcp-edited"
    live.write_text(json.dumps(edited))
    assert host.plugins()[PLUGIN_ID]["mcpServers"]["sjc"]["command"] == "sjc-mcp-edited"
    shutil.copy2(ROOT / "plugin" / ".claude-plugin" / "plugin.json", live)
    assert host.plugins()[PLUGIN_ID]["mcpServers"] == manifest()["mcpServers"]

    tools_and_compaction(host, api)

    uninstall(host)
    check_settings_restored(host, before)
    # what is left: the cached copy, marked; sjc doctor names it and how to remove it
    assert (install / ".orphaned_at").read_text().isdigit()
    assert (src / "plugin" / ".claude-plugin" / "plugin.json").exists()  # the source folder is untouched
    doctor = host.sjc("doctor").stdout
    (line,) = [line for line in doctor.splitlines() if "uninstalled plugin's copy" in line]
    cache = host.claude_dir / "plugins" / "cache" / MARKETPLACE
    assert line.startswith("info") and line.endswith(f"fix: rm -rf {cache}"), line
    run(["sh", "-c", line.split(" — fix: ")[1]], user_env(home))
    assert not cache.exists()
    assert "uninstalled plugin's copy" not in host.sjc("doctor").stdout


def other_plugin(folder: Path) -> Path:
    """A plugin of nothing, in a marketplace of its own."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "p" / ".claude-plugin").mkdir(parents=True)
    market = {"name": "other", "owner": {"name": "o"}, "plugins": [{"name": "p", "source": "./p", "version": "1.0.0"}]}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(market))
    (folder / "p" / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "p", "version": "1.0.0", "description": "a plugin of nothing"})
    )
    return folder


def test_the_plugin_from_a_git_url(tmp_path: Path, api: FakeMessages, uv: Path) -> None:
    served = serve(clone(tmp_path / "src"), tmp_path / "repos")
    home = tmp_path / "home"
    home.mkdir()
    url = served.url
    try:
        uv_tool_install(uv, home, f"git+{url}")
        host = Host(home, api.url)
        r = host.claude("plugin", "marketplace", "add", f"file://{tmp_path / 'repos' / 'sjc-mcp.git'}", ok=False)
        assert r.returncode != 0 and "Invalid marketplace source format" in r.stdout + r.stderr
        assert host.read("plugins/known_marketplaces.json") in (None, {})

        n = len(served.server.hits)
        r = host.claude("plugin", "install", "sjc", "--marketplace", url)
        out = r.stdout + r.stderr
        assert f"Cloning repository (timeout: 120s): {url}" in out
        assert f"Successfully added marketplace: {MARKETPLACE}" in out
        assert f"Successfully installed plugin: {PLUGIN_ID}" in out
        assert any("git-upload-pack" in h for h in served.server.hits[n:]), served.server.hits
    finally:
        served.close()

    assert host.read("settings.json") == {
        "extraKnownMarketplaces": {MARKETPLACE: {"source": {"source": "git", "url": url}}},
        "enabledPlugins": {PLUGIN_ID: True},
    }
    known = host.read("plugins/known_marketplaces.json")[MARKETPLACE]
    clone_dir = host.claude_dir / "plugins" / "marketplaces" / MARKETPLACE
    assert known["source"] == {"source": "git", "url": url} and known["installLocation"] == str(clone_dir)
    # the marketplace is the whole repository, shallow; the cache only the plugin folder
    assert (clone_dir / ".git" / "shallow").is_file() and (clone_dir / "pyproject.toml").is_file()
    (entry,) = host.read("plugins/installed_plugins.json")["plugins"][PLUGIN_ID]
    assert entry["gitCommitSha"] == served.sha
    assert "readFromFolder" not in host.plugins()[PLUGIN_ID]  # runs from the cached copy
    install = Path(entry["installPath"])
    assert install == expected_installed(host)
    check_cache_holds_only_the_plugin(install, clone_dir / "plugin")
    check_reported(host)
    tools_and_compaction(host, api)

    # without sjc on PATH: the server cannot start, the hooks say so in the debug log, the session goes on
    listing = host.mcp_list(PATH=BARE_PATH)
    assert re.search(rf"^{re.escape(SERVER)}: sjc-mcp\s+- ✘ Failed to connect", listing, re.M), listing
    judged = len(host.decisions())
    r = host.claude("-p", "Hello again.", "--debug", "hooks", "--output-format", "json", PATH=BARE_PATH)
    assert json.loads(r.stdout)["is_error"] is False
    debug = (host.claude_dir / "debug" / "latest").read_text()
    assert "sjc: sjc-hook is not on PATH, so sjc judges nothing" in debug, debug[-2000:]
    assert len(host.decisions()) == judged

    uninstall(host)
    check_settings_restored(host, {})
    assert not clone_dir.exists()  # the marketplace's clone goes with it
    # the cached copy stays, marked; Claude Code deletes it 14 days on, at a start while some plugin is installed
    mark = install / ".orphaned_at"
    assert mark.read_text().isdigit()
    fifteen_days_ago = time.time() - 15 * 86400
    os.utime(mark, (fifteen_days_ago, fifteen_days_ago))
    host.claude("-p", "Hello.", "--output-format", "json")
    assert mark.exists()  # no plugin installed: no sweep
    other = other_plugin(tmp_path / "other")
    host.claude("plugin", "marketplace", "add", str(other))
    host.claude("plugin", "install", "p@other")
    host.claude("-p", "Hello.", "--output-format", "json")
    assert not install.exists()
