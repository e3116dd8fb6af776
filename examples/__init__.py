"""Example inputs and the commented example config, shipped in the wheel as ``sjc_mcp.examples``."""
