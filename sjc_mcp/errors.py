"""The one exception tree of sjc-mcp.

    SJCError                 root: every error the library raises on purpose
    ├── InputError           bad input from the caller (summary, evidence, arguments); CLI exit 2
    │   └── TranscriptError  a transcript that cannot be read or has no such boundary
    ├── ConfigError          a config file or environment override that does not validate
    └── JudgeError           a judge backend failed as a whole (never raised past the pipeline:
                             the pipeline turns it into unjudged entries and a logged error)

Errors from lower layers are converted at the boundary with ``raise ... from exc``.
Messages are one line and say what to fix.
"""

from __future__ import annotations


class SJCError(Exception):
    """Root of every error sjc-mcp raises on purpose."""


class InputError(SJCError):
    """The caller's input is not usable (too large, malformed, missing)."""


class TranscriptError(InputError):
    """A host transcript could not be read, or has no compaction boundary asked for."""


class ConfigError(SJCError):
    """A configuration file or override does not validate."""


class JudgeError(SJCError):
    """A judge backend could not score a request."""


def first_error(exc: Exception) -> str:
    """One line for a validation error: the first problem, with where it is (``loc: message``)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        err = errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        return f"{loc}: {err['msg']}" if loc else err["msg"]
    return str(exc)
