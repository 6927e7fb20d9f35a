"""Stateless callers get an explicit identity: `brain_session_start` mints a session handle the caller passes back.

Real `brain serve --http` subprocesses reached with the official SDK client at every protocol version it offers
(2026-07-28 stateless, the `auto` probe, the handshake era), SQLite and PostgreSQL: three callers become three
sessions and their overlapping claims are reported as overlaps; a handle passed as a header, as `_meta` or as the
`session` argument names the caller; an unknown, altered, foreign (another token's) or expired handle is refused
with `session_handle` and nothing is done."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp_types import Implementation  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS  # noqa: E402
from test_handshake_sessions import served  # noqa: E402,F401 - the fixture: SQLite and PostgreSQL
from test_mcp_helpers import BOUND, serve_http, server_env, stdio_params  # noqa: E402

import brain as brainlib  # noqa: E402

pytestmark = pytest.mark.timeout(300)

MODES = [*MODERN_PROTOCOL_VERSIONS, "auto", "legacy"]  # every way the SDK client connects


def _http_client(url: str, mode: str, headers: dict[str, str] | None = None, name: str = "worker"):
    if not headers:
        return Client(url, mode=mode, client_info=Implementation(name=name, version="1"))
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)), mode=mode,
                  client_info=Implementation(name=name, version="1"))


@pytest.mark.parametrize("mode", MODES)
def test_three_stateless_callers_are_three_sessions_and_their_overlap_is_seen(served, repo, mode):
    b, env = served

    async def caller(url: str, role: str, item: str) -> dict:
        async with Client(url, mode=mode, client_info=Implementation(name="worker", version="1")) as client:
            started = (await client.call_tool("brain_session_start", {"role": role})).structured_content
            meta = {"brain/session": started["handle"]}
            grant = (await client.call_tool("brain_claim", {"item": item}, meta=meta)).structured_content
            me = (await client.call_tool("brain_sessions", {}, meta=meta)).structured_content["you"]
            return {"started": started, "grant": grant, "me": me}

    async def main(url: str):
        with anyio.fail_after(BOUND):
            first = await caller(url, "backend", "src/api/**")
            second = await caller(url, "frontend", "src/api/routes.py")
            third = await caller(url, "review", "src/api/")
            return first, second, third

    with serve_http(repo, {**server_env(), **env}) as url:
        first, second, third = anyio.run(main, url)
        sessions = {s["started"]["session"] for s in (first, second, third)}
        assert len(sessions) == 3  # three callers, three sessions, none of them the server's shared one
        for one in (first, second, third):
            assert one["me"] == one["grant"]["session"] == one["started"]["session"]  # each acts as its own
        assert [s["started"]["role"] for s in (first, second, third)] == ["backend", "frontend", "review"]
        assert first["grant"]["overlaps"] == []
        assert {o["session"] for o in second["grant"]["overlaps"]} == {first["me"]}
        assert {o["session"] for o in third["grant"]["overlaps"]} == {first["me"], second["me"]}
        assert len(b.coord.overlaps()) == 3  # every pair overlaps on the board a person sees
    for one in (first, second, third):  # the server stopped: the sessions it started for handles ended
        assert b.coord.session(one["me"]).liveness == "gone"


def test_a_handle_travels_as_header_meta_or_argument_and_bad_ones_are_refused(served, repo):
    b, env = served

    async def main(url: str):
        with anyio.fail_after(BOUND):
            async with Client(url, mode=MODERN_PROTOCOL_VERSIONS[-1]) as client:
                started = (await client.call_tool("brain_session_start", {"role": "backend"})).structured_content
                other = (await client.call_tool("brain_session_start", {})).structured_content
                handle = started["handle"]
                by_argument = await client.call_tool("brain_claim", {"item": "docs/", "session": handle})
                tampered = handle[:-2] + ("AA" if not handle.endswith("AA") else "BB")
                refused = [await client.call_tool("brain_claim", {"item": "x/"}, meta={"brain/session": bad})
                           for bad in (tampered, "bsh_nonsense", "bsh_" + "A" * 700)]
                refused.append(await client.call_tool("brain_claim", {"item": "x/", "session": tampered}))
                ended = await client.call_tool("brain_session_end", {}, meta={"brain/session": other["handle"]})
                after_end = await client.call_tool("brain_sessions", {}, meta={"brain/session": other["handle"]})
            async with _http_client(url, MODERN_PROTOCOL_VERSIONS[-1], {"Brain-Session": handle}) as client:
                by_header = (await client.call_tool("brain_sessions", {})).structured_content["you"]
                boot = (await client.call_tool("brain_boot", {})).structured_content
            return started, other, by_argument, refused, ended, after_end, by_header, boot

    with serve_http(repo, {**server_env(), **env}) as url:
        started, other, by_argument, refused, ended, after_end, by_header, boot = anyio.run(main, url)
        held = {c.item for c in b.coord.claims()}
    assert held == {"docs"}  # a refused call did nothing (a folder claim is kept without its slash)
    assert by_argument.structured_content["session"] == started["session"]
    assert other["role"] == "mcp"  # no role given, no BRAIN_ROLE: the client's name (the SDK client says mcp)
    for result in refused:
        assert result.is_error and result.structured_content["error"] == "session_handle"
        assert result.structured_content["reason"] == "unknown"
    assert not ended.is_error and ended.structured_content["session"] == other["session"]
    assert after_end.is_error and after_end.structured_content["reason"] == "expired"
    assert by_header == started["session"]
    assert "Now" in boot["text"]


def test_a_token_handle_is_the_tokens_own_session_and_works_for_no_other_caller(served, repo):
    b, env = served
    alice, _ = b.tokens.create("alice", role="backend")
    bob, _ = b.tokens.create("bob", role="frontend")

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def main(url: str):
        with anyio.fail_after(BOUND):
            async with _http_client(url, MODERN_PROTOCOL_VERSIONS[-1], bearer(alice)) as client:
                mine = (await client.call_tool("brain_session_start", {})).structured_content
                wrong_role = await client.call_tool("brain_session_start", {"role": "frontend"})
                me = (await client.call_tool("brain_sessions", {}, meta={"brain/session": mine["handle"]}))
            async with _http_client(url, MODERN_PROTOCOL_VERSIONS[-1], bearer(bob)) as client:
                stolen = await client.call_tool("brain_claim", {"item": "src/"},
                                                meta={"brain/session": mine["handle"]})
                stolen_arg = await client.call_tool("brain_claim", {"item": "src/", "session": mine["handle"]})
            return mine, wrong_role, me, stolen, stolen_arg

    with serve_http(repo, {**server_env(), **env}) as url:
        mine, wrong_role, me, stolen, stolen_arg = anyio.run(main, url)
        held = b.coord.claims()
    assert held == []
    assert mine["role"] == "backend" and b.tokens.owns("alice", mine["session"])
    assert wrong_role.is_error and wrong_role.structured_content["error"] == "forbidden"
    assert me.structured_content["you"] == mine["session"]
    for result in (stolen, stolen_arg):
        assert result.is_error and result.structured_content["reason"] == "foreign"


def test_over_stdio_a_minted_session_is_its_own_and_ends_with_the_connection(served, repo):
    b, env = served

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(repo, **env), mode=MODERN_PROTOCOL_VERSIONS[-1],
                              client_info=Implementation(name="codex-mcp-client", version="1")) as client:
                own = (await client.call_tool("brain_sessions", {})).structured_content["you"]
                extra = (await client.call_tool("brain_session_start", {"role": "helper"})).structured_content
                meta = {"brain/session": extra["handle"]}
                await client.call_tool("brain_claim", {"item": "a/"})
                grant = (await client.call_tool("brain_claim", {"item": "a/b.py"}, meta=meta)).structured_content
                return own, extra, grant

    own, extra, grant = anyio.run(main)
    assert own != extra["session"] and own.split("-")[3].startswith("codex")
    assert grant["session"] == extra["session"] and [o["session"] for o in grant["overlaps"]] == [own]
    assert b.coord.session(extra["session"]).liveness == "gone"  # ended with the connection


def test_a_damaged_handle_key_is_a_clear_error(brain):
    from brain.errors import DamagedStore
    from brain.mcp import handles

    sid = brain.coord.start_session("backend").id
    handle = handles.mint(brain, sid, None)
    assert handles.resolve(brainlib.open(brain.repo), handle, None) == sid  # another process verifies it
    with pytest.raises(brainlib.errors.SessionHandleRefused) as refused:
        handles.resolve(brain, handle, "alice")
    assert refused.value.reason == "foreign"
    (brain.store_dir / handles.KEY_FILE).write_bytes(b"short")
    with pytest.raises(DamagedStore):
        handles.mint(brainlib.open(brain.repo), sid, None)


def test_territories_check_a_handle_sessions_role_under_both_revisions(brain, repo, monkeypatch):
    """Two stateless callers on one server: the lead's handle may write now.md, the reviewer's may not, whichever
    way each connects; the server's shared session (role of the client) never decides for them."""
    for var in ("BRAIN_ROLE", "BRAIN_SESSION"):
        monkeypatch.delenv(var, raising=False)
    (brain.dir / "brain.yml").write_text("version: 1\nterritories:\n  now.md: lead\n")

    async def main(url: str, mode: str):
        with anyio.fail_after(BOUND):
            async with Client(url, mode=mode) as client:
                lead = (await client.call_tool("brain_session_start", {"role": "lead"})).structured_content
                review = (await client.call_tool("brain_session_start", {"role": "review"})).structured_content
                refused = await client.call_tool("brain_write", {"path": "now.md", "text": "# Now\n\nreview\n"},
                                                 meta={"brain/session": review["handle"]})
                anonymous = await client.call_tool("brain_write", {"path": "now.md", "text": "# Now\n\nanyone\n"})
                wrote = await client.call_tool("brain_write", {"path": "now.md", "text": f"# Now\n\n{mode}\n"},
                                               meta={"brain/session": lead["handle"]})
                return refused, anonymous, wrote

    for mode in (MODERN_PROTOCOL_VERSIONS[-1], "legacy"):
        with serve_http(repo, server_env()) as url:
            refused, anonymous, wrote = anyio.run(main, url, mode)
        assert refused.is_error and refused.structured_content["error"] == "territory", mode
        assert anonymous.is_error and anonymous.structured_content["error"] == "territory", mode  # role: the client
        assert not wrote.is_error, (mode, wrote.content)
        assert brain.read("now.md").text == f"# Now\n\n{mode}\n"


