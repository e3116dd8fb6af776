"""What every host module shares.

A host module (``hosts/<host>.py``) says everything sjc needs to know about that host's data:

- its transcripts: ``looks_like(record)``, ``read_boundary(path, index)``, ``boundary_count(path)``;
- its compaction requests, for the proxy (optional): ``recognise(request, pattern)`` (a ``Compaction``,
  None, or False for "certainly not a compaction, look no further"), ``request_boundary(request,
  pattern)`` (the history in the request as a ``Boundary``: span, previous summary) and
  ``session_of(request)``. ``pattern`` is the host's ``[proxy] patterns`` entry, compiled (None when
  unset). Hosts without these are recognised by their pattern alone (``by_pattern``) and their request
  read plainly (``plain_boundary``).
- which requests can be its compaction at all, told from the raw bytes (optional; every request through
  the proxy is asked, and almost none is a compaction, so none is decoded unless one host says it might
  be): ``MARKERS``, byte strings of which every request its ``recognise`` accepts (with its default
  ``[proxy] patterns`` entry, if it uses one) holds at least one, e.g. the fixed words of its compaction
  prompt. They are matched in the undecoded JSON body: take plain ASCII words, without ``"``, ``\\``,
  ``/``, ``<``, ``>``, ``&`` or ``'`` (some JSON encoders escape those). A host told apart by more than
  its body (a path, a header) defines ``screen(raw: RawRequest) -> bool`` instead: False only when
  ``recognise`` would certainly not accept it. A host with ``recognise`` and neither of these has every
  request on a wire format decoded and handed to it (correct, only slower); see ``proxy/screen.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sjc_mcp.formats import Compaction, WireRequest, module
from sjc_mcp.formats._parts import str_or_none
from sjc_mcp.models import PLANNING_TOOLS, Boundary, Item, Role

__all__ = [
    "PLANNING_TOOLS",
    "Boundary",
    "Item",
    "Role",
    "by_pattern",
    "choose",
    "plain_boundary",
    "prompt_places",
    "str_or_none",
]


def choose(path: object, count: int, index: int | None) -> int:
    """Compaction ``index`` of ``count`` (newest when None; negative counts from the end), or a clear error."""
    from sjc_mcp.errors import TranscriptError

    if count == 0:
        raise TranscriptError(f"{path}: no compaction in this transcript")
    i = count - 1 if index is None else index
    if not -count <= i < count:
        raise TranscriptError(f"{path}: boundary {index} does not exist; it has {count} (0 to {count - 1})")
    return i % count


def prompt_places(req: WireRequest) -> list[tuple[str, str]]:
    """Where hosts put a compaction prompt: the last text of the last user message, the system prompt."""
    wire = module(req.wire)
    return [("last user message", wire.last_user_text(req.body))] + [
        ("system prompt", s) for s in wire.system_texts(req.body)
    ]


def by_pattern(req: WireRequest, host: str, pattern: re.Pattern[str] | None) -> Compaction | None:
    """The request is ``host``'s compaction when its pattern matches where hosts put their prompts
    (from the text's start, after blank space: an anchored pattern means the prompt opens the text)."""
    if pattern is None:
        return None
    for where, text in prompt_places(req):
        if text and pattern.search(text.lstrip()):
            return Compaction(host, where)
    return None


def plain_boundary(
    req: WireRequest,
    host: str,
    pattern: re.Pattern[str] | None,
    user_text: Callable[[str], Item | str | None] = lambda text: Item(role="user", content=text),
) -> Boundary:
    """The history in a request as a boundary: its items in order, the compaction prompt itself left
    out, each user text as ``user_text`` reads it (an ``Item``, None to leave it out, or a string: the
    previous summary, when the host carries it as a user message)."""
    items, _ = module(req.wire).history(req.body)
    span: list[Item] = []
    previous: str | None = None
    for it in items:
        if it.role == "user":
            if not it.content.strip() or (pattern is not None and pattern.search(it.content.lstrip())):
                continue
            found = user_text(it.content)
            if isinstance(found, str):
                previous = found
                continue
            if found is None:
                continue
            it = found
        span.append(it)
    return Boundary(host=host, index=0, summary="", previous_summary=previous, span=span)
