"""A connection is a session from its MCP handshake, at every protocol version the official SDK serves: alive
while connected, ended when the connection closes, deleted at once when it made no tool call (a health check),
seen gone through its pid when the server is killed; an ask by role waits for that agent's handshake.

Real `brain serve` subprocesses (stdio and streamable HTTP), the official SDK client or raw JSON-RPC lines,
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client   # noqa: E402
from mcp_types import Implementation   # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS   # noqa: E402
from test_mcp_helpers import BOUND, RawStdioServer, serve_http, server_env, stdio_params, wait_for  # noqa: E402

import brain as brainlib   # noqa: E402
from brain.coord.targets import arm_addressed   # noqa: E402
from brain.errors import InvalidInput, NotFound   # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request, brain, repo, monkeypatch):
    """(the brain as the test process sees it, the environment of the servers) on SQLite or PostgreSQL."""
    for var in ("BRAIN_ROLE", "BRAIN_SESSION"):
        monkeypatch.delenv(var, raising=False)
    if request.param == "sqlite":
        yield brain, {}
        return
    from brain.backends.testing import isolated_postgres

    with isolated_postgres(request.getfixturevalue("postgres_url")) as url:
        monkeypatch.setenv("BRAIN_BACKEND", url)
        yield brainlib.open(repo), {"BRAIN_BACKEND": url}


def handshake(server: RawStdioServer, name: str, version: str) -> dict:
    init = server.send("initialize", {"protocolVersion": version, "capabilities": {},
                                      "clientInfo": {"name": name, "version": "1"}})
    server.send("notifications/initialized", notify=True)
    return init


# -- every handshake-era version, raw: the SDK client itself only offers the newest ----------------
@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_each_handshake_version_is_a_session_while_connected_and_nothing_after(served, repo, version):
    b, env = served
    server = RawStdioServer(repo, **env)
    try:
        init = handshake(server, "claude-code", version)
        assert init["result"]["protocolVersion"] == version  # served as asked, not downgraded
        [session] = b.coord.sessions()
        assert (session.role, session.liveness) == ("claude-code", "alive")
        assert server.send("tools/list", {})["result"]["tools"]
    finally:
        server.close()
    assert b.coord.sessions(include_gone=True) == []
    actions = [e.action for e in b.coord.history(subject=session.id)]
    assert actions[::-1] == ["session_start", "session_end"]  # it was there, and it is gone


# -- the official SDK client in each mode it connects with --------------------------------------------
MODES = ["legacy", "auto", *MODERN_PROTOCOL_VERSIONS]  # initialize 2025-11-25; discover; a pinned 2026 version


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_is_a_session_from_its_handshake_in_every_mode(served, repo, mode):
    b, env = served

    async def main(call: bool):
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(repo, **env), mode=mode,
                              client_info=Implementation(name="codex-mcp-client", version="1")) as client:
                if mode in MODERN_PROTOCOL_VERSIONS:  # no handshake at all: the first request says hello
                    await client.list_tools()
                while_connected = await anyio.to_thread.run_sync(b.coord.sessions)
                names = {t.name for t in (await client.list_tools()).tools}
                called = await client.call_tool("brain_sessions", {}) if call else None
                return client.session.protocol_version, while_connected, names, called

    version, during, names, _ = anyio.run(main, False)
    assert version == (MODERN_PROTOCOL_VERSIONS[-1] if mode == "auto" else
                       mode if mode in MODERN_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1])
    assert [(s.role, s.liveness) for s in during] == [("codex", "alive")]
    assert "brain_boot" in names
    assert b.coord.sessions(include_gone=True) == []  # a tool listing leaves nothing behind

    version, during, _, called = anyio.run(main, True)
    me = called.structured_content["you"]
    assert [s.id for s in during] == [me]  # the call acts as the session the handshake started
    assert b.coord.session(me).liveness == "gone"  # it made a call: ended, kept (pruned with the others later)


# -- streamable HTTP -----------------------------------------------------------------------------------
def test_an_http_client_is_a_session_from_its_handshake(served, repo):
    b, env = served

    async def main(url: str, mode: str, call: bool):
        with anyio.fail_after(BOUND):
            async with Client(url, mode=mode, client_info=Implementation(name="claude-code", version="1")) as client:
                during = await anyio.to_thread.run_sync(b.coord.sessions)
                if call:
                    await client.call_tool("brain_sessions", {})
                return during

    for mode in ("legacy", "auto"):
        with serve_http(repo, {**server_env(), **env}) as url:
            during = anyio.run(main, url, mode, False)
        assert [(s.role, s.liveness) for s in during] == [("claude-code", "alive")], mode
        assert b.coord.sessions(include_gone=True) == [], mode  # the server stopped: nothing left
    with serve_http(repo, {**server_env(), **env}) as url:
        [session] = anyio.run(main, url, "legacy", True)
    assert b.coord.session(session.id).liveness == "gone"


# -- alive while connected ---------------------------------------------------------------------------
def test_a_connected_agent_stays_alive_past_the_stall_window_without_calling_anything(served, repo):
    b, env = served
    (b.dir / "brain.yml").write_text("version: 1\ncoord:\n  stall_seconds: 1\n  gone_seconds: 2\n")
    b = brainlib.open(repo)
    server = RawStdioServer(repo, **env)
    try:
        handshake(server, "codex", HANDSHAKE_PROTOCOL_VERSIONS[-1])
        [session] = b.coord.sessions()
        # the server beats for the idle agent: seen again after a whole gone window (no call was made)
        beaten = wait_for(lambda: (lambda s: s if s.last_seen > session.started + 2.5 else None)(
            b.coord.session(session.id)))
        assert beaten.liveness == "alive"
    finally:
        server.close()
    assert b.coord.sessions(include_gone=True) == []


# -- a killed server ---------------------------------------------------------------------------------
def test_a_sigkilled_server_is_seen_gone_through_its_pid_and_an_ask_to_it_stalls(served, repo):
    b, env = served
    server = RawStdioServer(repo, **env)
    handshake(server, "codex", HANDSHAKE_PROTOCOL_VERSIONS[-1])
    [session] = b.coord.sessions()
    server.proc.kill()
    server.proc.wait(timeout=BOUND)
    assert b.coord.session(session.id).liveness == "gone"
    lead = b.coord.start_session("lead").id
    assert b.coord.ask(lead, session.id, "still there?").outcome == "stalled"


# -- an ask by role waits for the handshake ----------------------------------------------------------
def test_an_ask_by_role_waits_for_the_agent_to_connect_and_gets_its_reply(served, repo):
    b, env = served
    lead = b.coord.start_session("lead").id
    early = arm_addressed(b.coord, lead, "codex", "which port?", wait_seconds=0.05)
    assert (early.outcome, early.ticket) == ("pending", None)  # cold start: nothing asked yet
    assert b.coord.asks() == []
    answered, stop = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def codex_agent() -> None:  # connects, then answers what its inbox holds
        server = RawStdioServer(repo, **env)
        try:
            handshake(server, "codex-mcp-client", HANDSHAKE_PROTOCOL_VERSIONS[-1])
            while not (answered.is_set() or stop.is_set()):
                items = server.send("tools/call", {"name": "inbox", "arguments": {}})["result"]
                for item in items["structuredContent"]["items"]:
                    server.send("tools/call", {"name": "reply", "arguments": {"ticket": item["ticket"],
                                                                              "answer": "8080"}})
                    answered.set()
                stop.wait(0.05)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)
        finally:
            server.close()

    agent = threading.Thread(target=codex_agent)
    agent.start()
    try:
        armed = arm_addressed(b.coord, lead, "codex", "which port?", timeout=BOUND)
        assert armed.target.endswith("-codex@testbox")
        result = b.coord.wait(armed.ticket)
    finally:
        stop.set()  # whatever happened, the agent leaves
        agent.join(BOUND)
    assert not errors, errors
    assert (result.outcome, result.answer) == ("reply", "8080")


def test_an_ask_by_role_that_never_connects_times_out_and_asks_nothing(served):
    b, _ = served
    lead = b.coord.start_session("lead").id
    result = arm_addressed(b.coord, lead, "review", "anyone?", timeout=0.2)
    assert (result.outcome, result.ticket) == ("timeout", None)
    assert b.coord.asks(pending_only=False) == []
    with pytest.raises(NotFound):  # a session id is never waited for: an unknown one is refused at once
        arm_addressed(b.coord, lead, "sess-20200101-0000-ghost@box", "q", timeout=BOUND)
    for _ in range(2):
        b.coord.start_session("review")
    with pytest.raises(InvalidInput) as err:  # two agents of the role: ask one by id
        arm_addressed(b.coord, lead, "review", "which of you?", timeout=BOUND)
    assert err.value.field == "target"


def test_the_cli_and_the_mcp_tool_ask_by_role(served, repo):
    b, env = served
    lead = b.coord.start_session("lead").id
    out = subprocess.run([sys.executable, "-m", "brain", "ask", "review", "anyone?", "--session", lead,
                          "--timeout", "0.2", "--json"], cwd=repo, capture_output=True, text=True, timeout=BOUND,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"outcome": "timeout", "answer": None, "ticket": None}

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(repo, BRAIN_ROLE="lead", **env)) as client:
                return await client.call_tool("ask_agent", {"target": "review", "question": "anyone?",
                                                            "wait_seconds": 0.05})

    pending = anyio.run(main)
    assert not pending.is_error
    assert pending.structured_content == {"outcome": "pending", "answer": None, "ticket": None}
