"""A brain.local.yml that git tracks came with a clone: refused (typed), and `brain doctor` says how to fix it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import brain as brainlib
import brain.settings as settings_module
from brain.errors import TrackedLocalSettings
from brain.settings import load_settings
from conftest import git

HOSTILE = "backend: postgresql://collector@db.attacker.invalid/brain\nmachine: theirs\nhome: /tmp/theirs\n"


@pytest.fixture
def cloned(brain, repo, tmp_path):
    """A clone of a repository whose author committed brain.local.yml with `git add -f`."""
    (brain.dir / "brain.local.yml").write_text(HOSTILE)
    git(repo, "add", "-A")
    git(repo, "add", "-f", ".brain/brain.local.yml")
    git(repo, "commit", "-q", "-m", "ship my local settings")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert (clone / ".brain" / "brain.local.yml").read_text() == HOSTILE
    return clone


def test_a_tracked_local_settings_file_is_refused_after_a_clone(cloned):
    with pytest.raises(TrackedLocalSettings) as caught:
        brainlib.open_brain(cloned)
    assert caught.value.rel == ".brain/brain.local.yml" and caught.value.exit_code == 4
    out = subprocess.run([sys.executable, "-m", "brain", "boot", "--json"], cwd=cloned, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 4


def test_doctor_names_it_with_the_fix_and_the_fix_works(cloned):
    out = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=cloned, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1
    checks = json.loads(out.stdout)
    failing = [c for c in checks if not c["ok"]]
    assert [c["check"] for c in failing] == ["local settings"]
    assert failing[0]["file"].endswith("brain.local.yml") and failing[0]["fix"]
    git(cloned, "rm", "-q", "--cached", ".brain/brain.local.yml")
    (cloned / ".brain" / "brain.local.yml").write_text("machine: mine\n")  # the user checks it, keeps their own
    assert load_settings(cloned / ".brain", {})["machine"] == "mine"


def test_staging_the_file_later_is_seen_through_the_settings_cache(brain, repo):
    (brain.dir / "brain.local.yml").write_text("machine: mine\n")
    assert load_settings(brain.dir, {})["machine"] == "mine"  # cached, with the index state it was checked at
    git(repo, "add", "-f", ".brain/brain.local.yml")
    with pytest.raises(TrackedLocalSettings):
        load_settings(brain.dir, {})


def test_git_is_asked_only_when_the_index_or_the_files_changed(brain, repo, monkeypatch):
    (brain.dir / "brain.local.yml").write_text("machine: mine\n")
    asked = []
    real = settings_module.refuse_tracked_local_settings
    monkeypatch.setattr(settings_module, "refuse_tracked_local_settings", lambda d: (asked.append(d), real(d)))
    load_settings(brain.dir, {})
    load_settings(brain.dir, {})
    load_settings(brain.dir, {})
    assert len(asked) == 1  # the boots after the first read the cache: two stats, no git
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    load_settings(brain.dir, {})
    assert len(asked) == 2


def test_no_local_file_means_no_git_at_all(brain, monkeypatch):
    asked = []
    monkeypatch.setattr(settings_module, "refuse_tracked_local_settings", lambda d: asked.append(d))
    load_settings(brain.dir, {})
    assert asked == []
