"""One Claude Code session, one brain session: its hooks and its MCP server share it, whichever starts first.

The test process plays the client: it starts the real MCP server over stdio (the official SDK
client, named as Claude Code names itself) and runs the installed hooks through a shell, as the
client does; both find the test process as their client.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from test_hooks import SID, hook_commands, installed, payload, run_hook, write_transcript  # noqa: E402,F401
from test_mcp_helpers import BOUND, stdio_params  # noqa: E402

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="clients are found through /proc")]


def client(repo: Path, name: str):
    from mcp import Client
    from mcp_types import Implementation

    return Client(stdio_params(repo), client_info=Implementation(name=name, version="1"))


async def me(c) -> str:
    return (await c.call_tool("brain_sessions", {})).structured_content["you"]


def session_start(repo: Path, tmp_path: Path) -> str:
    transcript = tmp_path / f"{SID}.jsonl"
    write_transcript(transcript, repo, [], 0)
    out = run_hook(repo, hook_commands(repo)["SessionStart"], payload(repo, "SessionStart", transcript,
                                                                      source="startup"))
    assert out.returncode == 0, out.stderr
    state = json.loads(next((repo / ".brain" / "runtime" / "hooks").glob("claude-*.json")).read_text())
    assert state["coord"] is True
    return state["party"]


def test_the_hooks_join_the_session_the_mcp_server_started(installed, tmp_path):
    repo = installed.repo

    async def main():
        with anyio.fail_after(BOUND):
            async with client(repo, "claude-code") as first:
                server_session = await me(first)
                party = await anyio.to_thread.run_sync(session_start, repo, tmp_path)
                async with client(repo, "claude-code") as second:  # another server of the same program
                    other = await me(second)
                return server_session, party, other

    server_session, party, other = anyio.run(main)
    assert party == server_session  # one agent, one session
    assert other != server_session  # a second server is another agent: programs may run several
    sessions = brainlib.open(repo).coord.sessions(include_gone=True)
    assert [s.id for s in sessions if s.role == "claude-code"].count(server_session) == 1
    assert brainlib.open(repo).coord.session(server_session).liveness != "alive"  # ended by the server it began in


def test_the_mcp_server_joins_the_session_the_hooks_started(installed, tmp_path):
    repo = installed.repo
    party = session_start(repo, tmp_path)

    async def main():
        with anyio.fail_after(BOUND):
            async with client(repo, "claude-code") as same:
                joined = await me(same)
            async with client(repo, "codex") as different:  # another role: its own session
                own = await me(different)
            return joined, own

    joined, own = anyio.run(main)
    assert joined == party and own != party
    coord = brainlib.open(repo).coord
    assert coord.session(party).liveness == "alive"  # the server that joined it leaves it to the hooks
    assert [e.action for e in coord.history(subject=party)][::-1][:2] == ["session_start", "session_join"]


def test_a_hook_and_a_server_starting_together_end_with_one_session(installed, tmp_path):
    """Both decide inside one write transaction: whichever comes second joins the first's session."""
    repo = installed.repo

    async def main():
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                found = {}

                async def hook():
                    found["hook"] = await anyio.to_thread.run_sync(session_start, repo, tmp_path)

                async def server():
                    async with client(repo, "claude-code") as c:
                        found["server"] = await me(c)

                tg.start_soon(hook)
                tg.start_soon(server)
            return found

    found = anyio.run(main)
    assert found["hook"] == found["server"]
    roles = [s.role for s in brainlib.open(repo).coord.sessions(include_gone=True)]
    assert roles.count("claude-code") == 1
