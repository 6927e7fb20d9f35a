"""Files a clone ships (manifests, git hooks, AGENTS.md) are read bounded, never through a link, never hanging."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from brain.errors import InputTooLarge, PathRefused
from brain.inputs import read_repository_file


def test_reader_refuses_links_fifos_and_big_files(tmp_path):
    small = tmp_path / "a.txt"
    small.write_bytes(b"hello")
    assert read_repository_file(small) == b"hello"
    assert read_repository_file(tmp_path / "missing") is None
    (tmp_path / "link").symlink_to(small)
    assert read_repository_file(tmp_path / "link") is None
    os.mkfifo(tmp_path / "fifo")  # nobody writes it: a plain open() would block forever
    assert read_repository_file(tmp_path / "fifo") is None
    assert read_repository_file(tmp_path) is None
    with pytest.raises(InputTooLarge):
        read_repository_file(small, limit=4)


def test_a_huge_or_fifo_manifest_costs_the_cards_nothing(tmp_path):
    from brain.cards.project import load_project

    (tmp_path / "requirements.txt").write_text("requests==2.0\n")
    with open(tmp_path / "package.json", "wb") as handle:  # sparse: 9 MB on paper, nothing on disk
        handle.truncate(9 * 1024 * 1024)
    os.mkfifo(tmp_path / "pyproject.toml")
    info = load_project(tmp_path)
    assert "requests" in info.declared and not any(k.startswith("npm:") for k in info.declared)


def test_init_refuses_a_linked_agents_md_before_making_anything(repo, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# theirs\n")
    (repo / "AGENTS.md").symlink_to(outside)
    out = subprocess.run([sys.executable, "-m", "brain", "init"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert out.returncode == PathRefused.exit_code, out.stderr
    assert not (repo / ".brain").exists() and outside.read_text() == "# theirs\n"