def test_a_stateless_caller_is_on_the_board_from_its_session_start_and_an_ask_by_role_reaches_it(brain, repo):
    """The cold-start signal under the stateless revision: an ask by role waits for the caller's
    `brain_session_start` (its hello), then reaches it through its handle's inbox."""
    import threading

    from brain.coord.targets import arm_addressed

    lead = brain.coord.start_session("lead").id
    outcome: list = []

    def ask() -> None:
        armed = arm_addressed(brain.coord, lead, "review", "ready?", timeout=BOUND)
        outcome.append(brain.coord.wait(armed.ticket) if hasattr(armed, "question") else armed)

    async def main(url: str):
        with anyio.fail_after(BOUND):
            async with Client(url, mode=MODERN_PROTOCOL_VERSIONS[-1]) as client:
                started = (await client.call_tool("brain_session_start", {"role": "review"})).structured_content
                meta = {"brain/session": started["handle"]}
                items: list = []
                while not items:  # the ask is armed once the asker's wait sees the session
                    items = (await client.call_tool("inbox", {}, meta=meta)).structured_content["items"]
                    await anyio.sleep(0.05)
                await client.call_tool("reply", {"ticket": items[0]["ticket"], "answer": "yes"}, meta=meta)
                return started

    with serve_http(repo, server_env()) as url:
        asker = threading.Thread(target=ask)
        asker.start()
        try:
            started = anyio.run(main, url)
        finally:
            asker.join(BOUND)
    [result] = outcome
    assert (result.outcome, result.answer) == ("reply", "yes")
    assert brain.coord.get_ask(result.ticket).target == started["session"]


