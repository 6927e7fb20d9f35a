"""Satellite repositories: commit on write in the owning repo, `brain sync` through a bare remote, conflicts kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import brain as brainlib
from brain.errors import SyncConflict
from conftest import git

pytestmark = pytest.mark.timeout(180)


def log_messages(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%B%x00").split("\x00")


def enable_commits(b, extra: str = "") -> "brainlib.Brain":
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n" + extra)
    return brainlib.open_brain(b.repo)


def test_off_by_default_writes_do_not_commit(brain, repo):
    head = git(repo, "rev-parse", "HEAD")
    brain.write("notes/a.md", "a\n", role="lead", reason="why")
    assert git(repo, "rev-parse", "HEAD") == head


def test_write_commits_only_its_path_naming_writer_and_reason(brain, repo):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init brain")
    b = enable_commits(brain)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "settings")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")  # someone's staged code change stays out of the memory commit
    b.write("notes/api.md", "# API\n", role="backend", reason="document the API\nsecond line sk-ant-" + "z" * 24)
    message = log_messages(repo)[0]
    assert message.startswith("memory: .brain/notes/api.md by backend — document the API")
    assert "Writer: backend" in message and "Machine: testbox" in message and "sk-ant-" + "z" * 24 not in message
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [".brain/notes/api.md"]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["code.py"]
    head = git(repo, "rev-parse", "HEAD")
    b.write("notes/api.md", "# API\n", role="backend")  # same content: no empty commit
    assert git(repo, "rev-parse", "HEAD") == head


def test_layer_and_declared_satellites_get_their_own_commits(brain, repo, brain_home):
    b = enable_commits(brain, "  satellites: [notes/todo]\n")
    kernel = b.layers.path("kernel")
    git(kernel, "init", "-q", "-b", "main")
    todo = b.dir / "notes" / "todo"
    todo.mkdir(parents=True)
    git(todo, "init", "-q", "-b", "main")
    project_head = git(repo, "rev-parse", "HEAD")
    b.write("agents/reviewer.md", "# reviewer\n", layer="kernel", role="kernel-scribe", reason="new profile")
    b.write("notes/todo/today.md", "- ship\n", role="lead")
    assert log_messages(kernel)[0].startswith("memory: kernel:agents/reviewer.md by kernel-scribe — new profile")
    assert log_messages(todo)[0].startswith("memory: today.md by lead")
    assert git(repo, "rev-parse", "HEAD") == project_head
    repos = {r.kind: r for r in __import__("brain.sync", fromlist=["memory_repos"]).memory_repos(b)}
    assert set(repos) == {"project", "kernel", "satellite"}
    assert repos["project"].excluded == (".brain/notes/todo",)
    b.sync(push=False)  # the project commits its memory, never the nested repository as a gitlink
    assert ".brain/notes/todo" not in git(repo, "ls-files", "-s")


@pytest.fixture
def two_clones(tmp_path, repo, brain):
    """A bare remote and two clones of the project (the second one with its own BRAIN_HOME)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
    other = tmp_path / "machine2"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    b1 = brainlib.open_brain(repo)
    b2 = brainlib.open_brain(other, env={**os.environ, "BRAIN_HOME": str(tmp_path / "home2"), "BRAIN_MACHINE": "m2"})
    return b1, b2, remote


def test_sync_merges_disjoint_writes_both_ways(two_clones):
    b1, b2, remote = two_clones
    b1.write("notes/one.md", "from machine 1\n", role="a")
    b2.write("notes/two.md", "from machine 2\n", role="b")
    r1 = b1.sync()
    assert [r.status for r in r1.repos] == ["pushed"] and r1.repos[0].committed
    r2 = b2.sync()
    assert r2.repos[0].status == "pulled_pushed" and r2.repos[0].pulled >= 1
    assert b1.sync().repos[0].status == "pulled"
    for b in (b1, b2):
        assert b.read("notes/one.md").text == "from machine 1\n" and b.read("notes/two.md").text == "from machine 2\n"
    assert b1.sync().repos[0].status == "up_to_date"


def test_a_real_conflict_stops_with_both_sides_kept(two_clones):
    b1, b2, remote = two_clones
    b1.write("now.md", "# Now\n\nmachine 1 plan\n")
    b1.sync()
    remote_head = git(remote, "rev-parse", "main")
    b2.write("now.md", "# Now\n\nmachine 2 plan\n")
    report = b2.sync()
    conflict = report.conflicts[0]
    assert conflict.status == "conflict" and conflict.conflicts == [".brain/now.md"]
    assert b2.read("now.md").text == "# Now\n\nmachine 2 plan\n"  # local side kept, no markers
    assert "machine 1 plan" in git(b2.repo, "show", f"{conflict.remote}:.brain/now.md")  # remote side kept
    assert git(remote, "rev-parse", "main") == remote_head  # nothing pushed
    assert not (b2.repo / ".git" / "MERGE_HEAD").exists()
    out = subprocess.run([sys.executable, "-m", "brain", "sync", "--json"], cwd=b2.repo, capture_output=True,
                         text=True, timeout=60, env={**os.environ, **{k: v for k, v in b2.env.items()
                                                                      if k.startswith("BRAIN_")}})
    assert out.returncode == SyncConflict.exit_code
    assert json.loads(out.stdout)["conflicts"] == 1
    assert json.loads(out.stderr)["files"] == [".brain/now.md"]


def test_layer_repositories_sync_against_their_remotes(tmp_path, brain, brain_home):
    kernel = brain.layers.path("kernel")
    (kernel / "agents" / "a.md").write_text("# a\n")
    git(kernel, "init", "-q", "-b", "main")
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "-m", "kernel")
    remote = tmp_path / "kernel.git"
    git(tmp_path, "clone", "-q", "--bare", str(kernel), str(remote))
    git(kernel, "remote", "add", "origin", str(remote))
    brain.write("agents/b.md", "# b\n", layer="kernel")
    report = {r.kind: r for r in brain.sync().repos}
    assert report["kernel"].status == "pushed" and report["kernel"].committed
    assert "agents/b.md" in git(remote, "ls-tree", "-r", "--name-only", "main")
    assert report["project"].status == "no_remote"


def test_a_failed_commit_keeps_the_write_and_sync_commits_it_later(brain, repo):
    b = enable_commits(brain)
    (repo / ".git" / "index.lock").write_text("")  # another git process holds the index
    doc = b.write("notes/pending.md", "kept\n", role="lead")
    assert (b.dir / "notes/pending.md").read_text() == "kept\n" and doc.text == "kept\n"
    assert ".brain/notes/pending.md" not in git(repo, "ls-files")
    (repo / ".git" / "index.lock").unlink()
    assert b.sync().repos[0].committed
    assert ".brain/notes/pending.md" in git(repo, "ls-files")
