"""The team server's fast lane (brain.mcp.lane): an ordinary tools/call answered as the SDK answers it,
everything else passed to the SDK unchanged, and a token still acting only as itself."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from test_team_helpers import post, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(180)

VERSION = "2025-06-18"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def call(n: int, tool: str, arguments: dict, **params) -> dict:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, **params}}


@pytest.fixture
def team(brain, repo):
    b = brainlib.open_brain(repo)
    b.coord.start_session("seed")
    alice, _ = b.tokens.create("alice", role="backend", machine="m1")
    bob, _ = b.tokens.create("bob", role="frontend", machine="m2")
    with team_server(repo) as url:
        yield b, url, alice, bob


def rpc(url, token, message: dict, version: str | None = VERSION):
    headers = {"mcp-protocol-version": version} if version else {}
    status, body = post(url, token, json.dumps(message).encode(), headers)
    return status, json.loads(body) if body else None


CASES = [
    ("brain_read", {"path": "now.md"}),  # a plain answer
    ("brain_read", {"path": "now.md", "colour": "red"}),  # an unknown argument: refused by brain
    ("brain_claim", {"item": "src/a.py", "ttl": "soon"}),  # an argument of the wrong type: the SDK's validation
    ("brain_claim", {"item": "src/a.py", "session": "sess-20990101-0000-x@nowhere"}),  # another session: forbidden
    ("no_such_tool", {}),  # an unknown tool
    ("brain_read", {"path": "../../etc/passwd"}),  # a path brain refuses
]


def test_the_lane_answers_every_call_exactly_as_the_sdk(team):
    """The same call through the lane and through the SDK's own path (``_meta`` sends it there) gives the
    same JSON-RPC answer, for a plain result and for each kind of refusal."""
    b, url, alice, _bob = team
    assert rpc(url, alice, INIT)[0] == 200
    for n, (tool, arguments) in enumerate(CASES, start=10):
        lane = rpc(url, alice, call(n, tool, arguments))
        sdk = rpc(url, alice, call(n, tool, arguments, _meta={}))
        assert lane == sdk, tool
        assert lane[0] == 200 and lane[1]["id"] == n
    refused = rpc(url, alice, call(99, "brain_claim", {"item": "src/a.py",
                                                         "session": "sess-20990101-0000-x@nowhere"}))[1]
    assert refused["result"]["isError"] and refused["result"]["structuredContent"]["error"] == "forbidden"


def test_a_claim_through_the_lane_is_the_tokens_own_and_sees_the_others(team):
    b, url, alice, bob = team
    mine = rpc(url, alice, call(1, "brain_claim", {"item": "src/api/**"}))[1]["result"]["structuredContent"]
    theirs = rpc(url, bob, call(2, "brain_claim", {"item": "src/api/users.py"}))[1]["result"]["structuredContent"]
    assert mine["session"].endswith("-backend@m1") and theirs["session"].endswith("-frontend@m2")
    assert [o["session"] for o in theirs["overlaps"]] == [mine["session"]]
    hijack = rpc(url, bob, call(3, "brain_release", {"all_claims": True, "session": mine["session"]}))[1]
    assert hijack["result"]["isError"]
    assert {k: hijack["result"]["structuredContent"][k] for k in ("error", "principal")} == {
        "error": "forbidden", "principal": "bob"}
    assert [c.session for c in brainlib.open_brain(b.repo).coord.claims()] == [mine["session"], theirs["session"]]
    assert rpc(url, None, call(4, "brain_claim", {"item": "src/x.py"}))[0] == 401  # the lane sits behind the tokens


def test_a_request_of_another_era_gets_the_sdks_answer(team):
    """A 2026-07-28 call without its envelope, and an unknown version: the SDK's refusal, not a lane answer."""
    b, url, alice, _bob = team
    for n, version in ((5, "2026-07-28"), (6, "1999-01-01")):
        status, answer = rpc(url, alice, call(n, "brain_read", {"path": "now.md"}), version=version)
        assert status >= 400 or "error" in answer, version


