"""A host's settings file as sjc edits it: read as JSON, backed up before a change, written atomically.

A backup is never overwritten (``.sjc-backup-<time>``, then ``-2``, ``-3``…); a write goes to a temporary
file beside the target and replaces it in one step, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError


def read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text() or "{}")
    except ValueError:
        raise InputError(f"{path} is not valid JSON; fix it or move it away first") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object")
    return data


def backup(path: Path) -> Path:
    """A copy of ``path`` under a name no earlier backup has (``.sjc-backup-<time>``, then ``-2``, ``-3``…):
    a backup is never overwritten, however quickly installs and uninstalls follow each other."""
    stem = f"{path.name}.sjc-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 10_000):
        copy = path.with_name(stem if n == 1 else f"{stem}-{n}")
        try:
            with copy.open("xb") as out, path.open("rb") as src:  # "x": fails if the name is taken
                shutil.copyfileobj(src, out)
        except FileExistsError:
            continue
        shutil.copystat(path, copy)
        return copy
    raise InputError(f"cannot find a free backup name for {path}")


def write_text(path: Path, text: str) -> Path | None:
    saved = backup(path) if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.sjc-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return saved


def write_json(path: Path, data: dict[str, Any]) -> Path | None:
    return write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
