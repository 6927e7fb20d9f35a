"""A new worktree's search index starts as a copy of a sibling's: real repositories and worktrees in temp folders,
the index compared table by table and boot by boot with one built from nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import git
from test_index_build import dump, make_project

import brain as brainlib

TASK = "Model.save() crashes when the Latin-1 helper returns None"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def indexed_project(repo: Path) -> Path:
    """A project with a committed brain whose main tree has its index built."""
    make_project(repo, copies=2)
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "project")
    b = brainlib.open(repo)
    b.index.refresh()
    b.index.close()
    return repo


def add_worktree(repo: Path, name: str) -> Path:
    tree = repo.parent / name
    git(repo, "worktree", "add", "-q", str(tree), "-b", name)
    return tree


def code_tables(tree: Path) -> dict:
    """The code and function tables without the files' modification times: a worktree at the sibling's commit
    with nothing changed keeps the sibling's until a walk (git's stat data says the files are the same)."""
    with sqlite3.connect(tree / ".brain" / "runtime" / "index.db") as db:
        tables = dump(db)
    tables["code_files"] = [row[:3] + row[4:] for row in tables["code_files"]]
    tables["fn_files"] = [row[:2] + row[3:] for row in tables["fn_files"]]
    return tables


def test_a_new_worktree_starts_from_the_siblings_index_and_ends_as_a_fresh_build(repo):
    indexed_project(repo)
    tree = add_worktree(repo, "agent-a")
    b = brainlib.open(tree)
    stats = b.index.refresh()
    assert stats["code"]["changed"] == 0  # nothing indexed anew: the sibling's rows were taken
    seeded = code_tables(tree)
    assert seeded["code_files"] and seeded["fn_defs"]
    b.index.rebuild()
    assert code_tables(tree) == seeded  # equal, row for row, to what a build from nothing writes

    other = add_worktree(repo, "agent-b")
    edited = next(p for p in sorted((other / "app0").glob("*.py")) if p.name == "models.py")
    edited.write_text(edited.read_text() + "\ndef added_in_b():\n    return None\n")
    first = cli(other, "boot", "--task", TASK, "--json", "--no-record")
    assert first.returncode == 0, first.stderr
    assert "updating the code index" not in first.stderr  # no build from nothing to report
    rebuilt = cli(other, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    again = cli(other, "boot", "--task", TASK, "--json", "--no-record")
    assert json.loads(first.stdout) == json.loads(again.stdout)  # the same answer as from a fresh index
    names = {row[0] for row in sqlite3.connect(other / ".brain/runtime/index.db").execute(
        "SELECT name FROM fn_defs")}
    assert "added_in_b" in names


def test_no_seed_from_another_schema_a_link_or_for_a_rebuild(repo):
    indexed_project(repo)
    main_index = repo / ".brain" / "runtime" / "index.db"
    with sqlite3.connect(main_index) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    tree = add_worktree(repo, "old-schema")
    stats = brainlib.open(tree).index.refresh()
    assert stats["code"]["changed"] > 0  # built from nothing: another version's index is never copied

    elsewhere = repo.parent / "valid-index.db"
    os.replace(tree / ".brain" / "runtime" / "index.db", elsewhere)  # a valid index, outside every worktree
    os.unlink(main_index)
    os.symlink(elsewhere, main_index)  # a link in a sibling's runtime is never followed
    third = add_worktree(repo, "third")
    stats = brainlib.open(third).index.refresh()
    assert stats["code"]["changed"] > 0

    b = brainlib.open(third)
    assert b.index.rebuild()["code"]["changed"] > 0  # a rebuild starts from nothing whatever the siblings hold
