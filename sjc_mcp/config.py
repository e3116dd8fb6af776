"""Configuration: one TOML file, validated once per process into a ``Config`` passed down.

Found at ``--config``, else ``$SJC_CONFIG``, else ``config.toml`` in sjc's config folder
(``$XDG_CONFIG_HOME/sjc``, by default ``~/.config/sjc``; see ``paths``); absent: defaults.
Environment overrides: ``SJC_JUDGE``, ``SJC_THRESHOLD``, ``SJC_MODE``, ``SJC_DECISION_LOG``,
``SJC_DISABLE=1``. Unknown keys are errors, not silently ignored. Every key and default is
documented in ``config.example.toml`` at the top of the repository (``sjc config init`` writes it where
the config belongs).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from sjc_mcp.errors import ConfigError

SourceName = Literal["tool_output", "user_message", "previous_summary"]
# bounds of numbers in the config file (``validate`` checks them)
Share = Annotated[float, Meta(ge=0.0, le=1.0)]


@dataclass(slots=True, kw_only=True)
class RetrievalConfig:
    passage_chars: Annotated[int, Meta(ge=50, le=10_000)] = 300
    top_k: Annotated[int, Meta(ge=1, le=50)] = 3
    chunk_chars: Annotated[int, Meta(ge=100, le=100_000)] = 2000


@dataclass(slots=True, kw_only=True)
class LexicalConfig:
    weights: str | None = None  # path of a weights.json from `sjc calibrate`


@dataclass(slots=True, kw_only=True)
class RemoteJudgeConfig:
    base_url: str
    model: str
    api_key_env: str
    connect_timeout_s: Annotated[float, Meta(gt=0, le=120)] = 5.0
    read_timeout_s: Annotated[float, Meta(gt=0, le=600)] = 60.0
    total_timeout_s: Annotated[float, Meta(gt=0, le=1800)] = 90.0  # one whole boundary, retries included
    max_retries: Annotated[int, Meta(ge=0, le=10)] = 2


@dataclass(slots=True, kw_only=True)
class JevConfig(RemoteJudgeConfig):
    base_url: str = "https://api.typesafe.ai"
    model: str = "jev-latest"
    api_key_env: str = "TYPESAFE_API_KEY"
    state_budget_tokens: Annotated[int, Meta(ge=1000, le=1_000_000)] = 32_000


@dataclass(slots=True, kw_only=True)
class OpenAIConfig(RemoteJudgeConfig):
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: Annotated[int, Meta(ge=1, le=64)] = 8


@dataclass(slots=True, kw_only=True)
class AnthropicConfig(RemoteJudgeConfig):
    base_url: str = "https://api.anthropic.com"
    model: str = "claude-haiku-4-5"
    api_key_env: str = "ANTHROPIC_API_KEY"
    max_tokens: Annotated[int, Meta(ge=256, le=64_000)] = 4096


DEFAULT_PATTERNS = {
    # anchored (\A): the prompt must open the last user message (after Claude Code's optional guard), never
    # a quotation; the three Claude Code prompts are the full and the two partial compactions (2.1.332)
    "claude-code": r"\A(?:CRITICAL: Respond with TEXT ONLY\.(?s:.*?)\n\n)?Your task is to create a detailed summary of "
    r"(?:the conversation so far|the RECENT portion of the conversation|this conversation)",
    "codex": r"\AYou are performing a CONTEXT CHECKPOINT COMPACTION",
    # Gemini CLI (0.61.0): the opening of its compression system instruction, on both passes (the session-title
    # request quotes the snapshot in a user message: it has no system instruction)
    "gemini": r"\AYou are a specialized system component responsible for distilling chat history into a structured "
    r"XML <state_snapshot>",
}


@dataclass(slots=True, kw_only=True)
class ProxyConfig:
    listen: str = "127.0.0.1:8787"
    upstream: str = ""  # origin to forward to; empty: the provider's API by route (Anthropic, OpenAI, Gemini)
    judge_budget_s: Annotated[float, Meta(gt=0, le=600)] = 10.0
    patterns: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PATTERNS))
    prefilter: bool = False


@dataclass(slots=True, kw_only=True)
class ToolsConfig:
    keep_recent_turns: Annotated[int, Meta(ge=0, le=1000)] = 6
    judge_chars: Annotated[int, Meta(ge=200, le=100_000)] = 2000  # each result is cut to this for judging
    drop_below: Share = 0.0
    truncate_below: Share = 0.25
    margin: Annotated[float, Meta(ge=0.0, le=0.5)] = 0.05
    truncate_keep_chars: Annotated[int, Meta(ge=0, le=100_000)] = 400
    min_reduction: Share = 0.10  # below this share saved, change nothing
    supersede: bool = True  # stub outputs of calls made again later with the same arguments


@dataclass(slots=True, kw_only=True)
class HookConfig:
    time_budget_s: Annotated[float, Meta(gt=0, le=600)] = 20.0


def _default_roots() -> list[str]:
    return [
        "~/.claude/projects",
        os.path.join(os.environ.get("CODEX_HOME") or "~/.codex", "sessions"),  # where Codex keeps rollouts
        os.path.join(os.environ.get("GEMINI_CLI_HOME") or "~", ".gemini", "tmp"),  # Gemini CLI's chat files
        os.environ.get("HERMES_HOME") or "~/.hermes",  # Hermes Agent's state.db
        os.environ.get("OPENCLAW_STATE_DIR") or "~/.openclaw",  # OpenClaw's state folder: its transcript databases
    ]


@dataclass(slots=True, kw_only=True)
class Config:
    judge: str = "lexical"
    threshold: Share = 0.5
    margin: Annotated[float, Meta(ge=0.0, le=0.5)] = 0.05
    mode: Literal["enforce", "shadow"] = "enforce"
    max_prune_share: Share = 0.6  # a summary pruning would cut by more than this share of entries is kept whole
    sources: list[SourceName] = field(default_factory=lambda: ["tool_output", "user_message", "previous_summary"])
    allow_remote: bool = False
    calibrated_model: str | None = None  # the model id the threshold was tuned for (audit warns)
    kill_switch: str | None = None  # default: `disabled` in sjc's config folder
    decision_log: str | None = None  # default: `decisions.jsonl` in sjc's state folder
    allowed_roots: list[str] = field(default_factory=_default_roots)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    lexical: LexicalConfig = field(default_factory=LexicalConfig)
    jev: JevConfig = field(default_factory=JevConfig)
    openai: OpenAIConfig = field(default_factory=OpenAIConfig)
    anthropic: AnthropicConfig = field(default_factory=AnthropicConfig)
    hook: HookConfig = field(default_factory=HookConfig)
    proxy: ProxyConfig = field(default_factory=ProxyConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    # not settable from a file: where the config came from and what it set
    disabled_by_env: bool = field(default=False, init=False)  # SJC_DISABLE=1
    path: str | None = field(default=None, init=False)  # the file this config was read from
    explicit: frozenset[str] = field(default=frozenset(), init=False)  # top-level keys the file or env set

    @classmethod
    def of(cls, **data: Any) -> Config:
        """A config from the keys a config file may hold (tables as dicts or as their dataclasses), validated
        as a file is: ``Config.of(threshold=0.3, openai={"base_url": ...})``."""
        from sjc_mcp.validate import convert

        cfg = convert(
            {k: asdict(v) if is_dataclass(v) and not isinstance(v, type) else v for k, v in data.items()},
            cls,
            error=ConfigError,
        )
        cfg.explicit = frozenset(data)
        return cfg

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

    def settings(self) -> dict[str, Any]:
        """The settings as plain data (what a config file could say), without where they came from."""
        data = asdict(self)
        for name in ("disabled_by_env", "path", "explicit"):
            data.pop(name)
        return data

    def digest(self) -> str:
        blob = json.dumps(self.settings(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def replace(self, **changes: Any) -> Config:
        """A copy with ``changes`` (a table is replaced whole: pass a changed copy of it)."""
        new = replace(self, **changes)
        new.disabled_by_env, new.path, new.explicit = self.disabled_by_env, self.path, self.explicit
        return new


def _read_toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from sjc_mcp.regular_file import NotRegular, read_regular

    try:
        data = read_regular(path)  # a FIFO in its place must not hang every command
        return tomllib.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except NotRegular:
        raise ConfigError(f"config {path} is not a regular file (a folder, FIFO or device)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path} is not UTF-8 text (at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from exc


def _exists(path: Path) -> bool:
    """Whether the default config file is there; one that cannot be checked (a folder on the way without
    search permission) is an error, not a silent fall back to the defaults."""
    try:
        return path.is_file()
    except OSError as exc:
        raise ConfigError(f"cannot check for a config file at {path}: {exc.strerror or exc}") from None


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
    elif _exists(default_path()):
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
    if not data:
        cfg = Config()  # nothing to validate: the defaults are valid by construction
    else:
        from sjc_mcp.validate import convert

        cfg = convert(data, Config, where=where, error=ConfigError)
    cfg.disabled_by_env = env.get("SJC_DISABLE", "") not in ("", "0", "false", "no")
    cfg.path = str(chosen) if chosen else None
    cfg.explicit = frozenset(data)
    return cfg
