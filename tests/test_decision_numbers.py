"""Decision records sharing a number after a merge: `brain decisions --renumber`, with real clones and branches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git

import brain as brainlib
from brain.decisions import duplicate_numbers, load_decisions


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, timeout=60)


def files(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted((repo / ".brain").rglob("*"))
            if p.is_file() and "runtime" not in p.parts}


def test_a_pull_keeps_the_teammates_number_and_moves_ours(tmp_path):
    """Two clones through one bare remote each create decision 0001; the one pushed first keeps it."""
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "origin.git")
    alice = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "origin.git", "alice")
    git(alice, "checkout", "-q", "-b", "main")
    (alice / "app.py").write_text("x = 1\n")
    brainlib.init(alice)
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "init")
    git(alice, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", "-b", "main", "origin.git", "bob")
    bob = tmp_path / "bob"
    assert cli(alice, "decision", "new", "Use tabs", "--status", "accepted").returncode == 0
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "alice")
    git(alice, "push", "-q", "origin", "main")
    assert cli(bob, "decision", "new", "Use spaces", "--status", "accepted").returncode == 0
    git(bob, "add", "-A")
    git(bob, "commit", "-q", "-m", "bob")
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    merged = subprocess.run(["git", "pull", "-q", "--no-rebase", "origin", "main"], cwd=bob, capture_output=True,
                            text=True, env={**os.environ, **identity})
    assert merged.returncode != 0  # decisions.md conflicts: both sides added line 0001
    git(bob, "branch", "-q", "--set-upstream-to=origin/main")

    before = files(bob)
    plan = cli(bob, "decisions", "--renumber", "--dry-run", "--json")
    assert plan.returncode == 0, plan.stderr
    assert files(bob) == before  # a dry run writes nothing
    done = cli(bob, "decisions", "--renumber", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert json.loads(plan.stdout)["moves"] == result["moves"]
    assert result["kept"] == {"1": ".brain/decisions/0001-use-tabs.md"}
    assert result["moves"] == [{"number": 1, "to": 2, "path": ".brain/decisions/0001-use-spaces.md",
                                "new_path": ".brain/decisions/0002-use-spaces.md"}]
    moved = (bob / ".brain/decisions/0002-use-spaces.md").read_text()
    assert moved.startswith("# 0002. Use spaces\n")
    index = (bob / ".brain/decisions.md").read_text()
    assert "- 0001 [accepted] Use tabs" in index and "- 0002 [accepted] Use spaces" in index
    assert "<<<<<<<" not in index

    git(bob, "add", "-A", ".brain")
    git(bob, "commit", "-q", "-m", "merge")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--no-rebase", "origin", "main")  # clean for the teammate: nothing of hers moved
    records = load_decisions(brainlib.open(alice))
    assert [(r.number, r.title) for r in records] == [(1, "Use tabs"), (2, "Use spaces")]
    doctor = json.loads(cli(alice, "doctor", "--json").stdout)
    check = next(c for c in doctor if c["check"] == "decisions")
    assert check["ok"]


def _a_record_on_each_branch(repo, *main_titles: str):
    """A repository whose branch `topic` (no upstream) took decision 1 while main took 1 (and more): the
    two records share a number once either branch merges the other."""
    b = brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "checkout", "-q", "-b", "topic")
    b.new_decision("Topic choice")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "topic")
    git(repo, "checkout", "-q", "main")
    for title in main_titles:
        b.new_decision(title)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    return b


def test_a_topic_branch_merged_into_main_moves_the_branchs_record(repo):
    """Merging a worktree's branch into main (no upstream): main's record keeps its number."""
    b = _a_record_on_each_branch(repo, "Main choice", "Main second")
    subprocess.run(["git", "merge", "-q", "topic"], cwd=repo, capture_output=True)
    result = b.renumber_decisions()
    assert result["kept"] == {1: ".brain/decisions/0001-main-choice.md"}
    assert [(m["path"], m["to"]) for m in result["moves"]] == [(".brain/decisions/0001-topic-choice.md", 3)]
    assert not duplicate_numbers(load_decisions(b))
    assert b.renumber_decisions()["moves"] == []  # a second run has nothing to do


def test_a_topic_branch_catching_up_with_main_moves_its_own_record(repo):
    """An agent's branch (no upstream) merges main in: main's record, which others already cite, keeps its number."""
    b = _a_record_on_each_branch(repo, "Main choice")
    git(repo, "checkout", "-q", "topic")
    subprocess.run(["git", "merge", "-q", "main"], cwd=repo, capture_output=True)
    result = b.renumber_decisions()
    assert result["kept"] == {1: ".brain/decisions/0001-main-choice.md"}
    assert [(m["path"], m["to"]) for m in result["moves"]] == [(".brain/decisions/0001-topic-choice.md", 2)]
    assert not duplicate_numbers(load_decisions(b))


def test_without_git_the_order_is_the_paths_and_citations_are_listed(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    b = brainlib.init(plain)
    folder = b.dir / "decisions"
    (folder / "0001-alpha.md").write_text("# 0001. Alpha\n\n- Status: accepted\n")
    (folder / "0001-beta.md").write_text("# 1. Beta\n\n- Status: accepted\n")
    (folder / "0002-gamma.md").write_text("# 0002. Gamma\n\n- Status: accepted\n- Supersedes: 0001\n")
    result = b.renumber_decisions()
    assert result["moves"] == [{"number": 1, "to": 3, "path": ".brain/decisions/0001-beta.md",
                                "new_path": ".brain/decisions/0003-beta.md"}]
    assert result["mentions"] == {1: [".brain/decisions/0002-gamma.md"]}  # may mean either record: reported
    assert (folder / "0003-beta.md").read_text().startswith("# 3. Beta\n")  # the title's own style kept
    assert not (folder / "0001-beta.md").exists()


def test_the_cli_refuses_dry_run_alone_and_reports_duplicates_on_reindex(brain):
    folder = brain.dir / "decisions"
    (folder / "0001-a.md").write_text("# 0001. A\n")
    (folder / "0001-b.md").write_text("# 0001. B\n")
    refused = cli(brain.repo, "decisions", "--dry-run")
    assert refused.returncode == 2 and not refused.stdout
    out = cli(brain.repo, "decisions", "--reindex", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["duplicates"] == [1]
    assert (folder / "0001-b.md").exists()  # a reindex never renames
