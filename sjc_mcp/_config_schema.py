"""The configuration's tables as pydantic models, made from the tables' own fields on first need: what
validates a configuration that ``config`` does not take as it is, so that a bad value is explained
with pydantic's message and a coercible one (``SJC_THRESHOLD=0.3``, a string) is taken as pydantic
takes it. The result is given back as the plain tables ``config`` defines."""

from __future__ import annotations

from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model
from pydantic import Field as PydanticField

from sjc_mcp import config as _config

_MODELS: dict[type, type[BaseModel]] = {}


def model_of(cls: type[_config._Table]) -> type[BaseModel]:
    """The pydantic model of a table: the same field names, types, defaults, bounds and descriptions."""
    made = _MODELS.get(cls)
    if made is not None:
        return made
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {}
    for name, f in cls.model_fields.items():
        kind = hints[name]
        kw: dict[str, Any] = {k: getattr(f, k) for k in ("ge", "gt", "le") if getattr(f, k) is not None}
        if f.description:
            kw["description"] = f.description
        if f.exclude:
            kw["exclude"] = True
        if isinstance(kind, type) and issubclass(kind, _config._Table):
            kind = model_of(kind)
            kw["default_factory"] = kind.model_construct
        elif f.default_factory is not None:
            kw["default_factory"] = f.default_factory
        elif not f.is_required():
            kw["default"] = f.default
        fields[name] = (kind, PydanticField(**kw))
    made = create_model(cls.__name__, __config__=ConfigDict(extra="forbid"), **fields)
    _MODELS[cls] = made
    return made


def _plain(cls: type[_config._Table], model: BaseModel) -> Any:
    data: dict[str, Any] = {}
    for name in cls.model_fields:
        value = getattr(model, name)
        sub = _config._TABLES.get(cls.annotations[name])
        if sub is not None and isinstance(value, BaseModel):
            value = _plain(sub, value)
        data[name] = value
    return cls.model_construct(_fields_set=set(model.model_fields_set), **data)


def validate(cls: type[_config._Table], data: Any) -> Any:
    """``data`` validated by pydantic (raises its ``ValidationError``), as a plain ``cls``."""
    return _plain(cls, model_of(cls).model_validate(data))
