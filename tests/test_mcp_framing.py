"""Messages the SDK's parser would drop unanswered: nested too deep, too long. Each gets a JSON-RPC error with its id.

Raw lines to a real `brain serve` over stdio (an SDK client cannot even serialize 200,000
levels), the official SDK client for what it can send, and raw HTTP posts to the team server.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from brain.mcp.framing import MAX_DEPTH, nesting_exceeds, request_id  # noqa: E402
from test_mcp_helpers import RawStdioServer, stdio_params, with_client  # noqa: E402
from test_team_helpers import post, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(120)

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def raw_line(server: RawStdioServer, line: str, wanted) -> dict:
    """Write ``line`` as is and return the answer whose id is ``wanted`` (bounded by the reader's deadline)."""
    server.proc.stdin.write(line.encode() + b"\n")
    server.proc.stdin.flush()
    while True:
        answer = server.out.readline(timeout=20)  # no answer at all is the failure this file is about
        assert answer is not None, "the server closed stdout"
        data = json.loads(answer)
        if data.get("id") == wanted:
            return data


@pytest.fixture
def stdio(brain, repo):
    server = RawStdioServer(repo)
    server.send("initialize", HELLO)
    server.send("notifications/initialized", notify=True)
    yield server
    server.close()


def test_a_tool_argument_200000_levels_deep_gets_an_error_with_its_id_over_stdio(stdio):
    call = '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "brain_read", "arguments": ' \
           '{"path": ' + deep(200_000) + "}}}"
    answer = raw_line(stdio, call, 41)
    assert answer["error"]["code"] == -32600
    late = '{"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": {"path": ' + deep(5000) + \
           '}, "name": "brain_read"}, "id": "late-id"}'  # the id after the deep part: still found
    assert raw_line(stdio, late, "late-id")["error"]["code"] == -32600
    assert "tools" in stdio.send("tools/list")["result"]  # the connection goes on


@pytest.mark.parametrize("line, code", [
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "brain_boot", '
     '"arguments": {"budget": ' + "9" * 500_000 + "}}}", -32700),  # a number the parser refuses (> 4300 digits)
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/list",}', -32700),  # not JSON
    ('{"jsonrpc": "2.0", "id": 5, "params": {}}', -32600),  # JSON, not a JSON-RPC message
])
def test_a_line_the_sdk_parser_refuses_gets_an_error_with_its_id(stdio, line, code):
    assert raw_line(stdio, line, 5)["error"]["code"] == code
    assert "tools" in stdio.send("tools/list")["result"]


def test_a_batch_gets_an_error_for_each_of_its_requests_over_stdio(stdio):
    """MCP has no batches (the SDK refuses them): each request of one gets its error, so no call hangs."""
    batch = json.dumps([{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/list"} for i in range(300)])
    stdio.proc.stdin.write(batch.encode() + b"\n")
    stdio.proc.stdin.flush()
    answered = {}
    while len(answered) < 300:
        line = stdio.out.readline(timeout=20)
        assert line is not None, "the server closed stdout"
        data = json.loads(line)
        answered[data["id"]] = data["error"]["code"]
    assert answered == {100 + i: -32600 for i in range(300)}
    assert "tools" in stdio.send("tools/list")["result"]


def test_a_line_above_the_size_bound_gets_an_error_without_being_held(brain, repo):
    (brain.dir / "brain.yml").write_text("version: 1\nserver:\n  max_request_bytes: 65536\nlimits:\n"
                                         "  write_bytes: 4096\n")
    server = RawStdioServer(repo)
    try:
        server.send("initialize", HELLO)
        server.send("notifications/initialized", notify=True)
        call = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "brain_read", "arguments": {"path": "x" * 300_000}}})
        assert raw_line(server, call, 7)["error"]["code"] == -32600
        read = server.send("tools/call", {"name": "brain_read", "arguments": {"path": "now.md"}})
        assert "result" in read
    finally:
        server.close()


def test_the_sdk_client_gets_an_error_for_a_deep_argument(served_repo):
    from mcp.shared.exceptions import MCPError

    value: list = []
    for _ in range(MAX_DEPTH + 20):
        value = [value]

    async def body(client):
        with pytest.raises(MCPError) as info:
            await client.call_tool("brain_read", {"path": value})
        assert info.value.error.code == -32600
        return await client.call_tool("brain_read", {"path": "now.md"})

    assert not with_client(stdio_params(served_repo), body).is_error


@pytest.fixture
def served_repo(brain, repo):
    brain.write("now.md", "# Now\n")
    return repo


def test_a_deep_body_gets_the_json_rpc_error_with_its_id_over_http(brain, repo):
    token, _ = brainlib.open_brain(repo).tokens.create("alice", role="backend")
    body = ('{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "brain_read", '
            '"arguments": {"path": ' + deep(200_000) + "}}}").encode()
    with team_server(repo) as url:
        status, answer = post(url, token, body)
        assert status == 400
        data = json.loads(answer)
        assert data["id"] == 9 and data["error"]["code"] == -32600
        status, _ = post(url, token, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                 "params": HELLO}).encode())
        assert status == 200


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab:,'),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"ab'), inner,
                                                                                 max_size=3), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_json, st.integers(min_value=0, max_value=8))
def test_nesting_is_measured_like_a_parser_would_brackets_in_strings_aside(value, bound):
    assert nesting_exceeds(json.dumps(value), bound) == (_depth(value) > bound)


@given(st.one_of(st.integers(min_value=-2**62, max_value=2**62), st.text(max_size=20)), _json)
def test_the_request_id_is_found_wherever_it_is_in_the_top_level_object(ident, params):
    before = json.dumps({"id": ident, "jsonrpc": "2.0", "params": params})
    after = json.dumps({"jsonrpc": "2.0", "params": {"id": "not-this", "x": params}, "id": ident})
    assert request_id(before) == ident and request_id(after) == ident
    assert request_id(json.dumps({"params": {"id": 3}})) is None
