"""The coordination MCP tools: the session starts at the handshake (a health check leaves nothing behind), and
every tool answers over a real stdio server (the test process plays the other session through the library)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("mcp")

from test_mcp_helpers import BOUND, RawStdioServer, stdio_params, wait_for, with_client  # noqa: E402

COORD_TOOLS = {"brain_claim", "brain_release", "brain_signal", "brain_signals", "brain_checkpoint", "ask_agent",
               "reply", "inbox", "workstate_read", "workstate_set", "brain_sessions"}

pytestmark = pytest.mark.timeout(180)


def test_the_group_declares_every_coordination_tool_and_a_handshake_hook():
    from brain.mcp.tools import collect

    registry = collect(["coord"])
    assert set(registry.tools) == COORD_TOOLS
    assert registry.initialize_hooks and registry.close_hooks


def handshake(server: RawStdioServer, name: str, version: str = "2025-06-18") -> dict:
    init = server.send("initialize", {"protocolVersion": version, "capabilities": {},
                                      "clientInfo": {"name": name, "version": "1.0"}})
    server.send("notifications/initialized", notify=True)
    return init


def test_the_handshake_starts_the_session_and_a_health_check_leaves_nothing_behind(brain, repo):
    server = RawStdioServer(repo)
    try:
        assert "result" in handshake(server, "claude-code")
        [session] = brain.coord.sessions()  # on the board while it cold-starts: answered means started
        assert session.role == "claude-code" and session.id.endswith("-claude-code@testbox")
        assert session.liveness == "alive"
        assert server.send("tools/list", {})["result"]["tools"]
    finally:
        server.close()
    assert brain.coord.sessions(include_gone=True) == []  # a health check: nothing left behind

    server = RawStdioServer(repo)
    try:
        handshake(server, "codex-mcp-client")
        [session] = brain.coord.sessions()
        assert session.role == "codex"
        boot = server.send("tools/call", {"name": "brain_boot", "arguments": {}})["result"]
        assert boot["isError"] is False
        assert [s.id for s in brain.coord.sessions()] == [session.id]  # the call uses the handshake's session
    finally:
        server.close()
    assert brain.coord.session(session.id).liveness == "gone"  # it did something: ended, kept


def test_every_coordination_tool_over_stdio(brain, repo):
    coord = brain.coord
    other = coord.start_session("review").id
    held = coord.claim(other, "src/auth")
    stop = threading.Event()

    def other_session_replies():  # the other agent: answers whatever it is asked
        while not stop.is_set():
            for item in coord.inbox(other):
                coord.reply(other, item["ticket"], "use port 8080")
            coord.backend.wait(("brain_ask",), 0.05)

    replier = threading.Thread(target=other_session_replies, daemon=True)

    async def body(client):
        r = {}
        r["sessions"] = await client.call_tool("brain_sessions", {})
        me = r["sessions"].structured_content["you"]
        r["claim"] = await client.call_tool("brain_claim", {"item": "src/auth/login.py", "ttl": 600})
        r["signal"] = await client.call_tool("brain_signal", {"target": other, "text": "touching login"})
        replier.start()
        r["ask"] = await client.call_tool("ask_agent", {"target": other, "question": "which port?"})
        stop.set()
        replier.join(BOUND)
        ticket = coord.arm(other, me, "are you done?").ticket
        r["inbox"] = await client.call_tool("inbox", {})
        r["reply"] = await client.call_tool("reply", {"ticket": ticket, "answer": "almost"})
        r["reply_again"] = await client.call_tool("reply", {"ticket": ticket, "answer": "again"})
        coord.signal(other, me, "rebase soon")
        r["signals"] = await client.call_tool("brain_signals", {})
        r["set"] = await client.call_tool("workstate_set", {"intent": "fix login", "progress": "2/3"})
        r["read"] = await client.call_tool("workstate_read", {})
        r["checkpoint"] = await client.call_tool("brain_checkpoint", {"step": "tests", "note": "next: CI"})
        r["release"] = await client.call_tool("brain_release", {"all_claims": True})
        r["cycle"] = await client.call_tool("ask_agent", {"target": me, "question": "me?"})
        return me, ticket, r

    me, ticket, r = with_client(stdio_params(repo), body)
    for key, result in r.items():
        assert result.is_error == (key in ("reply_again", "cycle")), (key, result)
    claim = r["claim"].structured_content
    assert claim["overlaps"] == [{"session": other, "item": "src/auth", "claim": held.claim}]
    assert r["signal"].structured_content["recipients"] == [other]
    assert r["ask"].structured_content["outcome"] == "reply"
    assert r["ask"].structured_content["answer"] == "use port 8080"
    assert r["inbox"].structured_content["items"] == [{"ticket": ticket, "from": other, "question": "are you done?"}]
    assert coord.wait(ticket).answer == "almost"
    assert r["reply_again"].structured_content["error"] == "reply_refused"
    assert r["cycle"].structured_content["error"] == "wait_cycle"
    assert [s["body"] for s in r["signals"].structured_content["items"]] == ["rebase soon"]
    assert r["set"].structured_content["key"] == me
    assert any(e["intent"] == "fix login" for e in r["read"].structured_content["items"])
    assert r["checkpoint"].structured_content["step"] == "tests"
    assert r["release"].structured_content["released"] == [claim["claim"]]
    assert brain.boot(session=me, record=False).text.count("Checkpoint of") == 1
