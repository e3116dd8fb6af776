"""Who a tool call is for: the name its decision log is kept under.

Over HTTP the user comes with the request, in the ``X-SJC-User`` header (``sjc_mcp.server.http`` sets it
from the caller's token, or passes the client's own on, sanitised); on stdio it is this machine's login name.
"""

from __future__ import annotations

import os
import re

USER_HEADER = "x-sjc-user"
ANONYMOUS = "anonymous"


def safe_user(name: str | None) -> str:
    """A user name fit to be a file name: letters, digits, ``.``, ``_``, ``-`` (anything else becomes ``_``),
    no leading dot, at most 64 characters; empty or absent: ``anonymous``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", (name or "").strip())[:64].lstrip(".")
    return cleaned or ANONYMOUS


def local_user() -> str:
    """This machine's login name (the uid where the uid has no name)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())
