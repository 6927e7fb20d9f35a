"""What users do (issue 19, item 7): three agents in three git worktrees of one repository, each its own
`brain serve` process spoken to by the official SDK client over stdio, on both backends.

Overlapping claims are reported across worktrees, a broadcast reaches every other agent, an ask is answered
from another worktree, and one agent killed with SIGKILL loses its claims at once and an ask to it ends
`stalled`; the board shows all three with their worktree and branch throughout.
"""

from __future__ import annotations

import os
from contextlib import AsyncExitStack

import anyio
import pytest

import brain as brainlib
from brain.backends.testing import isolated_postgres
from conftest import git

pytest.importorskip("mcp")

from test_mcp_helpers import BOUND, RawStdioServer, stdio_params  # noqa: E402

pytestmark = pytest.mark.timeout(240)

TREES = (("wt-1", "feature-1", "alpha"), ("wt-2", "feature-2", "beta"), ("wt-3", "feature-3", "gamma"))


@pytest.fixture
def trees(tmp_path, repo):
    """A repository with a committed brain and three linked worktrees, each on its own branch."""
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    for name, branch, _ in TREES:
        git(repo, "worktree", "add", "-q", "-b", branch, str(tmp_path / name))
    return {name: tmp_path / name for name, _, _ in TREES} | {"main": repo}


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_env(request):
    if request.param == "postgresql":
        with isolated_postgres(request.getfixturevalue("postgres_url")) as url:
            yield {"BRAIN_BACKEND": url}
    else:
        yield {}


def call(raw: RawStdioServer, name: str, arguments: dict) -> dict:
    """One tools/call over the raw stdio pipe: the structured result, failing the test on a tool error."""
    result = raw.send("tools/call", {"name": name, "arguments": arguments})["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


async def structured(client, name: str, arguments: dict | None = None) -> dict:
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result
    return result.structured_content


def where(board_row: dict) -> tuple[str | None, str | None]:
    return board_row["worktree"], board_row["branch"]


def test_three_agents_in_three_worktrees_coordinate_and_survive_one_killed(trees, backend_env):
    from mcp import Client

    from brain.web.views import claims_board, work_state

    opened = brainlib.open(trees["main"], env={**os.environ, **backend_env})
    broadcast = opened.coord.broadcast_address
    # the third agent is a server process the test owns, so it can be killed with SIGKILL
    gamma = RawStdioServer(trees["wt-3"], BRAIN_ROLE="gamma", **backend_env)
    try:
        init = gamma.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "gamma-client", "version": "1"}})
        assert "result" in init
        gamma.send("notifications/initialized", notify=True)
        me_c = call(gamma, "brain_sessions", {})["you"]
        held_c = call(gamma, "brain_claim", {"item": "src/lexer.py", "ttl": 3600})["claim"]

        async def scenario():
            with anyio.fail_after(BOUND * 2):
                async with AsyncExitStack() as stack:
                    a = await stack.enter_async_context(
                        Client(stdio_params(trees["wt-1"], BRAIN_ROLE="alpha", **backend_env)))
                    b = await stack.enter_async_context(
                        Client(stdio_params(trees["wt-2"], BRAIN_ROLE="beta", **backend_env)))
                    me_a = (await structured(a, "brain_sessions"))["you"]
                    me_b = (await structured(b, "brain_sessions"))["you"]
                    out = {"a": me_a, "b": me_b}

                    # one file, two worktrees: one item, the overlap reported to the second claimer
                    grant_a = await structured(a, "brain_claim", {"item": "src/parser.py"})
                    assert grant_a["overlaps"] == []
                    grant_b = await structured(b, "brain_claim", {"item": "src/parser.py"})
                    assert [o["session"] for o in grant_b["overlaps"]] == [me_a]
                    out["claim_a"] = grant_a["claim"]

                    # a broadcast from the third worktree reaches both others
                    sent = call(gamma, "brain_signal", {"target": broadcast, "text": "rebasing main, hold pushes"})
                    assert sorted(sent["recipients"]) == sorted([me_a, me_b])
                    for client in (a, b):
                        items = (await structured(client, "brain_signals"))["items"]
                        assert [(s["sender"], s["body"]) for s in items] == [(me_c, "rebasing main, hold pushes")]

                    # an ask from wt-1 answered from wt-2
                    answer: dict = {}

                    async def ask():
                        answer.update(await structured(a, "ask_agent", {"target": me_b,
                                                                        "question": "is the parser API frozen?"}))

                    async def reply():
                        with anyio.fail_after(BOUND):
                            while True:
                                items = (await structured(b, "inbox"))["items"]
                                if items:
                                    break
                                await anyio.sleep(0.02)  # polling the inbox, bounded by fail_after
                        [item] = items
                        assert (item["from"], item["question"]) == (me_a, "is the parser API frozen?")
                        await structured(b, "reply", {"ticket": item["ticket"], "answer": "yes, frozen"})

                    async with anyio.create_task_group() as group:
                        group.start_soon(ask)
                        group.start_soon(reply)
                    assert (answer["outcome"], answer["answer"]) == ("reply", "yes, frozen")

                    # the board: all three, each with its worktree and branch, and the cross-worktree overlap
                    rows = {r["id"]: r for r in work_state(opened)["sessions"]}
                    assert {sid: where(rows[sid]) for sid in (me_a, me_b, me_c)} == {
                        me_a: ("wt-1", "feature-1"), me_b: ("wt-2", "feature-2"), me_c: ("wt-3", "feature-3")}
                    board = claims_board(opened)
                    [pair] = board["overlaps"]
                    assert {pair["where_a"], pair["where_b"]} == {"wt-1 · feature-1", "wt-2 · feature-2"}

                    # the third agent is killed: its claim stops counting at once, an ask to it ends stalled
                    gamma.proc.kill()
                    gamma.proc.wait(timeout=BOUND)
                    grant = await structured(b, "brain_claim", {"item": "src/lexer.py"})
                    assert grant["overlaps"] == []
                    asked = await structured(a, "ask_agent", {"target": me_c, "question": "still there?",
                                                              "timeout": 120})
                    assert asked["outcome"] == "stalled"
                    listed = {s["id"]: s for s in (await structured(a, "brain_sessions",
                                                                    {"include_gone": True}))["sessions"]}
                    assert listed[me_c]["liveness"] == "gone"
                    assert {listed[me_a]["liveness"], listed[me_b]["liveness"]} == {"alive"}
                    return out

        out = anyio.run(scenario)
    finally:
        if gamma.proc.poll() is None:
            gamma.proc.kill()
            gamma.proc.wait(timeout=BOUND)

    # after the two clients closed: the killed agent's claim is expired in the audit, the others' released
    audit = opened.coord.history(subject=f"claim:{held_c}")
    assert "expire" in [e.action for e in audit]
    board = claims_board(opened)
    assert all(c["session"] != me_c for c in board["claims"]), board
    assert out["a"] != out["b"] != me_c
