"""Superseded tool outputs: a result whose call was made again later, reading the same thing.

Deterministic and judge-free, the first step of tool-result pruning. A tool output is superseded when
a later call of the same kind reads the same thing: the same file (a full read, or a ranged read whose
range the later read covers), the same command, the same search. Its result is replaced by a one-line
stub naming the later call ("[superseded by the read of src/app.py at turn 41]"); the call stays, so
every tool call keeps a result and the conversation stays valid for the host's API.

Never superseded: the newest output of anything (only a later call can supersede), an output inside
the protected recent turns, an error (what the summary's "Errors and fixes" cite), an output whose
later call failed or returned nothing, and calls of tools that do not read (edits, writes, plans).

Per host, the calls that read:
- Claude Code: ``Read`` (``file_path``, ``offset``, ``limit``), ``Bash`` (``command``), ``Grep``,
  ``Glob`` (all their arguments).
- Codex: ``shell`` / ``exec_command`` / ``shell_command`` / ``local_shell`` (the command; ``cat FILE``
  and ``sed -n 'A,Bp' FILE`` count as reads of FILE).
- Gemini CLI: ``read_file`` (``absolute_path``/``file_path``, ``offset``, ``limit``),
  ``run_shell_command``, ``search_file_content`` / ``grep`` / ``glob`` / ``list_directory``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sjc_mcp.hosts.base import Item

READ_TOOLS = frozenset({"Read", "read_file", "read_many_files", "view"})
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "shell_command", "local_shell", "run_shell_command"})
SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS", "search_file_content", "grep", "glob", "list_directory", "ls"})

_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


@dataclass(frozen=True)
class Target:
    """What a call reads: ``kind`` (read, command, search), a key that names the thing, and for reads the
    line range (``start`` inclusive, ``end`` exclusive; None: to the end)."""

    kind: str
    key: str
    start: int = 0
    end: int | None = None
    shown: str = ""

    def covered_by(self, later: Target) -> bool:
        if self.kind != later.kind or self.key != later.key:
            return False
        if self.kind != "read":
            return True
        if later.start > self.start:
            return False
        if later.end is None:
            return True
        return self.end is not None and self.end <= later.end


def _args(call: Item) -> Any:
    try:
        return json.loads(call.content)
    except ValueError:
        return call.content


def _int(v: Any, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _file_read(path: str, offset: Any, limit: Any, one_based: bool) -> Target:
    start = _int(offset, 1 if one_based else 0)
    start = max(0, start - 1) if one_based else max(0, start)
    n = _int(limit, 0)
    return Target("read", path, start, start + n if n > 0 else None, path)


def _shell_read(argv: list[str]) -> Target | None:
    """``cat FILE`` or ``sed -n 'A,Bp' FILE``: a read of FILE (whole or lines A..B)."""
    if len(argv) == 2 and argv[0] == "cat" and not argv[1].startswith("-"):
        return Target("read", argv[1], 0, None, argv[1])
    if len(argv) == 4 and argv[0] == "sed" and argv[1] == "-n":
        m = _SED_RANGE.match(argv[2])
        if m:
            a = int(m.group(1))
            b = int(m.group(2) or a)
            return Target("read", argv[3], max(0, a - 1), b, argv[3])
    return None


def _command(args: Any) -> str | None:
    if isinstance(args, dict):
        args = args.get("command", args.get("cmd"))
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        if len(args) >= 3 and args[0] in ("bash", "sh", "zsh") and args[1] in ("-lc", "-c"):
            return args[2]
        return shlex.join(args)
    return args if isinstance(args, str) else None


def target(call: Item) -> Target | None:
    """What ``call`` reads, or None for a call that does not only read (or one we cannot name)."""
    name = call.name or ""
    args = _args(call)
    if name in READ_TOOLS and isinstance(args, dict):
        path = args.get("file_path") or args.get("absolute_path") or args.get("path")
        if isinstance(path, str) and path:
            return _file_read(path, args.get("offset"), args.get("limit"), one_based=name == "Read")
        return None
    if name in SHELL_TOOLS:
        cmd = _command(args)
        if not cmd or not cmd.strip():
            return None
        cmd = " ".join(cmd.split())
        try:
            read = _shell_read(shlex.split(cmd))
        except ValueError:
            read = None
        return read or Target("command", cmd, shown=cmd)
    if name in SEARCH_TOOLS:
        key = json.dumps(args, sort_keys=True, ensure_ascii=False) if not isinstance(args, str) else args
        return Target("search", f"{name}:{key}", shown=f"{name} {key}")
    return None


def stub(later: Target, turn: int) -> str:
    shown = later.shown if len(later.shown) <= 80 else later.shown[:77] + "..."
    what = {"read": f"the read of {shown}", "command": f"the same command (`{shown}`)"}.get(
        later.kind, f"the same search ({shown})"
    )
    return f"[superseded by {what} at turn {turn}]"


@dataclass(frozen=True)
class Superseded:
    index: int  # the superseded tool output
    later: int  # the tool output of the (first) later call that supersedes it
    stub: str  # the one line naming the later call
    text: str  # what replaces the output: the stub, or the stub and the lines no later read covers


_NUMBERED = re.compile(r"^\s*(\d+)(?:→|\t)")


def _line_numbers(t: Target, text: str) -> list[int | None]:
    """The file line number of each line of a read's output (Claude Code numbers its lines; a plain
    read's lines count from its start), None for lines that are not file lines."""
    lines = text.split("\n")
    numbered = [_NUMBERED.match(line) for line in lines]
    if sum(m is not None for m in numbered) >= max(1, len(lines) // 2):
        return [int(m.group(1)) if m else None for m in numbered]
    return [t.start + k + 1 for k in range(len(lines))]


def _covered(n: int, ranges: list[tuple[int, int | None]]) -> bool:
    return any(a < n and (b is None or n <= b) for a, b in ranges)


def _partial(item: Item, t: Target, later: list[tuple[int, Target]], turn_of: Sequence[int]) -> Superseded | None:
    """A read whose lines later reads of the same file cover in part: those lines go, the rest stays."""
    ranges = [(lt.start, lt.end) for _, lt in later]
    lines = item.content.split("\n")
    numbers = _line_numbers(t, item.content)
    gone = [n for n in numbers if n is not None and _covered(n, ranges)]
    if len(gone) < MIN_PARTIAL_LINES:
        return None
    j, first = later[0]
    shown = first.shown if len(first.shown) <= 80 else first.shown[:77] + "..."
    head = f"[lines {min(gone)}-{max(gone)} superseded by later reads of {shown}, from turn {turn_of[j]}]"
    kept = [line for line, n in zip(lines, numbers, strict=True) if n is None or not _covered(n, ranges)]
    return Superseded(-1, j, head, head + "\n" + "\n".join(kept))


MIN_PARTIAL_LINES = 20


def find(items: Sequence[Item], cutoff: int, turn_of: Sequence[int]) -> dict[int, Superseded]:
    """Tool outputs before ``cutoff`` that later calls supersede, by output index. ``turn_of[i]`` is the
    turn number (1-based) of item ``i``."""
    calls = {it.call_id: it for it in items if it.role == "tool_call" and it.call_id}
    outputs: list[tuple[int, Target, bool]] = []
    for i, it in enumerate(items):
        if it.role != "tool_output" or not it.call_id or it.call_id not in calls:
            continue
        t = target(calls[it.call_id])
        if t is not None:
            usable = not it.is_error and bool(it.content.strip())
            outputs.append((i, t, usable))
    out: dict[int, Superseded] = {}
    for pos, (i, t, usable) in enumerate(outputs):
        if i >= cutoff or not usable:
            continue
        same = [(j, lt) for j, lt, ok in outputs[pos + 1 :] if ok and lt.kind == t.kind and lt.key == t.key]
        whole = next(((j, lt) for j, lt in same if t.covered_by(lt)), None)
        if whole is not None:
            line = stub(whole[1], turn_of[whole[0]])
            out[i] = Superseded(i, whole[0], line, line)
        elif same and t.kind == "read":
            part = _partial(items[i], t, same, turn_of)
            if part is not None:
                out[i] = Superseded(i, part.later, part.stub, part.text)
    return out
