"""`brain serve` over stdio, driven by the official SDK client against a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

from test_mcp_helpers import BOUND, RawStdioServer, stdio_params, text_of, with_client  # noqa: E402

CORE_TOOLS = {"brain_boot", "brain_write", "brain_read", "brain_focus", "brain_workflows", "brain_decisions",
              "brain_state"}

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def served(brain, repo):
    """The repository of an initialised brain, with a workflow and two decisions."""
    brain.write("now.md", "# Now\n\nShipping the MCP server.\n")
    brain.write("workflows/release.md", "# Release\n\n1. tag\n2. push\n")
    brain.new_decision("Use SQLite for the embedded backend", status="accepted")
    brain.new_decision("PostgreSQL advisory locks for claims", status="accepted", modules=["coord"])
    return repo


def test_lists_the_core_tools_with_typed_strict_schemas(served):
    async def body(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in with_client(stdio_params(served), body)}
    assert CORE_TOOLS <= set(tools)
    for tool in tools.values():
        assert len(tool.description) > 60, tool.name  # tells the agent when to use it
        assert "brain" not in tool.input_schema.get("properties", {})  # the library object stays hidden
        assert tool.input_schema.get("additionalProperties") is False
    write = tools["brain_write"].input_schema
    assert set(write["required"]) == {"path", "text"}
    assert "expected_hash" in write["properties"]
    assert write["properties"]["path"]["type"] == "string"
    assert tools["brain_boot"].input_schema["properties"]["budget"]["anyOf"][0]["type"] == "integer"
    assert tools["brain_read"].annotations.read_only_hint is True
    assert tools["brain_write"].annotations.read_only_hint is False


def test_every_core_tool_answers(served, brain):
    async def body(client):
        calls = {
            "boot": ("brain_boot", {"task": "release the parser", "budget": 2000}),
            "read": ("brain_read", {"path": "now.md"}),
            "focus": ("brain_focus", {}),
            "workflows": ("brain_workflows", {}),
            "workflow": ("brain_workflows", {"name": "release"}),
            "decisions": ("brain_decisions", {"query": "postgresql locks"}),
            "by_module": ("brain_decisions", {"module": "coord"}),
            "state": ("brain_state", {}),
            "write": ("brain_write", {"path": "notes/mcp.md", "text": "# MCP\n"}),
        }
        return {key: await client.call_tool(name, args) for key, (name, args) in calls.items()}

    results = with_client(stdio_params(served), body)
    for key, result in results.items():
        assert not result.is_error, (key, text_of(result))
    boot = results["boot"]
    assert set(boot.structured_content) == {"text", "tokens", "budget", "sections", "files", "omitted", "functions", "evidence"}
    assert boot.structured_content["budget"] == 2000
    assert boot.structured_content["sections"][0]["slot"] == "now"
    assert "Shipping the MCP server." in text_of(boot)
    assert results["read"].structured_content["text"] == "# Now\n\nShipping the MCP server.\n"
    assert results["read"].structured_content["hash"] == brain.read("now.md").hash
    assert results["focus"].structured_content["path"] == "focus.md"
    assert results["workflows"].structured_content == {"workflows": ["release"]}
    assert "1. tag" in text_of(results["workflow"])
    decisions = results["decisions"].structured_content["decisions"]
    assert [d["number"] for d in decisions] == [2]
    assert decisions[0]["line"] in text_of(results["decisions"])
    assert [d["number"] for d in results["by_module"].structured_content["decisions"]] == [2]
    assert results["state"].structured_content["git"]["branch"] == "main"
    assert brain.read("notes/mcp.md").text == "# MCP\n"


def test_write_then_read_round_trip(served, brain):
    text = "# Setup\n\nünïcode, `code`, and a second line\n"

    async def body(client):
        wrote = await client.call_tool("brain_write", {"path": "notes/setup.md", "text": text, "expected_hash": ""})
        read = await client.call_tool("brain_read", {"path": "notes/setup.md"})
        return wrote, read

    wrote, read = with_client(stdio_params(served), body)
    assert not wrote.is_error and not read.is_error
    assert read.structured_content["text"] == text
    assert read.structured_content["hash"] == wrote.structured_content["hash"]
    assert (served / ".brain" / "notes" / "setup.md").read_text(encoding="utf-8") == text
    assert wrote.structured_content["hash"][:16] in text_of(read)  # the hash to pass back is visible as text


def test_stale_hash_is_a_conflict_tool_error_and_nothing_is_written(served, brain):
    first = brain.write("notes/plan.md", "v1\n")
    brain.write("notes/plan.md", "v2 by someone else\n")

    async def body(client):
        return await client.call_tool("brain_write", {"path": "notes/plan.md", "text": "v3 from a stale read\n",
                                                      "expected_hash": first.hash})

    result = with_client(stdio_params(served), body)
    assert result.is_error
    assert result.structured_content["error"] == "conflict"
    assert result.structured_content["path"] == "notes/plan.md"
    assert text_of(result).startswith("conflict:")
    assert "what to do:" in text_of(result)
    assert brain.read("notes/plan.md").text == "v2 by someone else\n"


def test_path_escape_is_refused(served, brain):
    async def body(client):
        wrote = await client.call_tool("brain_write", {"path": "../escaped.md", "text": "x"})
        read = await client.call_tool("brain_read", {"path": "../README.md"})
        return wrote, read

    wrote, read = with_client(stdio_params(served), body)
    for result in (wrote, read):
        assert result.is_error
        assert result.structured_content["error"] == "path_escape"
    assert not (served / "escaped.md").exists()
    assert not (served.parent / "escaped.md").exists()


def test_unknown_argument_is_refused_and_nothing_is_written(served, brain):
    async def body(client):
        write = await client.call_tool("brain_write", {"path": "notes/x.md", "text": "x", "force": True})
        read = await client.call_tool("brain_read", {"path": "now.md", "max_bytes": 10})
        return write, read

    write, read = with_client(stdio_params(served), body)
    assert write.is_error and read.is_error
    assert write.structured_content["error"] == "invalid_input"
    assert write.structured_content["unknown"] == ["force"]
    assert "path, text, expected_hash" in text_of(write)
    assert read.structured_content["unknown"] == ["max_bytes"]
    assert not (served / ".brain" / "notes" / "x.md").exists()


def test_wrong_argument_type_and_missing_file_are_tool_errors(served):
    async def body(client):
        budget = await client.call_tool("brain_boot", {"budget": "lots"})
        missing = await client.call_tool("brain_read", {"path": "notes/none.md"})
        low = await client.call_tool("brain_boot", {"budget": 3})
        return budget, missing, low

    budget, missing, low = with_client(stdio_params(served), body)
    assert budget.is_error and budget.structured_content["field"] == "budget"
    assert missing.is_error and missing.structured_content["error"] == "not_found"
    assert low.is_error and low.structured_content["error"] == "invalid_input"


def test_handshake_era_client_works_too(served):
    async def body(client):
        names = {t.name for t in (await client.list_tools()).tools}
        return names, await client.call_tool("brain_read", {"path": "now.md"})

    names, read = with_client(stdio_params(served), body, mode="legacy")
    assert CORE_TOOLS <= names
    assert not read.is_error


def test_debug_logging_never_reaches_stdout(served):
    # the SDK client still works with debug logging on...
    async def body(client):
        return await client.call_tool("brain_read", {"path": "now.md"})

    assert not with_client(stdio_params(served, BRAIN_LOG="debug"), body).is_error

    # ...and every byte the server writes on stdout is a JSON-RPC message
    server = RawStdioServer(served, BRAIN_LOG="debug")
    init = server.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "raw-test", "version": "1"}})
    assert init["result"]["serverInfo"]["name"] == "brain"
    server.send("notifications/initialized", notify=True)
    listed = server.send("tools/list", {})
    assert {t["name"] for t in listed["result"]["tools"]} >= CORE_TOOLS
    called = server.send("tools/call", {"name": "brain_write", "arguments": {"path": "notes/log.md", "text": "x\n"}})
    assert called["result"]["isError"] is False
    failed = server.send("tools/call", {"name": "brain_read", "arguments": {"path": "../x"}})
    assert failed["result"]["isError"] is True
    lines, stderr = server.close()
    assert server.proc.returncode == 0
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert "brain.mcp DEBUG" in stderr  # the debug log went somewhere: stderr


def test_without_a_brain_stdio_serve_answers_every_tool_with_run_brain_init(tmp_path):
    """Codex's config is global: the server starts in folders without a brain and says so on every call."""
    bare = tmp_path / "bare"
    bare.mkdir()

    async def body(client):
        tools = (await client.list_tools()).tools
        return tools, {t.name: await client.call_tool(t.name, {}) for t in tools}

    tools, results = with_client(stdio_params(bare), body)
    assert CORE_TOOLS <= {t.name for t in tools}
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)
    for name, result in results.items():
        assert result.is_error, name
        assert result.structured_content["error"] == "not_initialized", name
        assert "brain init" in result.structured_content["hint"]
    assert not (bare / ".brain").exists()  # nothing was created


