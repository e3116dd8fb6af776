"""Validating what comes from outside into the package's dataclasses: one declarative validator.

The config file, evidence items, labelled case files and decision-log records arrive as JSON or TOML;
``convert`` takes such data into the dataclass it must be, with the field types (``Literal`` choices,
``Annotated[..., Meta(ge=..., le=...)]`` bounds) as the only rules. It refuses a key that is no field
(anywhere in the nesting: a typo is never silently ignored), coerces only what a text form would give
(``"0.3"`` for a float: environment overrides are text) and says what is wrong in one line,
``where: place: what`` (``config.toml: retrieval.top_k: expected `int` >= 1``). The work is
``msgspec.convert``; this module adds the unknown-key check and the one-line message.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, get_type_hints

from sjc_mcp.errors import InputError, SJCError

T = TypeVar("T")

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls, include_extras=True)
    return hints


def _dataclasses_in(hint: Any) -> list[type]:
    """The dataclasses a type hint admits (through ``Optional``/unions and ``Annotated``)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _dataclasses_in(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [c for a in typing.get_args(hint) for c in _dataclasses_in(a)]
    return [hint] if isinstance(hint, type) and dataclasses.is_dataclass(hint) else []


def unknown_key(data: Any, into: Any, at: str = "") -> str | None:
    """The first key of ``data`` (dotted, with list positions) that ``into`` has no field for, or None."""
    origin = typing.get_origin(into)
    if origin is typing.Annotated:
        return unknown_key(data, typing.get_args(into)[0], at)
    if origin is list and isinstance(data, list):
        (item,) = typing.get_args(into) or (Any,)
        for i, v in enumerate(data):
            found = unknown_key(v, item, f"{at}[{i}]")
            if found:
                return found
        return None
    if origin is dict and isinstance(data, dict):
        args = typing.get_args(into)
        for k, v in data.items():
            found = unknown_key(v, args[1] if len(args) == 2 else Any, f"{at}.{k}" if at else str(k))
            if found:
                return found
        return None
    classes = _dataclasses_in(into)
    if not classes or not isinstance(data, dict):
        return None
    cls = classes[0]
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    for k, v in data.items():
        where = f"{at}.{k}" if at else str(k)
        if k not in names:
            return where
        found = unknown_key(v, hints[k], where)
        if found:
            return found
    return None


def _one_line(message: str) -> str:
    """msgspec's ``Expected `int` >= 1 - at `$.retrieval.top_k``` as ``retrieval.top_k: expected `int` >= 1``."""
    text, sep, loc = message.rpartition(" - at `$")
    if not sep:
        return message[:1].lower() + message[1:]
    loc = loc.rstrip("`").lstrip(".")
    return f"{loc}: {text[:1].lower()}{text[1:]}" if loc else text[:1].lower() + text[1:]


def convert(data: Any, into: type[T], *, where: str = "", error: type[SJCError] = InputError) -> T:
    """``data`` as an ``into``, or ``error`` with one line (``where: place: what``)."""
    import msgspec

    prefix = f"{where}: " if where else ""
    bad = unknown_key(data, into)
    if bad is not None:
        raise error(f"{prefix}unknown key {bad!r}")
    try:
        return msgspec.convert(data, into, strict=False)
    except msgspec.ValidationError as exc:
        raise error(prefix + _one_line(str(exc))) from None
