"""`sync.commit_on_write` and git composed (issue 19, item 4), with real repositories and real commits.

Inside a git operation (brain's pre-commit hook, a merge or rebase stopped for the user, another
git command holding the index) brain never commits on its own; outside one, a `brain map` or a
`report-done` is one commit naming its writer, never one per card.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import brain as brainlib

pytestmark = pytest.mark.timeout(180)

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.invalid"}
MODULES = ("pay", "ship", "stock")


def git(repo, *args, check=True):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=check,
                          env={**os.environ, **ENV})


def brain_cli(repo, *args, **env):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **ENV, **env})


def head(repo) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def files_of(repo, rev="HEAD") -> list[str]:
    return sorted(git(repo, "show", "--name-only", "--format=", rev).stdout.split())


def write_module(repo, name: str, signature: str) -> None:
    (repo / name).mkdir(exist_ok=True)
    (repo / name / "__init__.py").write_text(f"def {name}({signature}) -> None:\n    pass\n")


@pytest.fixture
def committing(brain):
    """Three mapped modules, committed, with `sync.commit_on_write: true` committed too."""
    repo = brain.repo
    for name in MODULES:
        write_module(repo, name, "")
    brain.map()
    (brain.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code, cards and settings")
    return brainlib.open_brain(repo)


def test_a_commit_with_the_hook_installed_is_one_commit_of_code_and_card(committing):
    repo = committing.repo
    assert brain_cli(repo, "install", "git-hook").returncode == 0
    before = head(repo)
    write_module(repo, "pay", "amount: int")
    git(repo, "add", "pay/__init__.py")
    commit = git(repo, "commit", "-q", "-m", "pay an amount", check=False)
    assert commit.returncode == 0, commit.stderr
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before  # one commit: the user's
    assert files_of(repo) == [".brain/modules/pay.md", "pay/__init__.py"]
    assert "amount: int" in git(repo, "show", "HEAD:.brain/modules/pay.md").stdout
    assert git(repo, "status", "--porcelain").stdout == ""  # nothing left staged or modified


def test_a_commit_of_named_paths_with_the_hook_is_one_commit_too(committing):
    """`git commit PATH` gives the hook a temporary index (GIT_INDEX_FILE=index.lock): the card goes there."""
    repo = committing.repo
    assert brain_cli(repo, "install", "git-hook").returncode == 0
    before = head(repo)
    write_module(repo, "ship", "fast: bool")
    commit = git(repo, "commit", "-q", "-a", "-m", "ship fast", check=False)
    assert commit.returncode == 0, commit.stderr
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before
    assert files_of(repo) == [".brain/modules/ship.md", "ship/__init__.py"]


def test_map_refreshing_three_cards_is_one_commit_naming_the_writer(committing):
    repo = committing.repo
    before = head(repo)
    for name in MODULES:
        write_module(repo, name, "changed: int")
    out = brain_cli(repo, "map", "--json", BRAIN_SESSION="sess-20261202-0600-backend@testbox")
    assert out.returncode == 0, out.stderr
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before  # exactly one new commit
    assert files_of(repo) == [f".brain/modules/{name}.md" for name in MODULES]
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert message.startswith("memory: refresh ") and "by sess-20261202-0600-backend@testbox" in message
    assert "Writer: sess-20261202-0600-backend@testbox" in message


def test_report_done_with_a_how_to_use_is_one_commit(committing):
    repo = committing.repo
    before = head(repo)
    write_module(repo, "stock", "sku: str")
    committing.report_done("stock", how_to_use="Call stock() per SKU.\n", writer="sess-x-docs@testbox")
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before
    assert files_of(repo) == [".brain/modules/stock.md"]
    card = git(repo, "show", "HEAD:.brain/modules/stock.md").stdout
    assert "sku: str" in card and "Call stock() per SKU." in card
    assert "by sess-x-docs@testbox" in git(repo, "log", "-1", "--format=%s").stdout


def _diverge(repo, branch: str) -> None:
    """``branch`` and main change README.md apart: merging one into the other conflicts."""
    git(repo, "checkout", "-q", "-b", branch)
    (repo / "README.md").write_text(f"{branch} side\n")
    git(repo, "commit", "-q", "-am", f"{branch} side")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main side\n")
    git(repo, "commit", "-q", "-am", "main side")


def _stop_in_a_merge(repo) -> None:
    """A real merge stopped on a conflict (MERGE_HEAD), as a user leaves it to resolve by hand."""
    _diverge(repo, "other")
    assert git(repo, "merge", "-q", "other", check=False).returncode != 0
    assert (repo / ".git" / "MERGE_HEAD").exists()


def _stop_in_a_rebase(repo) -> None:
    """A real rebase stopped on a conflict (rebase-merge/)."""
    _diverge(repo, "topic")
    git(repo, "checkout", "-q", "topic")
    assert git(repo, "rebase", "main", check=False).returncode != 0
    assert (repo / ".git" / "rebase-merge").is_dir()


@pytest.mark.parametrize("stop", [_stop_in_a_merge, _stop_in_a_rebase], ids=["merge", "rebase"])
def test_no_brain_commit_while_a_merge_or_rebase_waits_for_the_user(committing, stop):
    repo = committing.repo
    stop(repo)
    before = head(repo)
    write_module(repo, "pay", "during: int")
    out = brain_cli(repo, "map")
    assert out.returncode == 0, out.stderr
    committing.write("notes/during.md", "written mid-operation\n", role="lead")
    assert head(repo) == before  # no commit of brain's own inside the user's operation
    staged = git(repo, "diff", "--cached", "--name-only").stdout.split()
    assert ".brain/modules/pay.md" in staged and ".brain/notes/during.md" in staged  # for the user's commit


def test_no_stage_and_no_commit_while_another_git_command_holds_the_index(committing):
    repo = committing.repo
    before = head(repo)
    (repo / ".git" / "index.lock").write_text("")
    try:
        write_module(repo, "pay", "held: int")
        assert brain_cli(repo, "map").returncode == 0
        assert head(repo) == before
    finally:
        (repo / ".git" / "index.lock").unlink()
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""  # the index was never touched
    assert "held: int" in (committing.dir / "modules/pay.md").read_text()  # the card stands, for the next commit


def test_a_hook_environment_means_inside_git(committing, monkeypatch):
    """GIT_INDEX_FILE (set by git for a commit's hooks) alone is enough: brain stages into that index."""
    repo = committing.repo
    before = head(repo)
    index = repo / ".git" / "hook-index"
    git(repo, "read-tree", "HEAD", f"--index-output={index}")
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    committing.write("notes/hooked.md", "from a hook\n", role="lead")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert head(repo) == before
    listed = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True,
                            env={**os.environ, "GIT_INDEX_FILE": str(index)}).stdout.split()
    assert ".brain/notes/hooked.md" in listed  # in git's index for the commit being made
    assert ".brain/notes/hooked.md" not in git(repo, "ls-files").stdout.split()  # not in the user's own index


def test_a_linked_worktree_in_a_merge_gets_no_brain_commit(committing, tmp_path):
    """A linked worktree keeps its operation state in its own git dir (.git/worktrees/NAME)."""
    repo = committing.repo
    tree = tmp_path / "second-tree"
    git(repo, "worktree", "add", "-q", "-b", "second", str(tree))
    (tree / "README.md").write_text("second side\n")
    git(tree, "commit", "-q", "-am", "second side")
    (repo / "README.md").write_text("main side\n")
    git(repo, "commit", "-q", "-am", "main side")
    assert git(tree, "merge", "-q", "main", check=False).returncode != 0  # stopped in the linked worktree
    before, main_before = head(tree), head(repo)
    write_module(tree, "pay", "linked: int")
    out = brain_cli(tree, "map")
    assert out.returncode == 0, out.stderr
    assert (head(tree), head(repo)) == (before, main_before)
    assert ".brain/modules/pay.md" in git(tree, "diff", "--cached", "--name-only").stdout.split()
    write_module(repo, "ship", "main_tree: int")  # the main checkout is in no operation: it commits as usual
    assert brain_cli(repo, "map").returncode == 0
    assert files_of(repo) == [".brain/modules/ship.md"] and head(repo) != main_before
