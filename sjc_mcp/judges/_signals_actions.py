"""What the environment did: each tool call of the span, the kinds of action it was (a push, a
commit, a test run, a lint, an install, a write or edit …), whether it succeeded, and where it sits.

An entry worded as a completed action ("Pushed to origin", "✅ Add X to Y", "all tests pass") is
backed when a call of that kind succeeded in the span (for a write or edit: one whose input names
what the entry names). Success is read from the call's result the way a person would: the host's
error flag, an exit status, the tool's own success or failure line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from sjc_mcp.judges._signals_text import anchors, found, words
from sjc_mcp.models import Source

EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "write",
        "notebookedit",
        "apply_patch",
        "replace",
        "write_file",
        "edit_file",
        "create_file",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "patch",
    }
)

# tools that run a command: Bash (Claude Code), shell / exec_command / local_shell (Codex),
# run_shell_command (Gemini CLI), exec (OpenClaw), terminal (Hermes) and the like
_SHELL_TOOL = re.compile(r"bash|shell|exec|command|terminal|powershell|console|run", re.IGNORECASE)


def is_shell_tool(name: str | None) -> bool:
    """Does a tool of this name run commands (its output is a command's output, not a file's text)?"""
    return bool(name) and _SHELL_TOOL.search(name or "") is not None


# what kind of action a call's command is
_CALL_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (k, re.compile(p, re.IGNORECASE))
    for k, p in (
        ("push", r"\bgit\s+(?:-\S+\s+)*push\b"),
        ("commit", r"\bgit\s+(?:-\S+\s+)*commit\b"),
        ("stage", r"\bgit\s+(?:-\S+\s+)*add\b"),
        (
            "test",
            r"\b(?:pytest|go\s+test|cargo\s+(?:test|nextest)|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test|vitest|jest|"
            r"mix\s+test|rspec|rake\s+test|phpunit|pest|artisan\s+test|make\s+test|tox|nox|ctest|dotnet\s+test|gradlew?\s+test|"
            r"mvn\s+test|deno\s+test|swift\s+test|run\s+test\S*|test:\w+)\b",
        ),
        (
            "lint",
            r"\b(?:ruff|eslint|golangci-lint|clippy|flake8|pylint|mypy|pyright|lint\S*|credo|rubocop|biome|tsc|"
            r"go\s+vet|staticcheck|shellcheck|dialyzer|typecheck|type-check|phpstan|psalm|tflint|hadolint|ktlint|"
            r"detekt|swiftlint|stylelint|vue-tsc|svelte-check|prettier\s+--check)\b",
        ),
        ("build", r"\b(?:build|compile|cargo\s+check|go\s+build|tsc|mix\s+compile|make)\b"),
        (
            "install",
            r"\b(?:pip3?\s+install|uv\s+(?:add|sync|pip\s+install)|npm\s+(?:install|i|ci|add)|yarn\s+add|"
            r"pnpm\s+(?:add|install|i)|bun\s+(?:add|install)|cargo\s+(?:add|install)|go\s+(?:get|install)|"
            r"mix\s+deps\.get|gem\s+install|bundle\s+(?:install|add)|brew\s+install|apt(?:-get)?\s+install|"
            r"poetry\s+add|pipx\s+install|composer\s+require)\b",
        ),
        ("format", r"\b(?:fmt|format|prettier|black|gofmt|rustfmt)\b"),
        ("reply", r"\bgh\s+(?:pr|issue)\s+(?:comment|review)\b|\bgh\s+api\b.*\b(?:comments|replies|reviews)\b"),
        ("pr", r"\bgh\s+pr\s+create\b"),
        ("merge", r"\bgit\s+(?:merge|rebase|cherry-pick)\b|\bgh\s+pr\s+merge\b"),
        ("delete", r"(?:^|[;&|]\s*)(?:git\s+)?rm\s|\bunlink\b"),
        (
            "deploy",
            r"\b(?:deploy|kubectl\s+(?:apply|rollout)|helm\s+(?:upgrade|install)|terraform\s+apply|fly\s+deploy|"
            r"vercel|netlify\s+deploy|kamal\s+deploy|(?:serverless|sam|cdk)\s+deploy|gcloud\s+.*\bdeploy|heroku|"
            r"docker\s+(?:push|stack\s+deploy)|ansible-playbook|cap\s+\w+\s+deploy)\b",
        ),
    )
)
# how a failed call's result begins (a line of it, lower-cased), and an exit status that is not 0
_FAILED_START = (
    "exit code",
    "error:",
    "error[",
    "fatal:",
    "failed",
    "fail ",
    "<tool_use_error>",
    "the user doesn't want to proceed",
    "command failed",
    "traceback",
)
_EXIT = re.compile(r"\b(?:exit code|exited with (?:code|status)|process exited with code):? *(\d+)")
_CHECK_FAILED = re.compile(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|\bFAIL(?:ED)?\b|\bpanic:|\btest result: FAILED|! \[rejected\]|"
    r"error: failed to push|\b[1-9]\d* issues?\b|\bfound [1-9]\d* errors?\b",
)
_SUCCESS = re.compile(
    r"->|\bpassed\b|\bok\b|\bPASS\b|\bsuccess|\b0 issues\b|all checks passed|\[\S+ [0-9a-f]{7,}\]|\bupdated\b|"
    r"\bwrote\b|\bcreated\b|\binstalled\b|\badded\b|\bfinished\b",
    re.IGNORECASE,
)
_PLAN_FILE = re.compile(r"/\.claude/plans/|(?:^|/)(?:plan|todo|tasks?)[\w-]*\.md$", re.IGNORECASE)
_CREATED = re.compile(r"\b(?:created|new file)\b", re.IGNORECASE)


@dataclass(slots=True)
class Call:
    """One tool call with its result: what it was, whether it succeeded, where it sits."""

    source: int  # index into the request's sources
    tool: str
    what: str  # the command, or the file a read/write touched
    text: str  # the call's input (what an edit wrote)
    kinds: frozenset[str]
    ok: bool
    line: str  # the result line that shows the outcome
    turn: int
    data: dict | None = None  # the parsed input
    created: bool = False  # the result says a new file was created
    words: set[str] = field(default_factory=set)


def call_input(call: str | None) -> tuple[str, dict | None]:
    """(tool name, parsed input) of a call recorded as ``"Tool: {json}"``."""
    if not call:
        return "", None
    name, _, rest = call.partition(": ")
    try:
        data = json.loads(rest)
    except ValueError:
        return name, None
    return name, data if isinstance(data, dict) else None


def command_of(data: dict | None) -> str:
    """The whole command a call ran (every line; a list as the shell gets it), or "" for a call of no command:
    what kinds of action it was is read from all of it ("… && bundle exec rubocop" at its end too)."""
    cmd = (data.get("command") or data.get("cmd")) if data else None
    if isinstance(cmd, list):
        parts = [str(p) for p in cmd]
        cmd = parts[-1] if len(parts) >= 3 and parts[-2] in ("-lc", "-c") else " ".join(parts)
    return cmd[:4000] if isinstance(cmd, str) else ""


def describe_input(name: str, data: dict | None, raw: str) -> str:
    """The command a call ran, or the file it touched, in a few words."""
    if data:
        cmd = data.get("command") or data.get("cmd")
        if isinstance(cmd, list):
            parts = [str(p) for p in cmd]
            cmd = parts[-1] if len(parts) >= 3 and parts[-2] in ("-lc", "-c") else " ".join(parts)
        if isinstance(cmd, str) and cmd.strip():
            return cmd.strip().split("\n", 1)[0][:120]
        for key in ("file_path", "path", "absolute_path", "notebook_path", "pattern", "url", "query"):
            v = data.get(key)
            if isinstance(v, str) and v:
                return v[:120]
        for key in ("description", "skill", "subagent_type", "name", "prompt"):
            v = data.get(key)
            if isinstance(v, str) and v.strip():
                return v.strip().split("\n", 1)[0][:120]
        patch = data.get("input")
        if isinstance(patch, str):
            m = re.search(r"\*\*\* (?:Update|Add|Delete) File: (\S+)", patch)
            if m:
                return m.group(1)
    return raw.split("\n", 1)[0][:120]


def _outcome(src: Source, kinds: frozenset[str]) -> tuple[bool, str]:
    """Did the call succeed, and the result line that shows it (the last line saying so)."""
    body = src.content
    head, tail = body[:600], body[-600:]
    if src.is_error or _failed(head.lower()) or (len(body) > 600 and _failed(tail.lower())):
        return False, _first_line(head)
    checked = kinds & {"test", "lint", "build", "push"} and _mentions_failure(head + tail)
    if checked and (_CHECK_FAILED.search(tail) or _CHECK_FAILED.search(head)):
        return False, _first_line(tail)
    if kinds & {"test", "lint", "build", "push", "install", "format"}:  # a check reports at its end
        lines = [ln.strip() for ln in tail.splitlines()[1:] or tail.splitlines() if ln.strip()][::-1]
    else:  # an edit, a commit, a reply reports at its start
        lines = [ln.strip() for ln in head.splitlines()[:5] if ln.strip()]
    line = next((ln for ln in lines if _SUCCESS.search(ln)), lines[0] if lines else "")
    return True, line[:200]


def _mentions_failure(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in ("fail", "error", "panic", "rejected", "issue"))


def _failed(lower: str) -> bool:
    """Does a (lower-cased) result say the call failed: a line starting as failures do, an exit status
    other than 0?"""
    if "exit" in lower and any(m.group(1).strip("0") for m in _EXIT.finditer(lower)):
        return True
    return any(ln.lstrip().startswith(_FAILED_START[1:]) for ln in lower.splitlines())


def _first_line(text: str) -> str:
    for ln in text.splitlines():
        if ln.strip():
            return ln.strip()[:200]
    return ""


def calls(sources: list[Source]) -> list[Call]:
    """Every tool call of the span with a recorded input, in order, with its kind and outcome."""
    out: list[Call] = []
    turn = 0
    for i, src in enumerate(sources):
        if src.kind == "user_message":
            turn += 1
            continue
        if src.kind != "tool_output":
            continue
        tool = src.name or (src.call or "").partition(": ")[0] or "tool"
        if tool.lower() not in EDIT_TOOLS and not _SHELL_TOOL.search(tool):  # a read, a search, a fetch …
            continue
        name, data = call_input(src.call)
        what = describe_input(name, data, src.call or "")
        command = command_of(data)
        kinds = {k for k, rx in _CALL_KINDS if command and rx.search(command)}
        if tool.lower() in EDIT_TOOLS and not _PLAN_FILE.search(what):  # writing down a plan is not doing it
            kinds.add("edit")
        if not kinds:  # a read, a search, a listing: no action an entry could claim
            continue
        ok, line = _outcome(src, frozenset(kinds))
        text = (src.call or "")[:20_000]
        created = bool(_CREATED.search(src.content[:300]))
        ws = words(text[:4000]) if "edit" in kinds else set()
        out.append(Call(i, tool, what, text, frozenset(kinds), ok, line, max(1, turn), data, created, ws))
    return out


@dataclass(slots=True)
class Backing:
    """How far the span's successful calls back an entry's claim of completed actions."""

    share: float  # claimed kinds backed by a successful call, 0..1
    unbacked: float  # claimed kinds with no call of that kind at all, 0..1
    call: Call | None  # the call that backs it best (for the reason)


def backing(entry: str, kinds: list[str], span_calls: list[Call]) -> Backing:
    """For each kind of action the entry claims, the last call of that kind: did it succeed?

    An edit-like claim ("Added X to y.go") is backed by a successful write or edit whose input names
    most of what the entry names."""
    if not kinds:
        return Backing(0.0, 0.0, None)
    backed = 0.0
    absent = 0
    best: Call | None = None
    names = [a for a in anchors(entry) if len(a) >= 3]
    ew = words(entry)
    for kind in kinds:
        mine = [c for c in span_calls if kind in c.kinds]
        if not mine:
            absent += 1
            continue
        if kind == "edit":
            score, call = _edit_match(names, ew, [c for c in mine if c.ok])
            backed += score
            best = best or call
            continue
        last = mine[-1]
        if last.ok:
            backed += 1.0
            best = best or last
        elif any(c.ok for c in mine):
            backed += 0.5
            best = best or next(c for c in reversed(mine) if c.ok)
    return Backing(backed / len(kinds), absent / len(kinds), best)


def _edit_match(names: list[str], ew: set[str], edits: list[Call]) -> tuple[float, Call | None]:
    best, call = 0.0, None
    base = a_basenames(names)
    for c in edits:
        if names:
            score = sum(1 for a in names if a in c.text and found(a, c.text)) / len(names)
            if base and any(b in c.what for b in base):
                score = max(score, 0.5)
        else:
            score = len(ew & c.words) / max(1, len(ew))
        if score > best:
            best, call = score, c
    return (best if best >= 0.5 else best / 2), call


def a_basenames(names: list[str]) -> list[str]:
    """The file names among an entry's identifiers (``x.go`` of ``cmd/x.go``)."""
    return [a.rsplit("/", 1)[-1] for a in names if re.search(r"\.[A-Za-z]{1,5}$", a) and "." in a.rsplit("/", 1)[-1]]
