"""The MCP server of brain: the agent surface over the official ``mcp`` SDK.

- ``registry``: SDK-free declarations of tools and connection hooks;
- ``tools/``: the tool groups (``TOOL_MODULES`` lists them);
- ``server``: turns the declarations into an SDK ``MCPServer`` (imports ``mcp``);
- ``transports``: ``run_stdio`` and ``run_http``.

Importing this package does not import the SDK: ``brain serve`` does, lazily.
See docs/mcp.md.
"""

from __future__ import annotations

from .registry import ClientHello, ToolDef, ToolOutput, ToolRegistry

__all__ = ["ClientHello", "ToolDef", "ToolOutput", "ToolRegistry"]
