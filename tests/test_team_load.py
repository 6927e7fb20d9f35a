"""The team server under one token's load: waits hold no worker thread, each token has a call limit.

A real `brain serve --http` with two tokens, driven by the official SDK client (SQLite and
PostgreSQL coordination): one token's flood of concurrent `ask_agent` calls must leave the
asked token answered at once, and its asks replied, not stalled.
"""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from brain.backends.testing import isolated_postgres  # noqa: E402
from test_mcp_helpers import text_of  # noqa: E402
from test_team_helpers import client_for, run, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(120)

ANSWERED_WITHIN = 20.0  # seconds: a call that waits behind the flood is a failure, not a slow pass


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request):
    if request.param == "sqlite":
        yield None
        return
    with isolated_postgres(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.fixture
def loaded_team(brain, repo, backend_url):
    """A team server (token_calls 8) with tokens alice (the flood) and bob (the one asked)."""
    (brain.dir / "brain.yml").write_text("version: 1\nserver:\n  token_calls: 8\n  connections_per_client: 200\n")
    if backend_url:
        (brain.dir / "brain.local.yml").write_text(f"backend: '{backend_url}'\n")
    b = brainlib.open_brain(repo)
    alice, _ = b.tokens.create("alice", role="asker", machine="m1")
    bob, _ = b.tokens.create("bob", role="target", machine="m2")
    with team_server(repo) as url:
        yield url, alice, bob


def test_a_flood_of_asks_from_one_token_leaves_other_tokens_answered(loaded_team):
    """45 concurrent asks of one token: 8 wait (holding no worker thread), 37 are refused `busy` at once; the
    asked token's calls are answered while they wait, and its replies end the 8 asks as replies."""
    url, alice, bob = loaded_team
    results: list = []

    async def body():
        async with client_for(url, bob, "bob") as target:
            me = (await target.call_tool("brain_sessions", {})).structured_content["you"]
            async with client_for(url, alice, "alice") as asker:
                async with anyio.create_task_group() as tg:
                    async def ask(i: int) -> None:
                        results.append(await asker.call_tool("ask_agent", {"target": me, "question": f"q{i}?"}))

                    for i in range(45):
                        tg.start_soon(ask, i)
                    with anyio.fail_after(ANSWERED_WITHIN):  # the asked agent is served during the flood
                        while True:
                            inbox = (await target.call_tool("inbox", {})).structured_content["items"]
                            if len(inbox) >= 8 and len(results) >= 37:
                                break
                            await anyio.sleep(0.05)  # polling a condition, bounded by fail_after
                        sessions = await target.call_tool("brain_sessions", {})
                    assert not sessions.is_error, text_of(sessions)
                    for item in inbox:
                        replied = await target.call_tool("reply", {"ticket": item["ticket"],
                                                                   "answer": f"a:{item['question']}"})
                        assert not replied.is_error, text_of(replied)

    run(body)
    busy = [r for r in results if r.is_error]
    answered = [r for r in results if not r.is_error]
    assert len(busy) == 37 and len(answered) == 8
    for refused in busy:
        assert refused.structured_content["error"] == "busy"
        assert refused.structured_content["limit"] == 8 and refused.structured_content["principal"] == "alice"
    assert sorted(r.structured_content["outcome"] for r in answered) == ["reply"] * 8
    assert all(r.structured_content["answer"].startswith("a:q") for r in answered)


def test_the_call_limit_frees_as_calls_end(loaded_team):
    """Sequential calls never hit the limit: a slot is given back when its call ends (also when it failed)."""
    url, alice, _bob = loaded_team

    async def body():
        async with client_for(url, alice, "alice") as client:
            for _ in range(20):
                bad = await client.call_tool("ask_agent", {"target": "sess-nobody@nowhere", "question": "x"})
                assert bad.is_error and bad.structured_content["error"] == "not_found"
            ok = await client.call_tool("brain_sessions", {})
            assert not ok.is_error, text_of(ok)

    run(body)


def test_a_call_limit_of_zero_is_refused_not_unlimited(brain, repo):
    (brain.dir / "brain.yml").write_text("version: 1\nserver:\n  token_calls: 0\n")
    token, _ = brainlib.open_brain(repo).tokens.create("carol", role="dev")
    with team_server(repo) as url:
        async def body():
            async with client_for(url, token, "carol") as client:
                return await client.call_tool("brain_sessions", {})

        result = run(body)
    assert result.is_error and result.structured_content["error"] == "settings"
    assert result.structured_content["key"] == "server.token_calls"


def test_a_call_never_queues_behind_heavy_calls():
    """With the heavy lane full (every one of its threads held by a boot-like call, more queued), an ordinary
    call still gets a thread and is answered; the heavy ones then finish in their order."""
    import functools
    import threading

    from brain.mcp import calls

    HEAVY_CALLS = calls.TOOL_THREADS + calls.HEAVY_THREADS + 1
    release = threading.Event()
    started = threading.Semaphore(0)
    finished: list[int] = []

    def heavy(n: int) -> int:
        started.release()
        if not release.wait(ANSWERED_WITHIN):
            raise TimeoutError("never released")
        finished.append(n)
        return n

    async def body():
        async with anyio.create_task_group() as tg:
            for n in range(HEAVY_CALLS):  # more than every thread of both lanes: one limiter would be full
                tg.start_soon(functools.partial(calls.in_thread, heavy, n, heavy=True))
            for _ in range(calls.HEAVY_THREADS):
                await anyio.to_thread.run_sync(started.acquire, True, ANSWERED_WITHIN)
            with anyio.fail_after(ANSWERED_WITHIN):
                assert await calls.in_thread(lambda: "claimed") == "claimed"  # the light lane: answered meanwhile
            assert finished == []  # the heavy calls still hold their lane
            assert started.acquire(blocking=False) is False  # and no more of them run than its threads
            release.set()

    anyio.run(body)
    assert sorted(finished) == list(range(HEAVY_CALLS))


def test_boot_and_search_are_heavy_and_coordination_is_not():
    from brain.mcp.tools import collect

    registry = collect()
    heavy = {name for name, tool in registry.tools.items() if tool.heavy}
    assert heavy == {"brain_boot", "brain_search"}
