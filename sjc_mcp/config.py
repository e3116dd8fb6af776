"""Configuration: one TOML file, validated once per process into a ``Config`` passed down.

Found at ``--config``, else ``$SJC_CONFIG``, else ``config.toml`` in sjc's config folder
(``$XDG_CONFIG_HOME/sjc``, by default ``~/.config/sjc``; see ``paths``); absent: defaults.
Environment overrides: ``SJC_JUDGE``, ``SJC_THRESHOLD``, ``SJC_MODE``, ``SJC_DECISION_LOG``,
``SJC_DISABLE=1``. Unknown keys are errors, not silently ignored. Every key and default is
documented in ``examples/config.example.toml`` (``sjc config init`` writes it where the config belongs).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from sjc_mcp._record import Field, Record
from sjc_mcp.errors import ConfigError

SourceName = Literal["tool_output", "user_message", "previous_summary"]


class _Table(Record):
    """A table of the configuration. Unknown keys are errors. ``model_validate`` checks a table read from
    TOML here (types, bounds, choices) and takes it as it is; anything it would not take as it is (a
    wrong type, a value out of bounds, a string for a number) goes to a pydantic model of the same
    fields, made on first need (``_pydantic``): its errors are the messages users see, and what it
    accepts by coercion is taken as it gives it."""

    def __init__(self, **data: Any) -> None:
        valid = self.model_validate(data)
        self.__dict__.update(valid.__dict__)

    @classmethod
    def model_validate(cls, obj: Any) -> Any:
        if isinstance(obj, cls):
            return obj
        fast = _checked(cls, obj)
        if fast is not None:
            return fast
        from sjc_mcp import _config_schema

        return _config_schema.validate(cls, obj)


class RetrievalConfig(_Table):
    passage_chars: int = Field(300, ge=50, le=10_000)
    top_k: int = Field(3, ge=1, le=50)
    chunk_chars: int = Field(2000, ge=100, le=100_000)


class LexicalConfig(_Table):
    weights: str | None = Field(None, description="path of a weights.json from `sjc calibrate`")


class RemoteJudgeConfig(_Table):
    base_url: str
    model: str
    api_key_env: str
    connect_timeout_s: float = Field(5.0, gt=0, le=120)
    read_timeout_s: float = Field(60.0, gt=0, le=600)
    total_timeout_s: float = Field(90.0, gt=0, le=1800, description="for one whole boundary, retries included")
    max_retries: int = Field(2, ge=0, le=10)


class JevConfig(RemoteJudgeConfig):
    base_url: str = "https://api.typesafe.ai"
    model: str = "jev-latest"
    api_key_env: str = "TYPESAFE_API_KEY"
    state_budget_tokens: int = Field(32_000, ge=1000, le=1_000_000)


class OpenAIConfig(RemoteJudgeConfig):
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(8, ge=1, le=64)


class AnthropicConfig(RemoteJudgeConfig):
    base_url: str = "https://api.anthropic.com"
    model: str = "claude-haiku-4-5"
    api_key_env: str = "ANTHROPIC_API_KEY"
    max_tokens: int = Field(4096, ge=256, le=64_000)


DEFAULT_PATTERNS = {
    # anchored (\A): the prompt must open the last user message (after Claude Code's optional guard), never
    # a quotation; the three Claude Code prompts are the full and the two partial compactions (2.1.332)
    "claude-code": r"\A(?:CRITICAL: Respond with TEXT ONLY\.(?s:.*?)\n\n)?Your task is to create a detailed summary of "
    r"(?:the conversation so far|the RECENT portion of the conversation|this conversation)",
    "codex": r"\AYou are performing a CONTEXT CHECKPOINT COMPACTION",
    "openclaw": r"(?s)## Decisions.*## Open TODOs.*## Exact identifiers",
    "gemini": r"<state_snapshot>",
}


class ProxyConfig(_Table):
    listen: str = "127.0.0.1:8787"
    upstream: str = Field("", description="origin to forward to; empty: api.anthropic.com or api.openai.com by route")
    judge_budget_s: float = Field(10.0, gt=0, le=600)
    patterns: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_PATTERNS))
    prefilter: bool = False


class ToolsConfig(_Table):
    keep_recent_turns: int = Field(6, ge=0, le=1000)
    judge_chars: int = Field(2000, ge=200, le=100_000, description="each result is cut to this for judging")
    drop_below: float = Field(0.0, ge=0.0, le=1.0)
    truncate_below: float = Field(0.25, ge=0.0, le=1.0)
    margin: float = Field(0.05, ge=0.0, le=0.5)
    truncate_keep_chars: int = Field(400, ge=0, le=100_000)
    min_reduction: float = Field(0.10, ge=0.0, le=1.0, description="below this share saved, change nothing")
    supersede: bool = Field(True, description="stub outputs of calls made again later with the same arguments")


class HookConfig(_Table):
    time_budget_s: float = Field(20.0, gt=0, le=600)


class Config(_Table):
    judge: str = "lexical"
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    margin: float = Field(0.05, ge=0.0, le=0.5)
    mode: Literal["enforce", "shadow"] = "enforce"
    max_prune_share: float = Field(
        0.6, ge=0.0, le=1.0, description="a summary pruning would cut by more than this share of entries is kept whole"
    )
    sources: list[SourceName] = Field(default_factory=lambda: ["tool_output", "user_message", "previous_summary"])
    allow_remote: bool = False
    calibrated_model: str | None = Field(None, description="the model id the threshold was tuned for (audit warns)")
    kill_switch: str | None = Field(None, description="default: `disabled` in sjc's config folder")
    decision_log: str | None = Field(None, description="default: `decisions.jsonl` in sjc's state folder")
    allowed_roots: list[str] = Field(
        default_factory=lambda: [
            "~/.claude/projects",
            os.path.join(os.environ.get("CODEX_HOME") or "~/.codex", "sessions"),  # where Codex keeps rollouts
            "~/.gemini/tmp",
        ]
    )
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig.model_construct)
    lexical: LexicalConfig = Field(default_factory=LexicalConfig.model_construct)
    jev: JevConfig = Field(default_factory=JevConfig.model_construct)
    openai: OpenAIConfig = Field(default_factory=OpenAIConfig.model_construct)
    anthropic: AnthropicConfig = Field(default_factory=AnthropicConfig.model_construct)
    hook: HookConfig = Field(default_factory=HookConfig.model_construct)
    proxy: ProxyConfig = Field(default_factory=ProxyConfig.model_construct)
    tools: ToolsConfig = Field(default_factory=ToolsConfig.model_construct)
    disabled_by_env: bool = Field(False, exclude=True, description="set from SJC_DISABLE=1, never from a file")
    path: str | None = Field(None, exclude=True, description="the file this config was read from")

    @property
    def kill_switch_path(self) -> Path:
        if self.kill_switch is None:
            from sjc_mcp import paths

            return paths.kill_switch()
        return Path(self.kill_switch).expanduser()

    @property
    def decision_log_path(self) -> Path:
        if self.decision_log is None:
            from sjc_mcp import paths

            return paths.decision_log()
        return Path(self.decision_log).expanduser()

    def disabled(self) -> str | None:
        """Why sjc is switched off right now, or None."""
        if self.disabled_by_env:
            return "SJC_DISABLE=1"
        try:
            if self.kill_switch_path.exists():
                return f"kill switch {self.kill_switch_path}"
        except OSError as exc:  # cannot tell whether the switch is set: stay off, the safe side
            return f"kill switch {self.kill_switch_path} cannot be checked ({exc.strerror or exc})"
        return None

    def digest(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


# every table, by the name its field's annotation gives (``retrieval: RetrievalConfig``)
_TABLES: dict[str, type[_Table]] = {
    c.__name__: c for c in list(globals().values()) if isinstance(c, type) and issubclass(c, _Table) and c is not _Table
}
_SOURCE_NAMES = frozenset({"tool_output", "user_message", "previous_summary"})


def _value(note: str, v: Any) -> tuple[bool, Any]:
    """Whether ``v`` is, as it is, a value of the annotation ``note``, and the value pydantic would give."""
    t = type(v)
    if note == "float":
        if t is float or t is int:
            try:
                f = float(v)
            except OverflowError:
                return False, None
            return math.isfinite(f), f
        return False, None
    if note == "int":
        return t is int, v
    if note == "str":
        return t is str, v
    if note == "bool":
        return t is bool, v
    if note == "str | None":
        return v is None or t is str, v
    if note == "list[str]":
        return t is list and all(type(x) is str for x in v), list(v) if t is list else None
    if note == "list[SourceName]":
        ok = t is list and all(type(x) is str and x in _SOURCE_NAMES for x in v)
        return ok, list(v) if ok else None
    if note == "dict[str, str]":
        ok = t is dict and all(type(k) is str and type(x) is str for k, x in v.items())
        return ok, dict(v) if ok else None
    if note.startswith("Literal["):
        return t is str and v in _literal(note), v
    return False, None


def _literal(note: str) -> tuple[str, ...]:
    return tuple(re.findall(r"""['"]([^'"]*)['"]""", note))


def _checked(cls: type[_Table], data: Any) -> Any:
    """``data`` as a ``cls`` when every key is a field and every value is of its type and within its
    bounds as it is; else None (pydantic then explains, or coerces)."""
    if type(data) is not dict:
        return None
    fields, notes = cls.model_fields, cls.annotations
    out: dict[str, Any] = {}
    for k, v in data.items():
        f = fields.get(k)
        if f is None:
            return None
        sub = _TABLES.get(notes[k])
        if sub is not None:
            val = v if isinstance(v, sub) else _checked(sub, v)  # a table given as one is taken as it is
            if val is None:
                return None
        else:
            ok, val = _value(notes[k], v)
            if not ok:
                return None
            if (
                (f.ge is not None and not val >= f.ge)
                or (f.gt is not None and not val > f.gt)
                or (f.le is not None and not val <= f.le)
            ):
                return None
        out[k] = val
    return cls.model_construct(**out)


def _read_toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from exc


def _one_line(exc: Any, where: str) -> ConfigError:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    if err["type"] == "extra_forbidden":
        return ConfigError(f"{where}: unknown key {loc!r}")
    return ConfigError(f"{where}: {loc}: {err['msg']}")


def default_path() -> Path:
    from sjc_mcp import paths

    return paths.config_file()


def load_config(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Config:
    """Read, override from the environment, and validate. Raises ``ConfigError`` with one line."""
    env = dict(os.environ) if env is None else env
    data: dict = {}
    where = "defaults"
    chosen = Path(path) if path else (Path(env["SJC_CONFIG"]) if env.get("SJC_CONFIG") else None)
    if chosen is not None:
        data = _read_toml(chosen.expanduser())
        where = str(chosen)
    elif default_path().is_file():
        chosen = default_path()
        data = _read_toml(chosen)
        where = str(chosen)
    overrides = {
        "SJC_JUDGE": "judge",
        "SJC_THRESHOLD": "threshold",
        "SJC_MODE": "mode",
        "SJC_DECISION_LOG": "decision_log",
    }
    for var, key in overrides.items():
        if env.get(var):
            data[key] = env[var]
            where = f"{where} (with {var})"
    for bad in ("disabled_by_env", "path"):
        if bad in data:
            raise ConfigError(f"{where}: unknown key {bad!r}")
    if not data:
        cfg = Config.model_construct()  # nothing to validate: the defaults are valid by construction
    else:
        cfg = _checked(Config, data)
        if cfg is None:  # something to explain or coerce: pydantic's validation, imported only now
            from pydantic import ValidationError

            from sjc_mcp import _config_schema

            try:
                cfg = _config_schema.validate(Config, data)
            except ValidationError as exc:
                raise _one_line(exc, where) from None
    cfg.disabled_by_env = env.get("SJC_DISABLE", "") not in ("", "0", "false", "no")
    cfg.path = str(chosen) if chosen else None
    return cfg
