"""Who a tool call is for: the name its decision log is kept under.

Over HTTP the user comes with the request, in the ``X-SJC-User`` header, which ``sjc_mcp.server.http`` sets
(whatever the client sent in it is replaced) to the caller's ``user_id``: the user's name made safe, a dash
and 12 hex digits of a hash of the caller's token (``--tokens``), or else of the name the client gave, as it
gave it. Two tokens, or two names that clean up alike (``team/carol`` and ``team_carol``), never share a log.
On stdio it is this machine's login name.
"""

from __future__ import annotations

import hashlib
import os
import re

USER_HEADER = "x-sjc-user"
ANONYMOUS = "anonymous"
ID_DIGITS = 12
_USER_ID = re.compile(rf"[A-Za-z0-9_-][A-Za-z0-9._-]{{0,63}}-[0-9a-f]{{{ID_DIGITS}}}")


def safe_user(name: str | None) -> str:
    """A user name fit to be a file name: letters, digits, ``.``, ``_``, ``-`` (anything else becomes ``_``),
    no leading dot, at most 64 characters; empty or absent: ``anonymous``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", (name or "").strip())[:64].lstrip(".")
    return cleaned or ANONYMOUS


def user_id(name: str | None, *, token: bytes | None = None, sent: bytes | None = None) -> str:
    """A remote caller's log name: ``safe_user(name)-<12 hex digits>``. The digits hash the caller's own
    ``token`` when it names the user (one log per token, whatever the names), else the user name as ``sent``
    in the header (one log per name as given; none sent hashes as an empty name). Tokens and names are
    hashed apart, so a token's log is never a header name's."""
    if token is not None:
        digest = hashlib.sha256(b"sjc-mcp token\0" + token)
    else:
        digest = hashlib.sha256(b"sjc-mcp user\0" + (sent or b""))
    return f"{safe_user(name)}-{digest.hexdigest()[:ID_DIGITS]}"


def is_user_id(value: str) -> bool:
    """Whether ``value`` has the shape of ``user_id``'s answer (a safe file name)."""
    return _USER_ID.fullmatch(value) is not None


def local_user() -> str:
    """This machine's login name (the uid where the uid has no name)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())