def test_a_token_that_ends_its_session_gets_a_new_one_and_its_old_handle_expires(brain, repo):
    alice, _ = brain.tokens.create("alice", role="backend")

    async def main(url: str):
        with anyio.fail_after(BOUND):
            async with _http_client(url, MODERN_PROTOCOL_VERSIONS[-1], {"Authorization": f"Bearer {alice}"}) as c:
                first = (await c.call_tool("brain_session_start", {})).structured_content
                ended = await c.call_tool("brain_session_end", {}, meta={"brain/session": first["handle"]})
                old = await c.call_tool("brain_sessions", {}, meta={"brain/session": first["handle"]})
                now = (await c.call_tool("brain_sessions", {})).structured_content["you"]
                return first, ended, old, now

    with serve_http(repo, server_env()) as url:
        first, ended, old, now = anyio.run(main, url)
    assert not ended.is_error
    assert old.is_error and old.structured_content["reason"] == "expired"
    assert now != first["session"] and brain.tokens.owns("alice", now)


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_at_every_handshake_version_raw_http_callers_with_handles_are_separate_sessions(brain, repo, version):
    """The SDK client offers only the newest handshake version: raw JSON-RPC over HTTP covers the older ones."""
    import json

    from test_team_helpers import post

    def rpc(url: str, method: str, params: dict, handle: str | None = None) -> dict:
        headers = {"MCP-Protocol-Version": version, **({"Brain-Session": handle} if handle else {})}
        status, body = post(url, None, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                   "params": params}).encode(), headers)
        assert status == 200, body
        return json.loads(body)["result"]

    with serve_http(repo, server_env()) as url:
        init = rpc(url, "initialize", {"protocolVersion": version, "capabilities": {},
                                       "clientInfo": {"name": "raw", "version": "1"}})
        assert init["protocolVersion"] == version
        grants = []
        for role, item in (("backend", "src/api/**"), ("frontend", "src/api/routes.py"), ("review", "src/")):
            started = rpc(url, "tools/call", {"name": "brain_session_start", "arguments": {"role": role}})
            handle = started["structuredContent"]["handle"]
            grants.append(rpc(url, "tools/call", {"name": "brain_claim", "arguments": {"item": item}},
                              handle)["structuredContent"])
        overlaps = brain.coord.overlaps()
    assert len({g["session"] for g in grants}) == 3
    assert [len(g["overlaps"]) for g in grants] == [0, 1, 2] and len(overlaps) == 3


def test_an_http_servers_instructions_tell_a_caller_to_start_its_session(brain):
    from brain.mcp.server import build_server

    assert "brain_session_start" in build_server(brain, transport="http").instructions
    assert "brain_session_start" not in build_server(brain, transport="stdio").instructions  # one connection: one agent
