"""Conversations of agents in other worktrees, read from one checkout: git's worktree list, the CLI and the web UI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

import brain as brainlib
from brain.checkout import locate_checkout, sibling_worktrees


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture
def worktrees(repo):
    """A committed brain in ``repo`` and two linked worktrees; an agent talked in the first one."""
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    first, second = repo.parent / "wt-parser", repo.parent / "wt-docs"
    git(repo, "worktree", "add", "-q", str(first), "-b", "parser-fix")
    git(repo, "worktree", "add", "-q", str(second), "-b", "docs")
    agent = brainlib.open(first)
    for i in range(1, 61):
        agent.record_turn(None, "user" if i % 2 else "agent-parser", f"turn {i}: the parser drops comments",
                          to="agent-parser" if i % 2 else "user")
    thread = agent.thread_between("agent-parser", "user")
    return repo, first, second, thread


def test_sibling_worktrees_are_gits_own_list(worktrees):
    repo, first, second, _ = worktrees
    listed = git(repo, "worktree", "list", "--porcelain")
    roots = {Path(line[len("worktree "):]).resolve() for line in listed.splitlines() if line.startswith("worktree ")}
    for here in (repo, first, second):
        others = sibling_worktrees(locate_checkout(here))
        assert {o.root for o in others} == roots - {here.resolve()}
    names = {o.name: o.branch() for o in sibling_worktrees(locate_checkout(repo))}
    assert names == {"wt-parser": "parser-fix", "wt-docs": "docs"}

    planted = repo / ".git" / "worktrees" / "planted"  # a folder naming a worktree that does not name it back
    planted.mkdir()
    (planted / "gitdir").write_text(str(repo / ".git") + "\n")
    git(repo, "worktree", "remove", "--force", str(second))
    assert {o.name for o in sibling_worktrees(locate_checkout(repo))} == {"wt-parser"}


def test_the_cli_lists_and_reads_another_worktrees_conversation(worktrees):
    repo, first, second, thread = worktrees
    plain = cli(repo, "log")
    assert plain.returncode == 0 and "1 conversation(s) in other worktrees" in plain.stdout
    listed = cli(repo, "log", "--worktrees", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["threads"] == []
    by_name = {w["worktree"]: w for w in data["worktrees"]}
    assert by_name["wt-parser"]["branch"] == "parser-fix"
    assert [t["thread"] for t in by_name["wt-parser"]["threads"]] == [thread]
    assert "wt-docs" not in by_name  # no agent talked there: nothing to list

    page = json.loads(cli(repo, "log", thread, "--worktree", "wt-parser", "--page", "1", "--size", "10", "--json").stdout)
    assert page["total"] == 60 and page["turns"][0]["text"].startswith("turn 1:")
    from_docs = cli(second, "log", thread, "--worktree", "wt-parser", "--json")  # a sibling of a sibling
    assert json.loads(from_docs.stdout)["total"] == 60
    assert cli(repo, "log", thread, "--worktree", "../wt-parser").returncode == 5  # a name, never a path
    assert cli(repo, "log", thread, "--worktree", "nope").returncode == 5
    assert cli(repo, "log", "--worktree", "wt-parser").returncode == 2
    assert cli(repo, "log", thread).returncode == 5  # this checkout's own log does not have it


def test_the_web_ui_shows_and_pages_another_worktrees_thread(worktrees):
    from starlette.testclient import TestClient

    from brain.web import create_app

    repo, first, _, thread = worktrees
    b = brainlib.open(repo)
    with TestClient(create_app(b, warm=False), base_url="http://127.0.0.1") as c:
        listing = c.get("/threads")
        assert listing.status_code == 200 and "In worktree" in listing.text and "wt-parser" in listing.text
        link = f"/threads/{thread}?worktree=wt-parser"
        assert link.replace("+", "%2B") in listing.text or link in listing.text
        last = c.get(f"/threads/{thread}", params={"worktree": "wt-parser"})
        assert last.status_code == 200 and "turn 60:" in last.text and "page 2 of 2" in last.text
        handoff = brainlib.open(first).conversations.handoff(thread)
        assert handoff is not None and "No handoff summary yet" not in last.text
        assert "worktree=wt-parser&amp;page=1" in last.text  # the pager stays in that worktree
        step = c.get(f"/threads/{thread}", params={"worktree": "wt-parser", "page": "1", "upto": "2"},
                     headers={"HX-Request": "true"})
        assert "turn 2:" in step.text and "turn 3:" not in step.text and "worktree=wt-parser&amp;page=1&amp;upto=3" in step.text
        for bad in ("../wt-parser", "nope", str(first)):
            assert c.get(f"/threads/{thread}", params={"worktree": bad}).status_code == 404
        assert c.get(f"/threads/{thread}").status_code == 404  # not in this checkout's own log
