"""Tool groups and hooks: declared without the SDK, served in-process through the SDK's client."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

import anyio
import pytest
from pydantic import Field
from typing_extensions import TypedDict

from brain.errors import Conflict
from brain.mcp.registry import ToolOutput, ToolRegistry

pytestmark = pytest.mark.timeout(120)


def serve_in_process(brain, registry, body, mode="auto"):
    pytest.importorskip("mcp")
    from mcp import Client

    from brain.mcp.server import build_server

    async def main():
        with anyio.fail_after(60):
            async with Client(build_server(brain, registry), mode=mode) as client:
                return await body(client)

    return anyio.run(main)


class Echoed(TypedDict):
    word: str
    brain: str


class Listed(TypedDict):
    items: list[dict]


class Hashed(TypedDict):
    hash: str


def extra_group(tools: ToolRegistry) -> None:
    """A tool group as another engineer would write it (see docs/mcp.md)."""

    @tools.tool(read_only=True, output=Echoed)
    def echo_upper(brain, word: Annotated[str, Field(description="a word")], times: int = 1) -> ToolOutput:
        """Echo a word in capitals, to test the registry."""
        return ToolOutput(word.upper() * times, {"word": word, "brain": brain.name})

    @tools.tool(output=Listed)
    async def async_listing(brain) -> list:
        """An async tool returning a list, to test conversion."""
        return [{"n": 1}, {"n": 2}]

    @tools.tool(inline=True, output=Hashed)
    def inline_read(brain, path: str) -> ToolOutput:
        """A quick tool run on the event loop, to test the inline path and its error mapping."""
        doc = brain.read(path)
        return ToolOutput(doc.text, {"hash": doc.hash})

    @tools.tool(output=Hashed)
    def raises_conflict(brain) -> str:
        """Always raises a BrainError subclass."""
        raise Conflict("notes/x.md", "abcdef0123", "9876543210")

    @tools.tool(output=Hashed)
    def crashes(brain) -> str:
        """Always crashes with a non-brain error."""
        raise RuntimeError("boom")


def registry_with_extra():
    from brain.mcp.tools import collect

    registry = collect()
    extra_group(registry)
    return registry


def test_a_new_tool_group_is_served_with_its_types_and_errors(brain):
    async def body(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return (tools,
                await client.call_tool("echo_upper", {"word": "ab", "times": 2}),
                await client.call_tool("async_listing", {}),
                await client.call_tool("raises_conflict", {}),
                await client.call_tool("crashes", {}),
                await client.call_tool("echo_upper", {"word": "ab", "loud": True}),
                await client.call_tool("inline_read", {"path": "now.md"}),
                await client.call_tool("inline_read", {"path": "../x"}))

    tools, echo, listing, conflict, crash, unknown, inline, escape = serve_in_process(brain, registry_with_extra(),
                                                                                      body)
    assert "brain_boot" in tools and "echo_upper" in tools
    assert tools["echo_upper"].input_schema["required"] == ["word"]
    assert tools["echo_upper"].input_schema["properties"]["times"]["type"] == "integer"
    assert echo.content[0].text == "ABAB" and echo.structured_content == {"word": "ab", "brain": brain.name}
    assert listing.structured_content == {"items": [{"n": 1}, {"n": 2}]}
    assert conflict.is_error and conflict.structured_content["error"] == "conflict"
    assert conflict.structured_content["expected"] == "abcdef0123"
    assert crash.is_error and crash.structured_content == {"error": "internal", "type": "RuntimeError",
                                                           "message": "boom"}
    assert unknown.is_error and unknown.structured_content["unknown"] == ["loud"]
    assert not inline.is_error and inline.structured_content == {"hash": brain.read("now.md").hash}
    assert escape.is_error and escape.structured_content["error"] == "path_escape"


@pytest.mark.parametrize("mode,method", [("legacy", "initialize"), ("auto", "server/discover")])
def test_initialize_hooks_see_the_client_and_close_hooks_run(brain, mode, method):
    registry = registry_with_extra()
    seen = []
    registry.on_initialize(lambda b, hello: seen.append((b.dir, hello)))
    registry.on_initialize(lambda b, hello: 1 / 0)  # a failing hook must not break the handshake
    registry.on_close(lambda b: seen.append("closed"))

    async def body(client):
        assert seen and seen[-1] != "closed"  # the hook ran before the first call
        return await client.call_tool("brain_read", {"path": "now.md"})

    assert not serve_in_process(brain, registry, body, mode=mode).is_error
    (brain_dir, hello), closed = seen
    assert brain_dir == brain.dir and closed == "closed"
    assert hello.method == method
    assert hello.client_name == "mcp" and hello.protocol_version


def test_registry_refuses_bad_declarations():
    tools = ToolRegistry()

    @tools.tool(output=Hashed)
    def one(brain) -> str:
        """Doc."""
        return ""

    with pytest.raises(TypeError, match="must declare its result's shape"):
        @tools.tool()
        def shapeless(brain) -> dict:
            """A tool that says nothing of what it returns."""
            return {}

    with pytest.raises(ValueError):
        tools.tool(name="one", output=Hashed)(lambda brain: "")
    with pytest.raises(TypeError):
        @tools.tool(output=Hashed)
        def no_brain(path: str) -> str:
            """Doc."""
            return path
    with pytest.raises(ValueError):
        @tools.tool(output=Hashed)
        def undocumented(brain) -> str:
            return ""
    with pytest.raises(TypeError):
        @tools.tool(output=Hashed)
        def unresolvable(brain, x: "NotImportedHere") -> str:  # noqa: F821
            """Doc."""
            return x
    assert list(tools.tools) == ["one"]


def test_the_cli_and_the_registry_do_not_import_the_sdk():
    code = ("import sys; from brain.cli.main import build_parser; build_parser(); import brain.mcp; "
            "print('mcp' in sys.modules, 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr
