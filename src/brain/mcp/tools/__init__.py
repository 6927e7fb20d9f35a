"""MCP tool groups: each module here declares its tools with ``register(tools)``.

A new group (search, cards, coordination...) is one module in this folder plus
one name in ``TOOL_MODULES``; see docs/mcp.md.
"""

from __future__ import annotations

import importlib

from ..registry import ToolRegistry

__all__ = ["TOOL_MODULES", "collect"]

# each module registers its tools; a new tool group adds one name here
TOOL_MODULES = ["core", "coord", "sessions", "cards", "search"]


def collect(modules: list[str] | None = None) -> ToolRegistry:
    """Import every tool group and gather its tools and hooks into one registry."""
    registry = ToolRegistry()
    for name in TOOL_MODULES if modules is None else modules:
        importlib.import_module(f".{name}", __package__).register(registry)
    return registry
