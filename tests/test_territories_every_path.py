"""Territories hold on every write path from the first call: a writer whose role is not known (yet) is checked
as the default role `agent`, never let through unchecked: MCP over stdio (a connection's first call, both
protocol eras), MCP over HTTP, and the CLI, for write, delete, move, report-done and decisions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import brain as brainlib
from brain.errors import TerritoryRefused

pytestmark = pytest.mark.timeout(300)

TERRITORIES = """version: 1
territories:
  now.md: lead
  notes/**: lead
  decisions/**: architect
  modules/**: lead
"""


@pytest.fixture
def owned(brain, repo, monkeypatch):
    """A brain whose now.md, notes, cards and decisions belong to lead and architect; no role in the environment."""
    for var in ("BRAIN_ROLE", "BRAIN_SESSION"):
        monkeypatch.delenv(var, raising=False)
    (repo / "pay").mkdir()
    (repo / "pay/__init__.py").write_text("def pay(amount: int) -> bool:\n    return True\n")
    brain.write("now.md", "# Now\n\nThe lead's plan.\n")
    brain.write("notes/plan.md", "# Plan\n\nThe lead's note.\n")
    brain.map()
    brain.new_decision("Orders are immutable", status="accepted")
    (brain.dir / "brain.yml").write_text(TERRITORIES)
    return brainlib.open_brain(repo)


def snapshot(b) -> dict[str, bytes]:
    """Every memory file (runtime/ excepted): what a refusal must leave as it was."""
    return {str(p.relative_to(b.dir)): p.read_bytes() for p in sorted(b.dir.rglob("*"))
            if p.is_file() and "runtime" not in p.relative_to(b.dir).parts}


FIRST_CALLS = {  # the first (and only) call of a connection: each must be refused, nothing written
    "write": ("brain_write", {"path": "now.md", "text": "# Now\n\nOverwritten.\n"}),
    "delete": ("brain_delete", {"path": "notes/plan.md"}),
    "move": ("brain_move", {"path": "notes/plan.md", "to": "notes/moved.md"}),
    "report_done": ("brain_report_done", {"module": "pay", "how_to_use": "Not the lead's words."}),
}


# -- MCP over stdio: the connection's first call -----------------------------------------------
@pytest.mark.parametrize("call", sorted(FIRST_CALLS))
def test_a_stdio_connections_first_write_is_checked(owned, repo, call):
    pytest.importorskip("mcp")
    from test_mcp_helpers import RawStdioServer

    before = snapshot(owned)
    server = RawStdioServer(repo)
    try:
        server.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "codex-mcp-client", "version": "1"}})
        server.send("notifications/initialized", notify=True)
        name, arguments = FIRST_CALLS[call]
        result = server.send("tools/call", {"name": name, "arguments": arguments})["result"]
    finally:
        server.close()
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == "territory"
    assert result["structuredContent"]["role"] == "codex" and result["structuredContent"]["owner"] == "lead"
    assert snapshot(owned) == before


def test_a_nameless_client_writes_as_the_default_role(owned, repo):
    pytest.importorskip("mcp")
    from test_mcp_helpers import RawStdioServer

    before = snapshot(owned)
    server = RawStdioServer(repo)
    try:
        server.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": " ", "version": "1"}})
        result = server.send("tools/call", {"name": "brain_write", "arguments": FIRST_CALLS["write"][1]})["result"]
    finally:
        server.close()
    assert result["isError"] is True and result["structuredContent"]["role"] == "agent"
    assert snapshot(owned) == before


def test_a_2026_client_that_pins_its_version_is_checked_from_its_first_call(owned, repo):
    """No initialize, no server/discover: the first request's envelope is the hello."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp_types import Implementation
    from test_mcp_helpers import BOUND, stdio_params

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(repo), mode="2026-07-28",
                              client_info=Implementation(name="claude-code", version="1")) as client:
                return await client.call_tool(*FIRST_CALLS["write"])

    before = snapshot(owned)
    result = anyio.run(main)
    assert result.is_error and result.structured_content["error"] == "territory"
    assert result.structured_content["role"] == "claude-code"
    assert snapshot(owned) == before


# -- MCP over HTTP ---------------------------------------------------------------------------------
def test_an_http_connections_first_write_is_checked(owned, repo):
    pytest.importorskip("mcp")
    from test_mcp_helpers import serve_http, server_env, with_client

    async def body(client):
        return [await client.call_tool(name, args) for name, args in FIRST_CALLS.values()]

    before = snapshot(owned)
    with serve_http(repo, server_env()) as url:
        for mode in ("legacy", "auto"):
            for result in with_client(url, body, mode=mode):
                assert result.is_error and result.structured_content["error"] == "territory", result
    assert snapshot(owned) == before


def test_the_owner_still_writes_over_mcp(owned, repo):
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    async def body(client):
        return await client.call_tool(*FIRST_CALLS["write"])

    result = with_client(stdio_params(repo, BRAIN_ROLE="lead"), body)
    assert not result.is_error
    assert owned.read("now.md").text == "# Now\n\nOverwritten.\n"


# -- the CLI -------------------------------------------------------------------------------------------
def cli(repo: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          input=stdin, timeout=120, env={**os.environ, **env})


def test_every_cli_write_without_a_role_is_checked_as_the_default_role(owned, repo, tmp_path):
    howto = tmp_path / "howto.md"
    howto.write_text("Not the lead's words.\n")
    commands = {
        "write": (("write", "now"), "# Now\n\nOverwritten.\n"),
        "rm": (("rm", "notes/plan.md"), None),
        "mv": (("mv", "notes/plan.md", "notes/moved.md"), None),
        "report-done": (("report-done", "--module", "pay", "--how-to-use", str(howto)), None),
        "decision new": (("decision", "new", "Orders are mutable after all"), None),
        "decision status": (("decision", "status", "1", "deprecated"), None),
    }
    before = snapshot(owned)
    for what, (args, stdin) in commands.items():
        out = cli(repo, *args, "--json", stdin=stdin)
        assert out.returncode == TerritoryRefused.exit_code, (what, out.stdout, out.stderr)
        error = json.loads(out.stderr or out.stdout)
        assert error["error"] == "territory" and error["role"] == "agent", what
    assert snapshot(owned) == before

    # the role comes from --role, else BRAIN_ROLE, else the role in BRAIN_SESSION's id
    assert cli(repo, "decision", "status", "1", "deprecated", "--role", "architect").returncode == 0
    assert cli(repo, "write", "now", stdin="# Now\n\nby the lead\n", BRAIN_ROLE="lead").returncode == 0
    out = cli(repo, "rm", "notes/plan.md", "--json", BRAIN_SESSION="sess-20261202-0900-backend@testbox")
    assert out.returncode == TerritoryRefused.exit_code and json.loads(out.stderr or out.stdout)["role"] == "backend"
    assert cli(repo, "report-done", "--module", "pay", "--how-to-use", str(howto), "--role", "lead").returncode == 0
    assert cli(repo, "decision", "new", "Orders are mutable", "--role", "architect").returncode == 0


def test_brains_own_maintenance_still_writes_unchecked(owned):
    """Card generation and the decisions index are brain's own writes (role None in the library)."""
    (owned.repo / "pay/__init__.py").write_text("def pay(amount: int, currency: str) -> bool:\n    return True\n")
    report = owned.map()
    assert report.written
    assert owned.write("notes/by-the-library.md", "x\n").path == "notes/by-the-library.md"