class Spy:
    """The SDK's app stand-in behind the lane: records what it is passed, answers 299."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope, receive, send):
        message = await receive()
        self.bodies.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def asgi_post(app, body: bytes, headers: dict[str, str], path: str = "/mcp"):
    import anyio

    sent: list[dict] = []

    async def main():
        done = False

        async def receive():
            nonlocal done
            if done:
                await anyio.sleep_forever()
            done = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            sent.append(message)

        with anyio.fail_after(30):
            await app({"type": "http", "method": "POST", "path": path,
                       "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}, receive, send)

    anyio.run(main)
    return sent


ORDINARY_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": VERSION}


@pytest.mark.parametrize("body, headers", [
    (json.dumps(INIT), ORDINARY_HEADERS),
    (json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), ORDINARY_HEADERS),
    (json.dumps([call(1, "brain_read", {"path": "now.md"})]), ORDINARY_HEADERS),  # a batch
    (json.dumps(call(1, "brain_read", {"path": "now.md"}, _meta={"progressToken": 1})), ORDINARY_HEADERS),
    (json.dumps(call(1, "brain_read", {"path": "now.md"}) | {"extra": 1}), ORDINARY_HEADERS),
    (json.dumps(call(True, "brain_read", {"path": "now.md"})), ORDINARY_HEADERS),  # a boolean id
    (json.dumps(call(1, "brain_read", {"path": "now.md"}) | {"jsonrpc": "1.0"}), ORDINARY_HEADERS),
    (json.dumps(call(1, 7, {"path": "now.md"})), ORDINARY_HEADERS),  # a name that is not a string
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", ', ORDINARY_HEADERS),  # not JSON
    (json.dumps(call(1, "brain_read", {"path": "now.md"})), ORDINARY_HEADERS | {"mcp-protocol-version": "2026-07-28"}),
    (json.dumps(call(1, "brain_read", {"path": "now.md"})), ORDINARY_HEADERS | {"mcp-protocol-version": "x"}),
    (json.dumps(call(1, "brain_read", {"path": "now.md"})), ORDINARY_HEADERS | {"content-type": "text/plain"}),
    (json.dumps(call(1, "brain_read", {"path": "now.md"})), ORDINARY_HEADERS | {"accept": "text/event-stream"}),
])
def test_what_the_lane_does_not_take_reaches_the_sdk_unchanged_and_does_nothing(brain, body, headers):
    from brain.mcp.lane import ToolCallLane
    from brain.mcp.server import build_server

    server = build_server(brain, transport="http")
    spy = Spy()
    sent = asgi_post(ToolCallLane(spy, server, "/mcp"), body.encode(), headers)
    assert spy.bodies == [body.encode()] and sent[0]["status"] == 299
    assert not getattr(brain, "_mcp_tool_calls", 0)


def test_the_lane_takes_an_ordinary_call_and_only_on_its_path(brain):
    from brain.mcp.lane import ToolCallLane
    from brain.mcp.server import build_server

    server = build_server(brain, transport="http")
    spy = Spy()
    lane = ToolCallLane(spy, server, "/mcp")
    body = json.dumps(call(7, "brain_read", {"path": "now.md"})).encode()
    sent = asgi_post(lane, body, ORDINARY_HEADERS)
    answer = json.loads(sent[1]["body"])
    assert spy.bodies == [] and sent[0]["status"] == 200 and answer["id"] == 7
    assert "# Now" in answer["result"]["content"][0]["text"] and brain._mcp_tool_calls == 1
    for version in (None, "2024-11-05"):  # no header: the SDK's default version; the oldest one
        headers = {k: v for k, v in ORDINARY_HEADERS.items() if k != "mcp-protocol-version"}
        sent = asgi_post(lane, body, headers | ({"mcp-protocol-version": version} if version else {}))
        assert sent[0]["status"] == 200 and json.loads(sent[1]["body"])["id"] == 7
    asgi_post(lane, body, ORDINARY_HEADERS, path="/other")
    assert spy.bodies == [body]
