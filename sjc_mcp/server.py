"""The MCP server ``sjc-mcp`` (stdio): tools ``judge_summary``, ``prune_summary``, ``judge_tool_results`` and
``prune_tool_results`` over the library.

The tools are an ``MCPServer`` (``sjc_mcp.server_tools``). The process starts on a small front that
answers the handshake from the SDK's own cached answers (``sjc_mcp.server_front``), so hosts see the tools
within a few tens of milliseconds; the SDK is imported at the first tool call. Logs go to stderr only:
stdout belongs to the protocol.
"""

from __future__ import annotations

from typing import Any


def main() -> int:
    from sjc_mcp.server_front import main as run

    return run()


def __getattr__(name: str) -> Any:
    if name in ("create_server", "INSTRUCTIONS"):
        from sjc_mcp import server_tools

        return getattr(server_tools, name)
    raise AttributeError(f"module 'sjc_mcp.server' has no attribute {name!r}")


if __name__ == "__main__":
    import sys

    sys.exit(main())
