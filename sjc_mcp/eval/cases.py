"""Labelled provenance cases (the format of ../shared/provenance/README.md): loading and matching.

A case is one compaction boundary with a label per summary entry. Its span is inline, or comes from
the compaction ``boundary`` of a real transcript whose path is relative to the case file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sjc_mcp import hosts, validate
from sjc_mcp.errors import InputError
from sjc_mcp.hosts import read_boundary
from sjc_mcp.hosts.base import Boundary, Item
from sjc_mcp.models import Entry, ParsedSummary


@dataclass(slots=True, kw_only=True)
class Label:
    entry: str
    section: str
    supported: bool
    source: str = "none"
    quote: str | None = None
    note: str | None = None
    occurrence: int = 1


@dataclass(slots=True, kw_only=True)
class Case:
    id: str
    host: str
    path: str
    boundary: Boundary
    origin: str = "synthetic"
    # the project or repository the session comes from: the case's ``project``, else the repository its
    # transcript's session ran in, else the case's id (a project of its own)
    project: str = ""
    labels: list[Label] = field(default_factory=list)


def _items(raw: Any) -> list[Item]:
    out = []
    for it in raw or []:
        role = it.get("role")
        if role not in ("user", "assistant", "tool_call", "tool_output"):
            continue
        out.append(
            Item(
                role=role,
                content=it.get("content") or "",
                name=it.get("name"),
                call_id=it.get("id"),
                is_error=bool(it.get("is_error")),
            )
        )
    return out


def load_case(path: str | Path) -> Case:
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read case {p}: {exc}") from None
    if not isinstance(raw, dict) or "labels" not in raw:
        raise InputError(f"{p} is not a provenance case (no 'labels')")
    host = raw.get("host") or "generic"
    if raw.get("transcript"):
        b = read_boundary(p.parent / raw["transcript"], raw.get("boundary", 0))
        summary = raw.get("summary") or b.summary
        boundary = Boundary(
            host=host,
            index=b.index,
            summary=summary,
            previous_summary=raw.get("previous_summary") or b.previous_summary,
            span=b.span or hosts.meaning(host, _items(raw.get("span"))),
            retained=hosts.meaning(host, _items(raw.get("retained"))),
            session_id=b.session_id,
            boundary_id=b.boundary_id,
            task=raw.get("task"),
            incomplete=b.incomplete,
        )
    else:
        boundary = Boundary(
            host=host,
            index=0,
            summary=raw.get("summary") or "",
            previous_summary=raw.get("previous_summary"),
            span=hosts.meaning(host, _items(raw.get("span"))),
            retained=hosts.meaning(host, _items(raw.get("retained"))),
            task=raw.get("task"),
        )
    case_id = raw.get("id") or p.stem
    project = raw.get("project")
    if not project and raw.get("transcript"):
        project = transcript_project(p.parent / raw["transcript"])
    return Case(
        id=case_id,
        host=host,
        origin=raw.get("origin", "synthetic"),
        path=str(p),
        boundary=boundary,
        project=project or case_id,
        labels=[validate.convert(lab, Label, where=f"{p}: label {i}") for i, lab in enumerate(raw["labels"])],
    )


# how many records of a transcript are read for its working directory
_CWD_RECORDS = 200


def transcript_project(path: Path) -> str | None:
    """The repository a transcript's session ran in: the last folder of its working directory (``cwd``
    of a Claude Code record, of a Codex ``session_meta`` or ``turn_context``), a worktree read as the
    repository it belongs to (``cli/.worktrees/2`` is ``cli``). None when no record names one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh):
                if n >= _CWD_RECORDS:
                    break
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(rec, dict):
                    continue
                payload = rec.get("payload")
                cwd = rec.get("cwd") or (payload.get("cwd") if isinstance(payload, dict) else None)
                if isinstance(cwd, str) and cwd.strip("/\\"):
                    return repository_of(cwd)
    except OSError:
        return None
    return None


def repository_of(cwd: str) -> str:
    """``/Users/a/work/cli/.worktrees/x/y`` → ``cli``: the folder above a worktrees folder, else the last."""
    parts = [q for q in cwd.replace("\\", "/").split("/") if q]
    for i, q in enumerate(parts):
        if q in (".worktrees", "worktrees") and i > 0:
            return parts[i - 1] if parts[i - 1] != ".claude" or i < 2 else parts[i - 2]
    return parts[-1] if parts else cwd


def case_paths(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(p.rglob("*.json"))
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"no such case file or folder: {p}")
    return out


def match_labels(parsed: ParsedSummary, labels: list[Label]) -> list[Entry | None]:
    """The entry each label names: first line (marker removed) and section equal; ``occurrence`` picks."""
    out: list[Entry | None] = []
    for lab in labels:
        want = lab.entry.strip()
        hits = [e for e in parsed.entries if e.section == lab.section and e.first_line == want]
        out.append(hits[lab.occurrence - 1] if len(hits) >= lab.occurrence else None)
    return out