def test_without_a_brain_http_serve_fails_before_speaking_protocol(tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    out = subprocess.run([sys.executable, "-m", "brain", "serve", "--http", "--port", "0"], cwd=bare,
                         capture_output=True, text=True, input="", timeout=BOUND)
    assert out.returncode == 3  # NotInitialized.exit_code
    assert out.stdout == ""
    assert out.stderr.strip()  # the NotInitialized message and its hint


def test_host_and_port_need_http(served):
    out = subprocess.run([sys.executable, "-m", "brain", "serve", "--port", "9999"], cwd=served,
                         capture_output=True, text=True, input="", timeout=BOUND)
    assert out.returncode == 2 and out.stdout == ""


def test_serve_help():
    out = subprocess.run([sys.executable, "-m", "brain", "serve", "--help"], capture_output=True, text=True,
                         timeout=BOUND)
    assert out.returncode == 0
    assert "--http" in out.stdout and "--host" in out.stdout and "--port" in out.stdout


def test_brain_search_returns_bounded_hits_never_whole_files(served):
    long_body = "The retry policy for webhooks uses exponential backoff. " + "filler words here. " * 2000

    async def body(client):
        await client.call_tool("brain_write", {"path": "notes/webhooks.md", "text": "# Webhooks\n\n" + long_body})
        found = await client.call_tool("brain_search", {"query": "webhook retry backoff", "limit": 5})
        none = await client.call_tool("brain_search", {"query": "zzzqqq"})
        bad = await client.call_tool("brain_search", {"query": "x", "kind": "nonsense"})
        return found, none, bad

    found, none, bad = with_client(stdio_params(served), body)
    assert not found.is_error
    hits = found.structured_content["hits"]
    assert hits[0]["path"] == "notes/webhooks.md"
    assert len(found.content[0].text) < 2000  # snippets, not the 40 KB note
    assert not none.is_error and none.structured_content["hits"] == []
    assert bad.is_error
