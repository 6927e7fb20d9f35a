"""Decision numbering under concurrency, and records that already share a number (issue 20)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from brain.decisions import load_decisions
from brain.errors import DuplicateDecision
from together import BOUND, run_together

WRITERS = 12


def cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=BOUND, stdin=subprocess.DEVNULL)


def test_twelve_concurrent_decision_new_get_twelve_numbers_and_all_are_listed(brain, repo):
    results = run_together([["-m", "brain", "decision", "new", f"Choice {n}", "--status", "accepted", "--json"]
                            for n in range(WRITERS)], cwd=repo)
    assert [r.returncode for r in results] == [0] * WRITERS, [r.stderr for r in results]
    numbers = sorted(json.loads(r.stdout)["number"] for r in results)
    assert numbers == list(range(1, WRITERS + 1))
    listed = json.loads(cli(repo, "decisions", "--json").stdout)
    assert sorted(d["title"] for d in listed) == sorted(f"Choice {n}" for n in range(WRITERS))
    assert all(not d["duplicates"] for d in listed)
    index = (brain.dir / "decisions.md").read_text()
    assert all(f"Choice {n}" in index for n in range(WRITERS))  # the last index written holds every record


def _two_records_numbered_two(brain):
    brain.new_decision("First")
    folder = brain.dir / "decisions"
    (folder / "0002-from-main.md").write_text("# 0002. From main\n\n- Status: proposed\n")
    (folder / "0002-from-branch.md").write_text("# 0002. From branch\n\n- Status: proposed\n")
    return folder


def test_status_of_a_duplicated_number_is_refused_naming_both_files(brain, repo):
    folder = _two_records_numbered_two(brain)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(DuplicateDecision) as err:
        brain.set_decision_status(2, "accepted")
    assert err.value.number == 2
    assert sorted(err.value.files) == [".brain/decisions/0002-from-branch.md", ".brain/decisions/0002-from-main.md"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing changed half-way
    result = cli(repo, "decision", "status", "2", "accepted", "--json")
    assert result.returncode == DuplicateDecision.exit_code
    assert json.loads(result.stdout or result.stderr)["error"] == "duplicate_decision"
    with pytest.raises(DuplicateDecision):
        brain.new_decision("Replace two", supersedes=2)
    brain.set_decision_status(1, "accepted")  # another number is still changed normally


def test_duplicated_numbers_are_all_listed_and_reported_by_doctor(brain, repo):
    _two_records_numbered_two(brain)
    listed = brain.decisions()
    twos = [d for d in listed if d["number"] == 2]
    assert sorted(d["title"] for d in twos) == ["From branch", "From main"]
    assert all(len(d["duplicates"]) == 1 for d in twos)
    assert all("duplicate number 0002" in d["line"] for d in twos)
    checks = {c["check"]: c for c in brain.doctor()}
    assert checks["decisions"]["ok"] is False and checks["decisions"]["level"] == "warning"
    assert checks["decisions"]["duplicates"] == {"2": [".brain/decisions/0002-from-branch.md",
                                                       ".brain/decisions/0002-from-main.md"]}
    assert len([r for r in load_decisions(brain) if r.number == 2]) == 2
    new = brain.new_decision("Next")
    assert new["number"] == 3


def test_reindexes_racing_new_decisions_never_leave_an_older_index(brain, repo):
    argvs = []
    for n in range(WRITERS // 2):
        argvs += [["-m", "brain", "decision", "new", f"Choice {n}", "--json"], ["-m", "brain", "decisions", "--reindex"]]
    results = run_together(argvs, cwd=repo)
    assert [r.returncode for r in results] == [0] * WRITERS, [r.stderr for r in results]
    index = (brain.dir / "decisions.md").read_text()
    assert all(f"Choice {n}" in index for n in range(WRITERS // 2)), index
