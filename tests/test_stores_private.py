"""Private by default (issue 20): brain's own state is created 0700/0600 whatever the umask, and
`brain doctor` names what is looser, with the chmod that fixes it."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from test_stores_every_store import backend_env, run, write_through_the_cli  # noqa: F401 - fixture

from brain.memory.private import ensure_private_dir, loose_modes, precreate_private


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, str]:
    """{relative path: octal mode} of everything under ``root``, links excluded."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            if not stat.S_ISLNK(info.st_mode):
                out[path.relative_to(root).as_posix()] = f"{stat.S_IMODE(info.st_mode):o}"
    return out


def assert_private(root: Path) -> None:
    found = modes(root)
    assert found, f"nothing under {root}"
    wrong = {p: m for p, m in found.items() if m != ("700" if (root / p).is_dir() else "600")}
    assert f"{stat.S_IMODE(root.stat().st_mode):o}" == "700" and not wrong, wrong


def test_every_runtime_file_and_the_personal_layer_are_private_under_umask_022(repo, brain_home, backend_env, tmp_path):
    with umask(0o022):  # the processes below inherit it: every file is made by a real `brain` process
        run(repo, "init", env=backend_env)
        import brain as brainlib

        brain = brainlib.open(repo, env={**os.environ, **backend_env})
        write_through_the_cli(brain, repo, backend_env, tmp_path)
        run(repo, "sync", "--dry-run", env=backend_env, ok=False)  # git.lock
        holder = brainlib.open(repo, env={**os.environ, **backend_env})
        holder.coord.start_session("holder")  # an open connection: brain.db-wal and -shm exist now
        holder.search("deploy")
        try:
            if not backend_env:
                store = brain.store_dir  # one per repository, in its git dir (shared by every worktree)
                assert (store / "brain.db-wal").exists() and (store / "brain.db-shm").exists()
                assert_private(store)
            assert (brain.runtime / "index.db-wal").exists()
            assert_private(brain.runtime)
        finally:
            holder.backend.close()
    for layer in ("personal", "instance"):
        assert_private(brain_home / layer)
    listed = {m for m in modes(brain.runtime)}
    assert "checkout-id" in listed and "boots.jsonl" in listed and "reports.jsonl" in listed
    assert_private(brain.conversations_dir)  # in the repository's shared store, under this checkout's id


def test_rotated_logs_and_precreated_databases_stay_private(brain, tmp_path):
    with umask(0o022):
        log = brain.conversations.log
        log.rotate_bytes = 64
        for n in range(4):
            brain.record_turn(None, "me", f"turn {n} " + "x" * 80, to="bob")
        folder = next(p for p in brain.conversations_dir.iterdir() if p.is_dir())
        rotated = [p for p in folder.iterdir() if p.name.startswith("log.") and p.name != "log.jsonl"]
        assert rotated
        db = tmp_path / "deep" / "state" / "x.db"
        precreate_private(db)
    assert_private(brain.conversations_dir)
    assert f"{stat.S_IMODE(db.stat().st_mode):o}" == "600"
    assert f"{stat.S_IMODE(db.parent.stat().st_mode):o}" == "700"
    assert f"{stat.S_IMODE((tmp_path / 'deep').stat().st_mode):o}" == "700"


def test_a_umask_that_removes_the_owners_bits_still_gives_a_usable_private_folder(tmp_path):
    with umask(0o777):
        made = ensure_private_dir(tmp_path / "a" / "b")
    assert f"{stat.S_IMODE(made.stat().st_mode):o}" == "700"
    assert f"{stat.S_IMODE((tmp_path / 'a').stat().st_mode):o}" == "700"


def test_doctor_names_loose_modes_and_its_chmod_fixes_them(brain, repo, brain_home):
    brain.boot("hello")
    brain.write("me.md", "mine", layer="personal")
    os.chmod(brain.runtime, 0o755)
    os.chmod(brain.runtime / "boots.jsonl", 0o644)
    os.chmod(brain_home / "personal" / "me.md", 0o644)
    check = {c["check"]: c for c in brain.doctor()}["private modes"]
    assert check["ok"] is False and check["level"] == "warning"
    assert {Path(x["path"]).name: x["mode"] for x in check["loose"]} == {"runtime": "755", "boots.jsonl": "644",
                                                                         "me.md": "644"}
    for command in check["fix"].split("; "):
        subprocess.run(command, shell=True, check=True)
    assert {c["check"]: c for c in brain.doctor()}["private modes"]["ok"] is True
    assert loose_modes(brain.runtime) == []
    result = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=repo, capture_output=True,
                            text=True, timeout=60)
    assert "private modes" in result.stdout


def test_git_writes_into_the_personal_layer_stay_private_under_umask_022(tmp_path, brain, brain_home):
    """A child process with the default umask: `brain sync` runs git, which creates objects and checks
    files out in the personal layer; they must not be readable by others either."""
    from conftest import git

    personal = brain.layers.path("personal")
    with umask(0o022):
        brain.write("mine.md", "# mine\n", layer="personal")
        git(personal, "init", "-q", "-b", "main")
        git(personal, "add", "-A")
        git(personal, "commit", "-q", "-m", "personal")
        remote = tmp_path / "personal.git"
        git(tmp_path, "clone", "-q", "--bare", str(personal), str(remote))
        git(personal, "remote", "add", "origin", str(remote))
        other = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(remote), str(other))
        (other / "from-laptop.md").write_text("# laptop\n")
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "laptop")
        git(other, "push", "-q", "origin", "main")
        subprocess.run(["chmod", "-R", "go-rwx", str(personal)], check=True)  # the test's own git above: not brain's
        brain.write("second.md", "# second\n", layer="personal")
        report = {r.kind: r for r in brain.sync().repos}
    assert report["personal"].status == "pulled_pushed", report["personal"]
    assert (personal / "from-laptop.md").read_text() == "# laptop\n"
    loose = loose_modes(personal)
    assert loose == [], loose
