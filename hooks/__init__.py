"""The hooks' ready-made files, shipped in the wheel as ``sjc_mcp.host_hooks``."""
