"""The boot as a resource and a prompt: `resources/list` and `prompts/list` are no longer empty.

Real `brain serve` subprocesses (stdio at every mode of the SDK client; HTTP with bearer tokens), the official
SDK client: the resources read the boot, now.md and focus.md; the prompts render the boot (for a task), a
remember and a checkpoint message; on the team server a token's boot resource is its own session's; in a folder
without a brain every resource and prompt answers `not_initialized`."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from test_mcp_helpers import BOUND, serve_http, server_env, stdio_params  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("mode", ["legacy", "auto", *MODERN_PROTOCOL_VERSIONS])
def test_the_boot_is_a_resource_and_a_prompt_at_every_mode(brain, repo, mode):
    brain.write("now.md", "# Now\n\n## Current step\nShipping the orders API.\n")
    brain.write("focus.md", "# Focus\n\nOrders first; leave billing alone.\n")

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(repo), mode=mode) as client:
                capabilities = client.server_capabilities
                resources = {str(r.uri): r for r in (await client.list_resources()).resources}
                prompts = {p.name: p for p in (await client.list_prompts()).prompts}
                read = {uri: (await client.read_resource(uri)).contents[0].text for uri in resources}
                boot = await client.get_prompt("boot", {"task": "add a refund endpoint to orders"})
                bare = await client.get_prompt("boot", {})
                remember = await client.get_prompt("remember", {"text": "the orders API listens on 8080"})
                checkpoint = await client.get_prompt("checkpoint", {"step": "writing refund tests"})
                try:
                    await client.get_prompt("remember", {})
                    missing = None
                except MCPError as exc:
                    missing = exc
                return capabilities, resources, prompts, read, boot, bare, remember, checkpoint, missing

    capabilities, resources, prompts, read, boot, bare, remember, checkpoint, missing = anyio.run(main)
    if mode not in MODERN_PROTOCOL_VERSIONS:  # a pinned client adopts its version without asking the server
        assert capabilities.resources is not None and capabilities.prompts is not None
    assert set(resources) == {"brain://boot", "brain://now", "brain://focus"}
    assert all(r.mime_type == "text/markdown" and r.description for r in resources.values())
    assert read["brain://boot"].startswith("# Boot:") and "Shipping the orders API." in read["brain://boot"]
    assert read["brain://now"] == brain.read("now.md").text and read["brain://focus"] == brain.read("focus.md").text
    assert set(prompts) == {"boot", "remember", "checkpoint"}
    assert [(a.name, a.required) for a in prompts["boot"].arguments] == [("task", False)]
    assert [(a.name, a.required) for a in prompts["remember"].arguments] == [("text", True)]
    text = [m.content.text for m in boot.messages]
    assert text[0].startswith("# Boot:") and "Shipping the orders API." in text[0]
    assert "My task: add a refund endpoint to orders" in text[1]
    assert "My task" not in bare.messages[1].content.text
    assert "the orders API listens on 8080" in remember.messages[0].content.text
    said = checkpoint.messages[0].content.text
    assert "'writing refund tests'" in said and brain.read("now.md").hash[:16] in said and "Shipping" in said
    assert missing is not None  # a required argument left out is refused, not rendered empty


def test_on_the_team_server_a_tokens_boot_resource_is_its_own_sessions(brain, repo):
    alice, _ = brain.tokens.create("alice", role="backend")

    async def main(url: str):
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(BOUND):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice}"})
            async with Client(streamable_http_client(url, http_client=http),
                              mode=MODERN_PROTOCOL_VERSIONS[-1]) as client:
                boot = (await client.read_resource("brain://boot")).contents[0].text
                me = (await client.call_tool("brain_sessions", {})).structured_content["you"]
                bad = None
                try:
                    await client.read_resource("brain://boot")  # fine again
                    await client.get_prompt("boot", {}, meta={"brain/session": "bsh_forged.AAAA"})
                except MCPError as exc:
                    bad = exc
                return boot, me, bad

    with serve_http(repo, server_env()) as url:
        boot, me, bad = anyio.run(main, url)
    assert f"session `{me}`" in boot and "backend" in me
    assert bad is not None and "session_handle" in bad.error.message  # a forged handle: refused before anything


def test_without_a_brain_every_resource_and_prompt_says_what_to_run(tmp_path):
    async def main():
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(tmp_path), mode="legacy") as client:
                uris = [str(r.uri) for r in (await client.list_resources()).resources]
                names = [p.name for p in (await client.list_prompts()).prompts]
                errors = []
                for call in [*(client.read_resource(u) for u in uris),
                             client.get_prompt("boot", {}), client.get_prompt("remember", {"text": "x"})]:
                    try:
                        await call
                    except MCPError as exc:
                        errors.append(exc.error.message)
                return uris, names, errors

    uris, names, errors = anyio.run(main)
    assert len(uris) == 3 and set(names) == {"boot", "remember", "checkpoint"}
    assert len(errors) == 5 and all(e.startswith("not_initialized:") and "brain init" in e for e in errors)
