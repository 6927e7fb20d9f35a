"""`brain init` layout and idempotence; layers and the kernel-only template export."""

from __future__ import annotations

import subprocess
import sys

import pytest

import brain as brainlib
from brain.errors import InvalidInput, NotInitialized
from brain.memory.scaffold import POINTER_MARKER


def test_init_creates_the_layout(repo):
    brainlib.init(repo)
    d = repo / ".brain"
    for name in ("brain.yml", "now.md", "focus.md", "decisions.md", ".gitignore"):
        assert (d / name).is_file(), name
    for folder in ("modules", "contracts", "decisions", "handoffs", "notes", "workflows", "runtime"):
        assert (d / folder).is_dir(), folder
    ignored = (d / ".gitignore").read_text().split()
    assert "runtime/" in ignored and "brain.local.yml" in ignored


def test_gitignore_really_ignores_runtime_and_local(repo):
    b = brainlib.init(repo)
    (b.dir / "brain.local.yml").write_text("machine: x\n")
    b.boot()
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    assert "runtime" not in out and "brain.local.yml" not in out
    assert ".brain/now.md" in out


def test_pointer_line_added_once_and_other_lines_untouched(repo):
    original = "# House rules\n\nRun the linter.\nNo force pushes."  # no final newline on purpose
    (repo / "AGENTS.md").write_text(original)
    brainlib.init(repo)
    brainlib.init(repo)
    text = (repo / "AGENTS.md").read_text()
    assert text.count(POINTER_MARKER) == 1
    assert text.startswith(original + "\n")
    lines = text.splitlines()
    assert sum(1 for line in lines if POINTER_MARKER in line) == 1


def test_agents_md_created_when_absent(repo):
    brainlib.init(repo)
    assert POINTER_MARKER in (repo / "AGENTS.md").read_text()


def test_reinit_keeps_user_files(repo):
    b = brainlib.init(repo)
    b.write("now.md", "# Now\n\nmine\n")
    (b.dir / "brain.yml").write_text("version: 1\nboot:\n  budget: 4000\n")
    again = brainlib.init(repo)
    assert again.read("now.md").text == "# Now\n\nmine\n"
    assert again.settings["boot.budget"] == 4000


def test_open_without_brain_is_a_clear_error(tmp_path):
    with pytest.raises(NotInitialized) as info:
        brainlib.open(tmp_path)
    assert info.value.exit_code == 3


def test_cli_without_brain_exits_3_and_writes_nothing(tmp_path):
    out = subprocess.run([sys.executable, "-m", "brain", "write", "now"], cwd=tmp_path, input="x",
                         capture_output=True, text=True)
    assert out.returncode == 3
    assert "brain init" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_layers_created_under_brain_home(brain, brain_home):
    for sub in ("kernel/agents", "kernel/profile", "instance", "personal"):
        assert (brain_home / sub).is_dir()
    assert str(brain.repo) in (brain_home / "instance" / "projects.txt").read_text()


def test_export_template_carries_the_kernel_and_no_canary(brain, brain_home, tmp_path):
    canary_instance = "CANARY-INSTANCE-7f3a"
    canary_personal = "CANARY-PERSONAL-91bc"
    (brain_home / "kernel/agents/reviewer.md").write_text("---\ntier: hot\nroles: [review]\n---\nReview carefully.\n")
    (brain_home / "kernel/profile/style.md").write_text("Plain words.\n")
    (brain_home / "instance/paths.md").write_text(f"repo at /home/me/{canary_instance}\n")
    (brain_home / "personal/diary.md").write_text(f"{canary_personal}\n")
    brain.write("notes/secret.md", f"{canary_instance}\n", layer="instance")
    dest = tmp_path / "template"
    files = brain.layers.export_template(dest)
    assert "kernel/agents/reviewer.md" in files and "kernel/profile/style.md" in files
    blob = b"".join(p.read_bytes() for p in dest.rglob("*") if p.is_file())
    assert canary_instance.encode() not in blob and canary_personal.encode() not in blob
    assert not (dest / "instance").exists() and not (dest / "personal").exists()


def test_export_template_refuses_non_empty_dest(brain, tmp_path):
    dest = tmp_path / "t"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(InvalidInput):
        brain.layers.export_template(dest)
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


def test_export_template_cli(brain, brain_home, tmp_path):
    (brain_home / "kernel/agents/a.md").write_text("agent a\n")
    out = subprocess.run([sys.executable, "-m", "brain", "export-template", str(tmp_path / "tpl"), "--json"],
                         cwd=brain.repo, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "tpl/kernel/agents/a.md").read_text() == "agent a\n"


def _init(cwd, *args):
    return subprocess.run([sys.executable, "-m", "brain", "init", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_init_outside_git_says_what_needs_git_and_the_command_that_fixes_it(tmp_path):
    """It used to say nothing: the brain works, but worktree sharing, sync and the cards' hook need git."""
    import json
    import shlex

    plain = tmp_path / "plain"
    plain.mkdir()
    out = _init(plain, "--json")
    assert out.returncode == 0, out.stderr  # a brain outside git is still made, as before
    data = json.loads(out.stdout)
    assert (plain / ".brain" / "now.md").is_file()
    assert data["git"] is False and len(data["without_git"]) == 3 and data["fix"] == "git init"
    text = _init(plain)
    assert text.returncode == 0 and "`git init`" in text.stdout  # the human form names the same command
    elsewhere = _init(tmp_path, str(plain), "--json")  # from another folder: the command names the folder
    assert json.loads(elsewhere.stdout)["fix"] == f"git init {shlex.quote(str(plain.resolve()))}"
    fixed = subprocess.run(shlex.split(data["fix"]), cwd=plain, capture_output=True, timeout=60)
    assert fixed.returncode == 0
    again = json.loads(_init(plain, "--json").stdout)
    assert again["git"] is True and "without_git" not in again and "fix" not in again


def test_init_in_a_git_repository_reports_git(repo):
    import json

    out = _init(repo, "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["git"] is True
