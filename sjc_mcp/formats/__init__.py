"""Wire formats: one reading of each format a host speaks, used by the host readers and the proxy alike.

A wire module (``anthropic``, ``openai_chat``, ``openai_responses``, ``gemini``; a host with its own API or a
history serialised into one prompt adds its own) says, for its format:

- ``NAME`` and ``matches(path)``: which request paths speak it (the proxy routes by path);
- ``history(body)``: the request's conversation as ``Item``s, oldest first, and where each sits in the
  body (a locator, for ``set_output`` / ``drop``, the prefilter's edits);
- ``system_texts(body)``, ``last_user_text(body)``: where hosts put their compaction prompts;
- ``answer_text(raw, stream)`` / ``replace_answer(raw, stream, text)``: the text of an answer, streamed or
  not, and the same answer with another text in its place, every other byte as the upstream sent it.

What a message *means* for a host (a user text the host injected, a previous summary, a notification)
is the host's to say (``hosts/<host>.py``): a format only reads the structure.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

Locator = tuple[Any, ...]  # where an item sits in a request body (its wire format's own indices)

# each wire format's name (as the decision log records it) and module, in the order the proxy tries
# their paths
WIRES = {"responses": "openai_responses", "anthropic": "anthropic", "chat": "openai_chat", "gemini": "gemini"}


class FormatError(ValueError):
    """An answer or request is not in the shape its format expects."""


@dataclass(slots=True)
class WireRequest:
    """A model request as the proxy received it: its wire format, path, parsed JSON body and headers."""

    wire: str
    path: str
    body: dict[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class RawRequest:
    """A model request before its body is decoded: its path, wire format, headers (lower-case names) and
    body as the pieces it arrived in. ``holds`` says whether byte strings occur in the body, across the
    pieces too: how the proxy tells a request that cannot be a compaction from one that might
    (``hosts/base.py``). The body may still be arriving (``chunks`` grows): each piece is searched once
    for a marker, however often it is asked about, so the proxy asks as the pieces come."""

    path: str
    wire: str
    headers: Mapping[str, str]
    chunks: Sequence[bytes]
    # per marker: the pieces searched so far, the body's last len(marker) - 1 bytes by then, found
    _searched: dict[bytes, tuple[int, bytes, bool]] = field(default_factory=dict, repr=False)

    def holds(self, *markers: bytes) -> bool:
        """Whether any of ``markers`` occurs in the body (as far as it has arrived)."""
        return any(self._holds(marker) for marker in markers)

    def _holds(self, marker: bytes) -> bool:
        done, tail, found = self._searched.get(marker, (0, b"", False))
        if found or done == len(self.chunks):
            return found
        k = len(marker) - 1  # a marker across two pieces starts in the last k bytes before the second
        for chunk in self.chunks[done:]:
            if marker in chunk or (k and tail and marker in tail + chunk[:k]):
                found = True
                break
            if k:
                tail = (tail + chunk[-k:])[-k:]
        self._searched[marker] = (len(self.chunks), tail, found)
        return found


@dataclass(frozen=True, slots=True)
class Compaction:
    """A model request recognised as a host's compaction: whose, how it was told apart, and whether the
    provider compacts on its server (nothing there to prune)."""

    host: str
    how: str
    server_side: bool = False


def module(name: str) -> ModuleType:
    """The module of wire format ``name``."""
    return importlib.import_module(f"sjc_mcp.formats.{WIRES[name]}")


def wire_of(path: str) -> str | None:
    """The wire format a request path speaks, or None (the proxy passes it through untouched)."""
    for name in WIRES:
        if module(name).matches(path):
            return name
    return None
