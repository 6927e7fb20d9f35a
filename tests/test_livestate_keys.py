"""Look-alike live-state keys: a key equal to a session id (or an existing key) but for case, spaces or a
compatibility form is that key, never a second row beside it; invisible characters are refused. Both backends."""

from __future__ import annotations

import pytest

from brain.errors import InvalidInput
from brain.livestate import LiveState
from coordkit import backend, backend_spec, clock, make_coord  # noqa: F401  (fixtures)


@pytest.fixture
def coord(backend, clock):
    backend.migrate()
    return make_coord(backend, clock)


@pytest.mark.parametrize("spoof", [" {sid}", "{sid} ", "{upper}", "  {sid}\t", "{fullwidth}"])
def test_a_look_alike_of_a_session_id_is_that_session_key(coord, spoof):
    sid = coord.start_session("lead").id
    coord.livestate.set(sid, intent="the real intent", writer=sid)
    fake = spoof.format(sid=sid, upper=sid.upper(),
                        fullwidth="".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in sid))
    coord.livestate.set(fake, intent="a fake row", writer="intruder")
    rows = coord.livestate.read()
    assert [r.key for r in rows] == [sid]  # one row, under the session's own spelling
    assert coord.livestate.read(fake)[0].key == sid


def test_keys_that_differ_only_in_case_are_one_row(coord):
    coord.livestate.set("Release-Train", intent="first")
    coord.livestate.set("release-train", progress="second")
    rows = coord.livestate.read()
    assert [(r.key, r.intent, r.progress) for r in rows] == [("Release-Train", "first", "second")]


@pytest.mark.parametrize("bad", ["sess\u200b-x", "x\u202ey", "a\x00b", "\u2060"])
def test_invisible_or_control_characters_in_a_key_are_refused(coord, bad):
    with pytest.raises(InvalidInput) as caught:
        coord.livestate.set(bad, intent="x")
    assert caught.value.field == "key"
    assert coord.livestate.read() == []


def test_livestate_alone_normalizes_without_sessions(backend, clock):
    backend.migrate()
    live = LiveState(backend, clock=clock)
    live.set("  a  b ", intent="x")
    assert [e.key for e in live.read()] == ["a b"]


def test_over_the_team_server_a_look_alike_of_another_tokens_session_is_forbidden(brain, repo):
    pytest.importorskip("mcp")
    import brain as brainlib
    from test_team_helpers import client_for, run, team_server

    b = brainlib.open_brain(repo)
    alice, _ = b.tokens.create("alice", role="backend", machine="m1")
    bob, _ = b.tokens.create("bob", role="frontend", machine="m2")
    with team_server(repo) as url:
        async def body():
            async with client_for(url, alice, "a") as a, client_for(url, bob, "b") as bb:
                sb = (await bb.call_tool("brain_sessions", {})).structured_content["you"]
                await bb.call_tool("workstate_set", {"intent": "b's intent"})
                return [await a.call_tool("workstate_set", {"key": key, "intent": "spoofed"})
                        for key in (" " + sb, sb.upper(), "FRONTEND", " frontend")]

        results = run(body)
    for result in results:
        assert result.is_error and result.structured_content["error"] == "forbidden", result.structured_content
    rows = brainlib.open_brain(repo).coord.livestate.read()
    assert [r.intent for r in rows] == ["b's intent"]
