"""Judge backends, chosen by name in config (``judge = "lexical"``).

A new backend is one module here with a factory ``make(config) -> Judge``, named in ``_BACKENDS``.
Modules are imported only when chosen, so an unused backend costs nothing at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sjc_mcp.errors import ConfigError

if TYPE_CHECKING:
    from sjc_mcp.config import Config
    from sjc_mcp.judges.base import Judge

_BACKENDS: dict[str, str] = {
    "lexical": "sjc_mcp.judges.lexical",
    "jev": "sjc_mcp.judges.jev",
    "openai": "sjc_mcp.judges.openai",
    "anthropic": "sjc_mcp.judges.anthropic",
}


def names() -> list[str]:
    return sorted(_BACKENDS)


def make_judge(config: Config, name: str | None = None) -> Judge:
    name = name or config.judge
    try:
        module = importlib.import_module(_BACKENDS[name])
    except KeyError:
        raise ConfigError(f"unknown judge {name!r}; choose one of: {', '.join(names())}") from None
    return module.make(config)


__all__ = ["make_judge", "names"]
