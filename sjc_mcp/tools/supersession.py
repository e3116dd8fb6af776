"""Superseded tool outputs: what a later tool output shows again.

Deterministic and judge-free, the first step of tool-result pruning. Two rules:

1. A tool output is superseded when a later call of the same kind reads the same thing: the same file
   (a full read, or a ranged read whose range the later read covers), the same command, the same search.
   Its result is replaced by a one-line stub naming the later call ("[superseded by the read of
   src/app.py at turn 41]").
2. Runs of at least three lines that a later output still shows (compared without a read's line numbers
   and surrounding blanks: an earlier full read and later reads of parts of the same file, a grep's
   lines a later read shows, a log printed twice) give way to one line naming where they are shown again
   ("[lines 21-60 shown again in the read of src/app.py at turn 41]"); the lines nothing later shows stay
   in place, so an edited file's old lines and a value seen once are never lost. The newest copy of every
   line stays, and the outputs it sits in are kept whole by the relevance step.

The call stays in both cases, so every tool call keeps a result and the conversation stays valid for the
host's API.

Never superseded: the newest output of anything (only a later call can supersede), an output inside
the protected recent turns, an error (what the summary's "Errors and fixes" cite), an output whose
later call failed or returned nothing, and calls of tools that do not read (edits, writes, plans).

Per host, the calls that read:
- Claude Code: ``Read`` (``file_path``, ``offset``, ``limit``), ``Bash`` (``command``), ``Grep``,
  ``Glob`` (all their arguments).
- Codex: ``shell`` / ``exec_command`` / ``shell_command`` / ``local_shell`` (the command; ``cat FILE``,
  ``nl -ba FILE``, ``sed -n 'A,Bp' FILE``, ``head -n N FILE``, also after ``cd DIR &&``, count as reads
  of FILE).
- Gemini CLI: ``read_file`` (``absolute_path``/``file_path``, ``offset``, ``limit``),
  ``run_shell_command``, ``search_file_content`` / ``grep`` / ``glob`` / ``list_directory``.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import posixpath
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


def _sed_range(expr: str) -> tuple[int, int] | None:
    m = _SED_RANGE.match(expr)
    if not m:
        return None
    a = int(m.group(1))
    return max(0, a - 1), int(m.group(2) or a)


def _file_command(argv: list[str]) -> Target | None:
    """``cat [-n] FILE``, ``nl -ba FILE``, ``sed -n 'A,Bp' FILE``, ``head -n N FILE`` and ``nl -ba FILE |
    sed -n 'A,Bp'``: a read of FILE (whole, or the lines named)."""
    if len(argv) == 2 and argv[0] == "cat" and not argv[1].startswith("-"):
        return Target("read", argv[1], 0, None, argv[1])
    if len(argv) == 3 and argv[:2] in (["cat", "-n"], ["nl", "-ba"]):
        return Target("read", argv[2], 0, None, argv[2])
    if len(argv) == 4 and argv[:2] == ["sed", "-n"] and (r := _sed_range(argv[2])):
        return Target("read", argv[3], r[0], r[1], argv[3])
    if len(argv) == 4 and argv[:2] == ["head", "-n"] and argv[2].isdigit():
        return Target("read", argv[3], 0, int(argv[2]), argv[3])
    if len(argv) == 7 and argv[:2] == ["nl", "-ba"] and argv[3:5] == ["|", "sed"] and argv[5] == "-n":
        r = _sed_range(argv[6])
        return Target("read", argv[2], r[0], r[1], argv[2]) if r else None
    return None


def _shell_read(argv: list[str]) -> Target | None:
    """A shell command that only reads a file (``_file_command``), run where it is or after ``cd DIR &&``
    (the file is then DIR's)."""
    if len(argv) >= 4 and argv[0] == "cd" and argv[2] == "&&":
        t = _file_command(argv[3:])
        if t is None or t.key.startswith("/"):
            return t
        return Target("read", posixpath.normpath(posixpath.join(argv[1], t.key)), t.start, t.end, t.shown)
    return _file_command(argv)


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
    shown = _short(later.shown)
    what = {"read": f"the read of {shown}", "command": f"the same command (`{shown}`)"}.get(
        later.kind, f"the same search ({shown})"
    )
    return f"[superseded by {what} at turn {turn}]"


@dataclass(frozen=True)
class Superseded:
    index: int  # the superseded tool output
    later: int  # the tool output of the (first) later call that supersedes it
    stub: str  # the one line naming the later call
    text: str  # what replaces the output: the stub, or the stub and the lines no later output shows again
    relies_on: tuple[int, ...] = ()  # every later output whose text the replacement relies on (kept whole)


_NUMBERED = re.compile(r"^\s*(\d+)(?:→|\t)")
_ALNUM = re.compile(r"\w")


def _short(shown: str) -> str:
    return shown if len(shown) <= 80 else shown[:77] + "..."


MIN_REPEATED_LINES = 3  # a run of lines shown again later goes only with this many lines that carry text


def _key(line: str) -> str:
    """A line as compared across outputs: without a read's line number and the surrounding blanks."""
    m = _NUMBERED.match(line)
    return (line[m.end() :] if m else line).strip()


def describe(call: Item | None) -> str:
    """How a marker names the output of ``call``: "the read of src/app.py", "the output of `make`"."""
    t = target(call) if call is not None else None
    if t is not None and t.kind == "read":
        return f"the read of {_short(t.shown)}"
    if t is not None and t.kind == "command":
        return f"the output of `{_short(t.shown)}`"
    if t is not None:
        return f"the search {_short(t.shown)}"
    return f"the {call.name} result" if call is not None and call.name else "a later tool result"


def _repeated(content: str, seen: dict[str, int], name_of: dict[int, str], turn_of: Sequence[int]) -> Superseded | None:
    """An output whose runs of lines a later output shows again: each run gives way to one line naming where
    it is shown again; lines nothing later shows stay, in place. ``seen`` maps a line's key to the nearest later
    output that still shows it."""
    lines = content.split("\n")
    keys = [_key(line) for line in lines]
    text = [bool(_ALNUM.search(k)) for k in keys]
    shown = [k in seen if t else True for k, t in zip(keys, text, strict=True)]
    numbers = [(int(m.group(1)) if (m := _NUMBERED.match(line)) else None) for line in lines]
    out: list[str] = []
    relies: list[int] = []
    first: tuple[str, int] | None = None
    runs = 0
    k = 0
    while k < len(lines):
        if not (shown[k] and text[k]):
            out.append(lines[k])
            k += 1
            continue
        e = k
        while e < len(lines) and shown[e]:
            e += 1
        while not text[e - 1]:  # a run ends on a line with text; trailing blanks stay
            e -= 1
        run = range(k, e)
        holders = [seen[keys[r]] for r in run if text[r]]
        if len(holders) >= MIN_REPEATED_LINES:
            j = holders[0]
            nums = [numbers[r] for r in run if numbers[r] is not None]
            what = f"lines {nums[0]}-{nums[-1]}" if len(nums) == len(run) else f"{len(run)} lines"
            marker = f"[{what} shown again in {name_of[j]} at turn {turn_of[j]}]"
            if sum(len(lines[r]) + 1 for r in run) > len(marker) + 1:
                out.append(marker)
                relies += holders
                first = first or (marker, j)
                runs += 1
                k = e
                continue
        out.extend(lines[k:e])
        k = e
    if first is None:
        return None
    head = first[0] if runs == 1 else f"{first[0]} and {runs - 1} more run{'s' * (runs > 2)} shown again later"
    return Superseded(-1, first[1], head, "\n".join(out), tuple(sorted(set(relies))))


def find(items: Sequence[Item], cutoff: int, turn_of: Sequence[int]) -> dict[int, Superseded]:
    """Tool outputs before ``cutoff`` that later calls supersede, by output index. ``turn_of[i]`` is the
    turn number (1-based) of item ``i``.

    Two rules, in this order: a later call reading the same thing (the output becomes a stub); runs of lines a
    later output shows again (each run gives way to a line naming where, the rest stays in place). A line is
    taken as shown again only from what a later output still shows, so its newest copy always stays;
    ``relies_on`` names those later outputs.
    """
    calls = {it.call_id: it for it in items if it.role == "tool_call" and it.call_id}
    outputs: list[tuple[int, Target | None, bool]] = []
    for i, it in enumerate(items):
        if it.role != "tool_output" or not it.call_id or it.call_id not in calls:
            continue
        usable = not it.is_error and bool(it.content.strip())
        outputs.append((i, target(calls[it.call_id]), usable))
    out: dict[int, Superseded] = {}
    by_thing: dict[tuple[str, str], list[tuple[int, Target]]] = {}  # what is read -> its usable outputs, in order
    for i, t, usable in outputs:
        if t is not None and usable:
            by_thing.setdefault((t.kind, t.key), []).append((i, t))
    for i, t, usable in outputs:
        if i >= cutoff or not usable or t is None:
            continue
        same = by_thing[(t.kind, t.key)]
        later = itertools.islice(same, bisect.bisect_right(same, i, key=lambda x: x[0]), None)
        whole = next(((j, lt) for j, lt in later if t.covered_by(lt)), None)
        if whole is not None:
            line = stub(whole[1], turn_of[whole[0]])
            if len(line) < len(items[i].content):  # a stub longer than the output saves nothing
                out[i] = Superseded(i, whole[0], line, line, (whole[0],))
    # Newest first: each output's remaining text is what later outputs show for the ones before it.
    seen: dict[str, int] = {}
    name_of: dict[int, str] = {}
    for i, _t, usable in reversed(outputs):
        if i < cutoff and usable and i not in out:
            rep = _repeated(items[i].content, seen, name_of, turn_of)
            if rep is not None:
                out[i] = dataclasses.replace(rep, index=i)
        name_of[i] = describe(calls.get(items[i].call_id or ""))
        for line in (out[i].text if i in out else items[i].content).split("\n"):
            key = _key(line)
            if key:
                seen[key] = i
    return out
