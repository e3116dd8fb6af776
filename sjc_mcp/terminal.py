"""Text from outside (a session id, an entry, a quote, a tool name, a header) as it may be printed on a
terminal: every control character made visible, so nothing read from a request, a transcript or the log
can forge a line, move the cursor, retitle the window or restyle what follows.

Escaped: C0 controls (tab, line feed and carriage return included), DEL, C1 controls (``\\x9b`` opens an
escape sequence on some terminals as ESC ``[`` does), the Unicode line and paragraph separators, the
bidirectional marks and overrides (they reorder what is shown), and lone surrogates (which no terminal
encoding can write). ``\\x1b`` becomes the four characters ``\\x1b``; anything above U+00FF ``\\uXXXX``.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


_CONTROL_BUT_LINES = re.compile(_CONTROL.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))


def clean(x: Any, keep_lines: bool = False) -> str:
    """``x`` as text with every control character made visible (None is ""); with ``keep_lines``, line
    feeds and tabs stay (text shown whole, in a ``<pre>``)."""
    s = "" if x is None else str(x)
    return (_CONTROL_BUT_LINES if keep_lines else _CONTROL).sub(_visible, s)
