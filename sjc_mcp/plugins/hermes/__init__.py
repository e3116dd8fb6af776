"""sjc's plugin for Hermes Agent: the context engine ``sjc`` (checked with hermes-agent 0.19.0).

``sjc install hermes`` copies this folder to ``$HERMES_HOME/plugins/sjc/`` (``~/.hermes`` by default),
writes ``sjc.json`` beside it (the command that runs sjc's side, in sjc's own interpreter) and sets in
Hermes' ``config.yaml``::

    plugins:
      enabled: [sjc]
    context:
      engine: sjc

Hermes imports this folder as a package (``hermes_plugins.sjc``) and calls ``register(ctx)``; with
``context.engine: sjc`` every agent then compacts with a copy of the engine registered here instead of
Hermes' built-in one (``engine``). Nothing here is imported by sjc itself: it runs in Hermes' interpreter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def register(ctx: Any) -> None:
    from .engine import build

    engine = build(Path(__file__).resolve().parent)
    if engine is not None:
        ctx.register_context_engine(engine)
