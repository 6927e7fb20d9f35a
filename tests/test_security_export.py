"""`brain export-template` carries the kernel alone: canaries of instance and personal never leak, satellites included."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import brain as brainlib
from brain.errors import ExportLeak
from conftest import git

PERSONAL = "CANARY-personal-7f3e9a1c-my-progress-notes"
INSTANCE = "CANARY-instance-0b5d2e44-/srv/secret/paths"


@pytest.fixture
def satellites(tmp_path, brain, brain_home):
    """Every layer its own git repository (with a remote whose URL holds a credential), canaries planted."""
    b = brainlib.open_brain(brain.repo)
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")
    b = brainlib.open_brain(brain.repo)
    home = b.layers.home
    for layer in ("kernel", "instance", "personal"):
        git(home / layer, "init", "-q", "-b", "main")
        git(home / layer, "remote", "add", "origin", f"https://user:{layer}-remote-password@example.invalid/{layer}.git")
    b.write("agents/reviewer.md", "---\ntier: hot\nroles: [review]\n---\nReview carefully.\n", layer="kernel",
            role="kernel-scribe", reason="profile")
    b.write("progress.md", f"# progress\n{PERSONAL}\n", layer="personal", role="me")
    b.write("paths.md", f"# paths\n{INSTANCE}\n", layer="instance", role="ops")
    nested = home / "kernel" / "agents" / "team"
    nested.mkdir(parents=True)
    git(nested, "init", "-q", "-b", "main")
    b.write("agents/team/builder.md", "# builder\n", layer="kernel")
    (home / "kernel" / "profile" / "mine").symlink_to(home / "personal")
    (home / "kernel" / "profile" / "paths.md").symlink_to(home / "instance" / "paths.md")
    (home / "kernel" / "settings.local.yml").write_text("token: abc\n")
    return b


def all_text(folder):
    return "\n".join(p.read_bytes().decode("utf-8", "ignore") for p in folder.rglob("*") if p.is_file())


def test_export_has_the_kernel_and_no_canary(satellites, tmp_path):
    dest = tmp_path / "template"
    files = satellites.layers.export_template(dest)
    assert "kernel/agents/reviewer.md" in files and "kernel/agents/team/builder.md" in files
    assert not any(".git" in f.split("/") or f.endswith(".local.yml") for f in files)
    text = all_text(dest)
    for canary in (PERSONAL, INSTANCE, "remote-password", str(satellites.layers.home), str(satellites.repo)):
        assert canary not in text
    assert not (dest / "kernel" / "profile" / "mine").exists() and not (dest / "kernel" / "profile" / "paths.md").exists()


def test_a_value_copied_into_the_kernel_refuses_the_export(satellites, tmp_path):
    satellites.write("profile/notes.md", f"copied by mistake: {PERSONAL}\n", layer="kernel")
    dest = tmp_path / "template"
    with pytest.raises(ExportLeak) as err:
        satellites.layers.export_template(dest)
    assert (err.value.file, err.value.layer) == ("kernel/profile/notes.md", "personal")
    assert not dest.exists() and not list(tmp_path.glob(".template.*"))
    satellites.write("profile/notes.md", f"machine path {satellites.layers.home}/instance\n", layer="kernel")
    with pytest.raises(ExportLeak) as err:
        satellites.layers.export_template(dest)
    assert err.value.layer == "instance"


def test_cli_export_after_a_sync_round(satellites, tmp_path, repo):
    for layer in ("kernel", "personal"):
        remote = tmp_path / f"{layer}.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
        git(satellites.layers.path(layer), "remote", "set-url", "origin", str(remote))
    report = {r.kind: r for r in satellites.sync().repos}
    assert report["kernel"].status == "pushed" and report["personal"].status == "pushed"
    assert report["instance"].status == "error" and "example.invalid" in report["instance"].error
    dest = tmp_path / "out"
    out = subprocess.run([sys.executable, "-m", "brain", "export-template", str(dest), "--json"], cwd=repo,
                         capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert PERSONAL not in all_text(dest) and INSTANCE not in all_text(dest)
