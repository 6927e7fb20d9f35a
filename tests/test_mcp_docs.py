"""Every MCP tool, resource, prompt, header and `_meta` key brain serves is documented in README.md and docs/mcp.md."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("doc", ["README.md", "docs/mcp.md"])
def test_every_tool_resource_prompt_and_handle_carrier_is_documented(doc):
    from brain.mcp import handles
    from brain.mcp.prompts import PROMPTS, RESOURCES
    from brain.mcp.tools import collect

    text = (ROOT / doc).read_text(encoding="utf-8")
    names = [*collect().tools, *RESOURCES, *PROMPTS, "Brain-Session", handles.META_KEY, "session_handle"]
    missing = [name for name in names if f"`{name}`" not in text]
    assert not missing, f"document these in {doc}: {missing}"
    assert handles.HEADER == "brain-session"  # the header the docs name, as HTTP compares it
