"""Plain records: the small part of pydantic's model API the package uses, without importing pydantic.

Importing pydantic and building its validators for the package's models took about 140 ms, more than a
hook event's whole budget; every process paid it, though the records are built by the package's own
code from values it already checked. A ``Record`` declares its fields the same way (annotations,
defaults, ``Field(...)`` with ``default_factory``, ``description``, ``exclude``) and answers the same
calls: ``model_construct``, ``model_validate`` (no coercion: a dict's values are taken as they are),
``model_dump`` (``mode``, ``include``, ``exclude``, ``exclude_none``), ``model_copy`` (``update``,
``deep``), ``model_fields``, ``model_fields_set``. Where input from outside must be validated (the
configuration file, evidence items), the caller checks it and leaves anything unusual to pydantic,
imported only then, so error messages stay pydantic's. A pydantic model may still hold a record in a
field: the record tells pydantic how to take and dump it (``__get_pydantic_core_schema__``).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, ClassVar

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<required>"})()


class FieldInfo:
    """One field: its default (or the factory making it), description, whether dumps leave it out, and
    bounds (``ge``, ``gt``, ``le``) the configuration's own check reads."""

    __slots__ = ("default", "default_factory", "description", "exclude", "ge", "gt", "le")

    def __init__(
        self,
        default: Any = _MISSING,
        *,
        default_factory: Any = None,
        description: str | None = None,
        exclude: bool = False,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.description = description
        self.exclude = exclude
        self.ge, self.gt, self.le = ge, gt, le

    def is_required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def get_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default

    def __repr__(self) -> str:
        return f"FieldInfo(default={self.default!r}, exclude={self.exclude})"


def Field(default: Any = _MISSING, **kwargs: Any) -> Any:
    return FieldInfo(default, **kwargs)


def _dump(value: Any, mode: str, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(mode=mode, exclude_none=exclude_none)
    if isinstance(value, list):
        return [_dump(v, mode, exclude_none) for v in value]
    if isinstance(value, tuple):
        return [_dump(v, mode, exclude_none) for v in value] if mode == "json" else tuple(value)
    if isinstance(value, dict):
        return {k: _dump(v, mode, exclude_none) for k, v in value.items()}
    if mode == "json" and isinstance(value, PurePath):
        return str(value)
    return value


class Record:
    """A record with declared fields; keyword arguments only, as pydantic's models."""

    model_fields: ClassVar[dict[str, FieldInfo]] = {}
    annotations: ClassVar[dict[str, str]] = {}
    # worked out once per class from ``model_fields``: plain defaults, fields made by a factory, required fields
    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[tuple[tuple[str, Any], ...]] = ()
    _required: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, FieldInfo] = dict(cls.model_fields)  # a parent's fields keep their place
        notes: dict[str, str] = dict(cls.annotations)
        for name, note in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - own annotations only
            text = note if isinstance(note, str) else getattr(note, "__name__", repr(note))
            if text.startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, _MISSING)
            fields[name] = value if isinstance(value, FieldInfo) else FieldInfo(value)
            notes[name] = text
            if name in cls.__dict__:
                delattr(cls, name)
        cls.model_fields = fields
        cls.annotations = notes
        cls._defaults = {
            n: f.default for n, f in fields.items() if f.default_factory is None and f.default is not _MISSING
        }
        cls._factories = tuple((n, f.default_factory) for n, f in fields.items() if f.default_factory is not None)
        cls._required = frozenset(n for n, f in fields.items() if f.is_required())

    def __init__(self, **data: Any) -> None:
        self._fill(data)

    def _fill(self, data: dict[str, Any]) -> None:
        d, fields = self.__dict__, self.model_fields
        if not data.keys() <= fields.keys():  # a key that is no field is left out
            data = {k: v for k, v in data.items() if k in fields}
        if not self._required <= data.keys():
            name = next(n for n in fields if n in self._required and n not in data)
            raise TypeError(f"{type(self).__name__}: field {name!r} is required")
        if len(data) < len(fields):
            d.update(self._defaults)
            for name, make in self._factories:
                if name not in data:
                    d[name] = make()
        d.update(data)
        d["_fields_set"] = set(data)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__[name] = value
        if name in self.model_fields:
            self.__dict__["_fields_set"].add(name)

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **data: Any) -> Any:
        obj = object.__new__(cls)
        obj._fill(data)
        if _fields_set is not None:
            obj.__dict__["_fields_set"] = set(_fields_set)
        return obj

    @classmethod
    def model_validate(cls, obj: Any) -> Any:
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, dict):
            return cls(**obj)
        raise TypeError(f"{cls.__name__}: expected a mapping, got {type(obj).__name__}")

    @property
    def model_fields_set(self) -> set[str]:
        return self.__dict__["_fields_set"]

    def model_dump(
        self,
        *,
        mode: str = "python",
        include: set[str] | None = None,
        exclude: set[str] | None = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        d = self.__dict__
        for name, f in self.model_fields.items():
            if f.exclude or (include is not None and name not in include) or (exclude is not None and name in exclude):
                continue
            v = d[name]
            if exclude_none and v is None:
                continue
            out[name] = _dump(v, mode, exclude_none)
        return out

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        import copy  # only here: a command or hook that copies no record never imports it

        new = copy.deepcopy(self) if deep else copy.copy(self)
        new.__dict__["_fields_set"] = set(self.__dict__["_fields_set"])
        if update:
            for k, v in update.items():
                setattr(new, k, v)
        return new

    def __copy__(self) -> Any:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        a, b = self.__dict__, other.__dict__  # type: ignore[attr-defined]
        return all(a[n] == b[n] for n in self.model_fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={self.__dict__[n]!r}" for n in self.model_fields)
        return f"{type(self).__name__}({body})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """How a pydantic model takes a record in one of its fields (as it is, or from a dict of its
        fields) and dumps it (as ``model_dump`` does)."""
        from pydantic_core import core_schema

        def take(value: Any) -> Any:
            if isinstance(value, cls):
                return value
            if isinstance(value, dict):
                return cls(**value)
            raise ValueError(f"expected {cls.__name__} or a dict of its fields")

        def dump(value: Any, info: Any) -> Any:
            return value.model_dump(mode=info.mode, exclude_none=info.exclude_none)

        return core_schema.no_info_plain_validator_function(
            take, serialization=core_schema.plain_serializer_function_ser_schema(dump, info_arg=True)
        )
