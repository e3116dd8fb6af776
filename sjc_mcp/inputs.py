"""Reading the caller's input files for the CLI: one-line errors, never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sjc_mcp.errors import InputError, first_error
from sjc_mcp.models import EvidenceItem, Source


def read_text(path: str | None, what: str) -> str | None:
    """The text of ``path`` ('-' is stdin); None when ``path`` is None."""
    if path is None:
        return None
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{what} path is a folder, not a file: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None


def evidence_files(paths: list[str]) -> list[Source]:
    out = []
    for p in paths:
        text = read_text(p, "evidence")
        assert text is not None
        out.append(Source(kind="tool_output", name=Path(p).name, content=text))
    return out


def evidence_jsonl(path: str) -> list[Source]:
    text = read_text(path, "evidence-jsonl")
    assert text is not None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise InputError(f"{path}:{n}: not a JSON object") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{n}: expected an object {{kind, name, content}}")
        try:
            out.append(EvidenceItem.model_validate(obj).to_source())
        except Exception as exc:
            raise InputError(f"{path}:{n}: {first_error(exc)}") from None
    return out
