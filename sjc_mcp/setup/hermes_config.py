"""Hermes' ``config.yaml`` as ``sjc install hermes`` edits it: read and written as YAML, round trip
(comments, key order, quoting and indentation kept); sjc's context engine turned on (``sjc`` in
``plugins.enabled``, out of ``plugins.disabled``, ``context.engine: sjc``) with a record of what changed,
and taken out again by that record. Writing the file (backup, atomic) is ``setup.hermes``'.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from sjc_mcp.errors import InputError

NAME = "sjc"  # the plugin's name and the context engine's


def _yaml(text: str) -> Any:
    """A round-trip YAML that writes ``text``'s own indentation back."""
    from ruamel.yaml import YAML
    from ruamel.yaml.util import load_yaml_guess_indent

    y = YAML()
    y.preserve_quotes = True
    y.width = 4096  # never re-wrap a long line
    try:
        _, seq_indent, seq_offset = load_yaml_guess_indent(text) if text.strip() else (None, 2, 0)
    except Exception:
        seq_indent, seq_offset = 2, 0
    nested = re.search(r"^\S[^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( +)[^\s#-]", text, re.M)
    y.indent(mapping=len(nested.group(1)) if nested else 2, sequence=seq_indent or 2, offset=seq_offset or 0)
    return y


def load(path: Path) -> tuple[bytes, Any, Any]:
    """(bytes, the YAML, the document) of config.yaml; an empty document for a missing or empty file."""
    raw = path.read_bytes() if path.exists() else b""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; fix it or move it away first") from None
    y = _yaml(text)
    try:
        doc = y.load(text) if text.strip() else None
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path} is not valid YAML ({first}); fix it or move it away first") from None
    if doc is None:
        from ruamel.yaml.comments import CommentedMap

        doc = CommentedMap()
    if not isinstance(doc, dict):
        raise InputError(f"{path} does not hold a YAML mapping")
    return raw, y, doc


def dump(y: Any, doc: Any) -> bytes:
    out = io.StringIO()
    y.dump(doc, out)
    return out.getvalue().encode("utf-8")


def _mapping(doc: Any, key: str, path: Path, created: list[str], name: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if doc.get(key) is None:
        doc[key] = CommentedMap()
        created.append(name)
    if not isinstance(doc[key], dict):
        raise InputError(f"{path}: {name} is not a mapping; fix it first")
    return doc[key]


def enable(doc: Any, path: Path) -> dict[str, Any]:
    """Turn the engine on in ``doc``; what was changed, for uninstall (empty: nothing was)."""
    from ruamel.yaml.comments import CommentedSeq

    created: list[str] = []
    plugins = _mapping(doc, "plugins", path, created, "plugins")
    context = _mapping(doc, "context", path, created, "context")
    engine = context.get("engine")
    if engine not in (None, "", "compressor", NAME):
        raise InputError(
            f"{path}: context.engine is {engine!r}; Hermes runs one context engine and sjc's would replace it "
            f"(set context.engine to {NAME} yourself to use sjc's)"
        )
    change: dict[str, Any] = {}
    enabled = plugins.get("enabled")
    if enabled is None:
        plugins["enabled"] = CommentedSeq()
        created.append("plugins.enabled")
        enabled = plugins["enabled"]
    if not isinstance(enabled, list):
        raise InputError(f"{path}: plugins.enabled is not a list; fix it first")
    if NAME not in enabled:
        enabled.append(NAME)
        change["enabled"] = True
    disabled = plugins.get("disabled")
    if isinstance(disabled, list) and NAME in disabled:
        disabled.remove(NAME)
        change["disabled"] = True
    if engine != NAME:
        context["engine"] = NAME
        change["engine_was"] = engine if "engine" in context and engine is not None else "<none>"
    if change or created:
        change["created"] = created
    return change


def disable(doc: Any, change: dict[str, Any] | None) -> None:
    """Take out of ``doc`` what ``change`` says install put in (without a record: sjc's two settings)."""
    plugins = doc.get("plugins") if isinstance(doc.get("plugins"), dict) else None
    context = doc.get("context") if isinstance(doc.get("context"), dict) else None
    record: dict[str, Any] = change if change is not None else {"enabled": True, "engine_was": "<none>", "created": []}
    if plugins is not None and record.get("enabled") and isinstance(plugins.get("enabled"), list):
        while NAME in plugins["enabled"]:
            plugins["enabled"].remove(NAME)
    if plugins is not None and record.get("disabled") and isinstance(plugins.get("disabled"), list):
        plugins["disabled"].append(NAME)
    if context is not None and "engine_was" in record and context.get("engine") == NAME:
        if record["engine_was"] == "<none>":
            del context["engine"]
        else:
            context["engine"] = record["engine_was"]
    created: list[str] = list(record.get("created") or [])
    if plugins is not None and "plugins.enabled" in created and plugins.get("enabled") == []:
        del plugins["enabled"]
    for key in ("context", "plugins"):
        if key in created and doc.get(key) == {}:
            del doc[key]


def merge(first: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """The record of two installs' changes as one: what the first found before it stays what is put back."""
    out = {**later, **first}
    out["created"] = list(dict.fromkeys([*(first.get("created") or []), *(later.get("created") or [])]))
    return out
