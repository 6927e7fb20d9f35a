"""Unresolved git merges in memory files: the marker parser (property-based) and a real merge of two worktrees'
now.md through the boot and `brain doctor`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import git

import brain as brainlib
from brain.memory.merge_marks import conflict_regions

plain_line = st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=30).filter(
    lambda s: not s.startswith(("<<<<<<<", "=======", ">>>>>>>", "|||||||")))
lines = st.lists(plain_line, max_size=8)


@given(lines, lines, lines, lines, st.booleans())
def test_a_complete_conflict_is_found_at_its_lines(before, ours, theirs, after, diff3):
    body = ["<<<<<<< HEAD", *ours, *(["||||||| base", "old"] if diff3 else []), "=======", *theirs, ">>>>>>> topic"]
    text = "\n".join([*before, *body, *after])
    start = len(before) + 1
    assert conflict_regions(text) == [(start, start + len(body) - 1)]


@given(lines)
def test_text_without_markers_and_incomplete_conflicts_have_none(text_lines):
    text = "\n".join(text_lines)
    assert conflict_regions(text) == []
    assert conflict_regions(text + "\n<<<<<<< HEAD\nours\n") == []  # no separator, no end
    assert conflict_regions("=======\n>>>>>>> x\n" + text) == []  # no opening
    assert conflict_regions("<<<<<<<< eight\nx\n=======\ny\n>>>>>>> z") == []  # not git's marker


def test_many_openings_stay_linear():
    text = "<<<<<<< a\n" * 200_000 + "=======\n>>>>>>> b\n"
    assert conflict_regions(text) == [(200_000, 200_002)]


def cli(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_two_worktrees_now_md_merged_with_a_conflict_is_named_by_the_boot_and_doctor(repo):
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    tree = repo.parent / "wt-lexer"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "lexer")
    assert cli(tree, "write", "now", stdin="# Now\n\n## Current step\nlexer: tokens done\n").returncode == 0
    git(tree, "commit", "-q", "-am", "lexer now")
    assert cli(repo, "write", "now", stdin="# Now\n\n## Current step\nparser: grammar half done\n").returncode == 0
    git(repo, "commit", "-q", "-am", "parser now")
    merged = subprocess.run(["git", "merge", "-q", "lexer"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode != 0
    git(repo, "commit", "-q", "-am", "merge with the markers left in")  # what a hurried merge commits

    boot = cli(repo, "boot", "--json", "--no-record")
    assert boot.returncode == 0, boot.stderr
    text = json.loads(boot.stdout)["text"]
    assert "now.md holds an unresolved git merge, lines 4-8" in text
    assert "lexer: tokens done" in text and "parser: grammar half done" in text  # both sides, for a choice
    doctor = {c["check"]: c for c in json.loads(cli(repo, "doctor", "--json").stdout)}
    assert not doctor["merge"]["ok"] and doctor["merge"]["files"] == ["now.md (lines 4-8)"]

    assert cli(repo, "write", "now", stdin="# Now\n\n## Current step\nparser and lexer\n").returncode == 0
    assert "unresolved git merge" not in json.loads(cli(repo, "boot", "--json", "--no-record").stdout)["text"]
    assert {c["check"]: c for c in json.loads(cli(repo, "doctor", "--json").stdout)}["merge"]["ok"]
