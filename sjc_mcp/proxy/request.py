r"""Reading a model request: is it a compaction, whose, and what history does it compact?

A request is a host's compaction only by that host's own request shape, never by text a user merely
quotes: each host module says how it tells its compaction apart (``hosts/<host>.py`` ``recognise``: Claude
Code's prompt opening the last user text, Codex's turn metadata or prompt, a server-side compaction
recognised and never prunable); a ``[proxy] patterns`` entry for a host sjc has no module for is matched
where hosts put their prompts. The history is read by the wire format (``formats/``) and then as the
host means it (``request_boundary``): tool results with the calls they answer, the user's own messages,
the previous summary set apart, injected text and the assistant's prose never sources.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache

from sjc_mcp.formats import Compaction, WireRequest
from sjc_mcp.hosts import READERS
from sjc_mcp.hosts.base import by_pattern, plain_boundary
from sjc_mcp.models import Boundary

__all__ = ["Compaction", "WireRequest", "boundary_of", "recognise", "request_boundary", "session_of"]


@lru_cache(maxsize=8)
def _compiled(patterns: tuple[tuple[str, str], ...]) -> dict[str, re.Pattern[str]]:
    out = {}
    for name, pattern in patterns:
        try:
            out[name] = re.compile(pattern)
        except re.error:
            continue
    return out


def compiled(patterns: dict[str, str]) -> dict[str, re.Pattern[str]]:
    """The ``[proxy] patterns``, compiled once per set (a pattern that does not compile is left out)."""
    return _compiled(tuple(sorted(patterns.items())))


def recognise(req: WireRequest, patterns: dict[str, str]) -> Compaction | None:
    """The compaction this request is, by its host's own request shape, or None."""
    rx = compiled(patterns)
    for name, host in READERS.items():
        own = getattr(host, "recognise", None)
        if own is None:
            continue
        found = own(req, rx.get(name))
        if found is False:  # the host says what this request is, and it is no compaction
            return None
        if found:
            return found
    for name, pattern in rx.items():
        if getattr(READERS.get(name), "recognise", None) is None and (found := by_pattern(req, name, pattern)):
            return found
    return None


def session_of(req: WireRequest, host: str) -> str | None:
    """The host's session id, where its requests carry one."""
    own = getattr(READERS.get(host), "session_of", None)
    return own(req) if own is not None else None


def boundary_of(req: WireRequest, host: str, session: str | None = None) -> str:
    """An id for the compaction: what the host names it by, else a hash of the session and the history
    it compacts (a retry of the same compaction gets the same id)."""
    own = getattr(READERS.get(host), "boundary_id", None)
    named = own(req) if own is not None else None
    if named:
        return str(named)
    items = req.body.get("messages") if isinstance(req.body.get("messages"), list) else req.body.get("input")
    digest = hashlib.sha256(json.dumps([session, items], sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"request:{digest[:16]}"


def request_boundary(req: WireRequest, found: Compaction, patterns: dict[str, str]) -> Boundary:
    """The history the request compacts, as a boundary of ``found.host`` (its summary still to come)."""
    rx = compiled(patterns).get(found.host)
    own = getattr(READERS.get(found.host), "request_boundary", None)
    b: Boundary = own(req, rx) if own is not None else plain_boundary(req, found.host, rx)
    b.session_id = session_of(req, found.host)
    b.boundary_id = boundary_of(req, found.host, b.session_id)
    return b
