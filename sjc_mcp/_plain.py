"""``plain``: the part of ``dataclasses.dataclass`` the package's small record classes use (an ``__init__``
taking the annotated fields in order, defaults and ``field(default_factory=...)``, ``__repr__``, ``__eq__``),
without importing ``dataclasses`` and ``inspect``: every hook and CLI process paid about 15 ms for them."""

from __future__ import annotations

from typing import Any

_MISSING: Any = object()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Any) -> None:
        self.make = make


def field(*, default_factory: Any) -> Any:
    return _Factory(default_factory)


def plain(cls: Any) -> Any:
    names: list[str] = []
    for name, note in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - own annotations only
        if not str(note).startswith(("ClassVar", "typing.ClassVar")):
            names.append(name)
    params, body, ns = [], [], {"_MISSING": _MISSING}
    for n in names:
        d = cls.__dict__.get(n, _MISSING)
        if isinstance(d, _Factory):
            ns[f"_f_{n}"] = d.make
            params.append(f"{n}=_MISSING")
            body.append(f"    self.{n} = _f_{n}() if {n} is _MISSING else {n}")
            delattr(cls, n)
        elif d is not _MISSING:
            ns[f"_d_{n}"] = d
            params.append(f"{n}=_d_{n}")
            body.append(f"    self.{n} = {n}")
        else:
            params.append(n)
            body.append(f"    self.{n} = {n}")
    exec(f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass"), ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    fields = tuple(names)

    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in fields) + ")"

    def __eq__(self: Any, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in fields)

    cls.__init__ = init
    cls.__repr__ = __repr__
    cls.__eq__ = __eq__
    cls.__hash__ = None
    cls.__match_args__ = fields
    return cls
