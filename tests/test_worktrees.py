"""Parallel agents in `git worktree`s of one repository see each other (issue 19, item 1).

Real git worktrees in temp folders, real CLI processes in each, both backends: claims overlapping
across worktrees, a signal sent in one received in the other, live state shared, sessions naming
their worktree and branch on every surface, and a removed worktree leaving no live session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import brain as brainlib
from brain.backends.testing import isolated_postgres
from conftest import git


@pytest.fixture
def trees(tmp_path, repo):
    """The main checkout with a committed brain, and two linked worktrees on their own branches."""
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    out = {"main": repo}
    for name, branch in (("wt-a", "feature-a"), ("wt-b", "feature-b")):
        git(repo, "worktree", "add", "-q", "-b", branch, str(tmp_path / name))
        out[name] = tmp_path / name
    return out


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request):
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        with isolated_postgres(url) as isolated:
            yield {"BRAIN_BACKEND": isolated, "BRAIN_ASK_TIMEOUT": "0"}
    else:
        yield {"BRAIN_ASK_TIMEOUT": "0"}


def run(folder, env, *args):
    out = subprocess.run([sys.executable, "-m", "brain", *args], cwd=folder, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=60)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out


def js(folder, env, *args):
    return json.loads(run(folder, env, *args, "--json").stdout)


def start(folder, env, role):
    return js(folder, env, "session", "start", "--role", role)["session"]


def test_the_same_file_claimed_in_two_worktrees_is_one_item_and_the_overlap_is_reported(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    b = start(trees["wt-b"], env, "beta")
    first = js(trees["wt-a"], env, "claim", "src/parser.py", "--session", a)
    assert first["overlaps"] == []
    second = js(trees["wt-b"], env, "claim", "./src//parser.py", "--session", b)
    assert [(o["session"], o["item"], o["claim"]) for o in second["overlaps"]] == [(a, "src/parser.py", first["claim"])]
    board = js(trees["main"], env, "claims")  # seen from a third checkout too
    assert sorted(c["item"] for c in board["claims"]) == ["src/parser.py", "src/parser.py"]
    assert {c["session"]: (c["worktree"], c["branch"]) for c in board["claims"]} == {
        a: ("wt-a", "feature-a"), b: ("wt-b", "feature-b")}
    [pair] = board["overlaps"]
    assert {(pair["a"]["worktree"], pair["a"]["branch"]), (pair["b"]["worktree"], pair["b"]["branch"])} == {
        ("wt-a", "feature-a"), ("wt-b", "feature-b")}
    text = run(trees["main"], env, "claims").stdout
    assert "wt-a (feature-a)" in text and "wt-b (feature-b)" in text


def test_an_absolute_path_inside_a_worktree_is_the_same_item_as_its_relative_path(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    b = start(trees["wt-b"], env, "beta")
    js(trees["wt-a"], env, "claim", str(trees["wt-a"] / "src" / "auth"), "--session", a)
    grant = js(trees["wt-b"], env, "claim", "src/auth/login.py", "--session", b)
    assert [o["item"] for o in grant["overlaps"]] == ["src/auth"]
    assert js(trees["wt-a"], env, "release", "--item", str(trees["wt-a"] / "src/auth"), "--session", a)["released"]


def test_a_signal_sent_in_one_worktree_is_received_in_the_other(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    b = start(trees["wt-b"], env, "beta")
    c = start(trees["main"], env, "gamma")
    broadcast = js(trees["main"], env, "session", "list")[0]["brain"] + "@testbox"
    assert broadcast == "project@testbox"  # the repository's name, the same in every worktree
    sent = js(trees["wt-a"], env, "signal", broadcast, "rebased onto main, pull before you push", "--session", a)
    assert sorted(sent["recipients"]) == sorted([b, c])
    js(trees["wt-b"], env, "signal", a, "done with the parser", "--session", b)
    [got_b] = js(trees["wt-b"], env, "signals", "--session", b, "--ack")
    assert (got_b["sender"], got_b["body"]) == (a, "rebased onto main, pull before you push")
    [got_a] = js(trees["wt-a"], env, "signals", "--session", a)
    assert (got_a["sender"], got_a["body"]) == (b, "done with the parser")


def test_live_state_and_asks_are_shared_between_worktrees(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    run(trees["wt-a"], env, "workstate", "--set", a, "--intent", "port the parser", "--status", "working")
    [entry] = js(trees["wt-b"], env, "workstate")
    assert (entry["key"], entry["intent"], entry["status"]) == (a, "port the parser", "working")
    b = start(trees["wt-b"], env, "beta")
    ask = subprocess.Popen([sys.executable, "-m", "brain", "ask", a, "is the API frozen?", "--session", b, "--json",
                            "--timeout", "120"], cwd=trees["wt-b"], stdout=subprocess.PIPE, text=True,
                           env={**os.environ, **env})
    try:
        inbox: list = []
        for _ in range(600):  # bounded: the ask is armed within a few polls of the CLI starting
            inbox = js(trees["wt-a"], env, "inbox", "--session", a)
            if inbox:
                break
        [item] = inbox
        run(trees["wt-a"], env, "reply", item["ticket"], "yes, frozen", "--session", a)
        out, _ = ask.communicate(timeout=60)
    finally:
        ask.kill()
        ask.wait()
    assert json.loads(out)["outcome"] == "reply" and json.loads(out)["answer"] == "yes, frozen"


def test_sessions_name_their_worktree_and_branch_in_the_list_the_boot_and_the_board(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    b = start(trees["wt-b"], env, "beta")
    listed = {s["id"]: (s["worktree"], s["branch"]) for s in js(trees["main"], env, "session", "list")}
    assert listed == {a: ("wt-a", "feature-a"), b: ("wt-b", "feature-b")}
    assert "in wt-b (feature-b)" in run(trees["wt-a"], env, "session", "list").stdout
    opened = brainlib.open(trees["main"], env={**os.environ, **env})
    state = opened.boot(record=False).text
    assert f"`{a}` (alive, in wt-a on feature-a)" in state and f"`{b}` (alive, in wt-b on feature-b)" in state
    js(trees["wt-a"], env, "claim", "src/x.py", "--session", a)
    js(trees["wt-b"], env, "claim", "src/x.py", "--session", b)
    from brain.web.views import claims_board, work_state

    rows = {r["id"]: (r["worktree"], r["branch"]) for r in work_state(opened)["sessions"]}
    assert rows == listed
    board = claims_board(opened)
    assert {c["where"] for c in board["claims"]} == {"wt-a · feature-a", "wt-b · feature-b"}
    assert {board["overlaps"][0]["where_a"], board["overlaps"][0]["where_b"]} == {"wt-a · feature-a",
                                                                                   "wt-b · feature-b"}


def test_a_removed_worktree_leaves_no_live_session_and_its_claims_stop_counting(trees, env):
    a = start(trees["wt-a"], env, "alpha")
    b = start(trees["wt-b"], env, "beta")
    js(trees["wt-b"], env, "claim", "src/parser.py", "--session", b)
    git(trees["main"], "worktree", "remove", "--force", str(trees["wt-b"]))
    assert [s["id"] for s in js(trees["main"], env, "session", "list")] == [a]
    board = js(trees["main"], env, "claims")
    assert board["claims"] == [] and board["overlaps"] == []
    assert js(trees["wt-a"], env, "claim", "src/parser.py", "--session", a)["overlaps"] == []
    gone = {s["id"]: s["liveness"] for s in js(trees["main"], env, "session", "list", "--all")}
    assert gone[b] == "gone"
    released = js(trees["main"], env, "audit", "--action", "release")
    assert [e["detail"]["reason"] for e in released] == ["worktree_removed"]


def test_every_worktree_has_the_same_brain_name_and_store(trees):
    opened = [brainlib.open(trees[name]) for name in ("main", "wt-a", "wt-b")]
    assert {b.name for b in opened} == {"project"}
    assert len({b.store_dir for b in opened}) == 1
    assert opened[0].store_dir.is_relative_to(trees["main"] / ".git")
    assert len({b.runtime for b in opened}) == 3  # the derived index, cards cache and logs stay per checkout


def test_an_mcp_server_in_a_worktree_sees_the_claims_of_another_and_shows_where_it_works(trees, env):
    """The official SDK client over stdio against `brain serve` started in one worktree; the other agent is a
    CLI process in another worktree."""
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    other = start(trees["wt-b"], env, "beta")
    held = js(trees["wt-b"], env, "claim", "src/parser.py", "--session", other)

    async def body(client):
        grant = await client.call_tool("brain_claim", {"item": "src/parser.py"})
        listed = await client.call_tool("brain_sessions", {})
        text = listed.content[0].text
        assert "in wt-b (feature-b)" in text and "(you) in wt-a (feature-a)" in text
        return grant.structured_content, listed.structured_content

    extra = {k: v for k, v in env.items() if k == "BRAIN_BACKEND"}
    grant, listed = with_client(stdio_params(trees["wt-a"], **extra), body)
    assert grant["overlaps"] == [{"session": other, "item": "src/parser.py", "claim": held["claim"]}]
    places = {s["id"]: (s["worktree"], s["branch"]) for s in listed["sessions"]}
    assert places[other] == ("wt-b", "feature-b") and places[listed["you"]] == ("wt-a", "feature-a")
