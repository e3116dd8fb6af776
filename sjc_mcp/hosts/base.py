"""The one model every host reader produces: ordered items and compaction boundaries."""

from __future__ import annotations

from sjc_mcp.models import PLANNING_TOOLS, Boundary, Item, Role

__all__ = ["PLANNING_TOOLS", "Boundary", "Item", "Role", "choose"]


def choose(path: object, count: int, index: int | None) -> int:
    """Compaction ``index`` of ``count`` (newest when None; negative counts from the end), or a clear error."""
    from sjc_mcp.errors import TranscriptError

    if count == 0:
        raise TranscriptError(f"{path}: no compaction in this transcript")
    i = count - 1 if index is None else index
    if not -count <= i < count:
        raise TranscriptError(f"{path}: boundary {index} does not exist; it has {count} (0 to {count - 1})")
    return i % count
