"""`brain doctor`: only a failure fails it (warnings have their own exit code under --strict), and each
warning's advised fix, run as the doctor words it, clears that warning.

The index check used to compare `runtime/index.db`'s mtime with the newest memory file. Writes go to the
WAL, so while any other process holds the index open (a running `brain serve` or `brain ui`) the file's
mtime does not move, and a memory file dated in the future stays newer for ever: "older than the newest
memory file" survived the `brain index` it advised. It now asks the index which files it has not seen.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conftest import git

WARNINGS_EXIT = 12
BRAIN_BIN = str(Path(sys.executable).parent)  # where this environment's `brain` command is


def doctor(cwd: Path, *flags: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json", *flags], cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1, WARNINGS_EXIT), proc.stderr
    return proc, {c["check"]: c for c in json.loads(proc.stdout)}


def run_advised_fix(cwd: Path, fix: str) -> None:
    """Run the fix as the doctor words it: the first `command` it quotes, else the whole text (a chmod, a cp)."""
    quoted = re.search(r"`([^`]+)`", fix)
    command = quoted.group(1) if quoted else fix
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PATH": BRAIN_BIN + os.pathsep + os.environ["PATH"]})
    assert proc.returncode == 0, (command, proc.stderr)


def assert_fix_clears(cwd: Path, check: str) -> None:
    _, checks = doctor(cwd)
    found = checks[check]
    assert found["level"] == "warning" and found["fix"], found
    run_advised_fix(cwd, found["fix"])
    _, checks = doctor(cwd)
    assert checks[check]["level"] in ("ok", "info") and checks[check]["ok"], checks[check]


def test_warnings_alone_exit_0_strict_gives_them_their_own_code_and_a_failure_exits_1(brain):
    proc, checks = doctor(brain.repo)
    assert proc.returncode == 0 and all(c["level"] in ("ok", "info") for c in checks.values()), proc.stdout
    assert doctor(brain.repo, "--strict")[0].returncode == 0
    gitignore = brain.dir / ".gitignore"
    gitignore.write_text(gitignore.read_text().replace("brain.local.yml\n", ""))
    proc, checks = doctor(brain.repo)
    assert checks["gitignore"]["level"] == "warning"
    assert proc.returncode == 0  # a warning is not a failure
    assert doctor(brain.repo, "--strict")[0].returncode == WARNINGS_EXIT
    (brain.repo / "AGENTS.md").write_text("# rules\n")  # the pointer line is gone: a failed check
    proc, checks = doctor(brain.repo)
    assert checks["AGENTS.md"]["level"] == "error" and proc.returncode == 1
    assert doctor(brain.repo, "--strict")[0].returncode == 1  # a failure wins over the warnings


def _index(repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "brain", "index", "--json"], cwd=repo, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr


def test_index_behind_while_another_process_holds_it_is_cleared_by_brain_index(brain):
    _index(brain.repo)
    holder = subprocess.Popen(  # what a running `brain serve` does: keep a connection on the index open
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"db = sqlite3.connect({str(brain.runtime / 'index.db')!r})\n"
         "db.execute('SELECT count(*) FROM docs').fetchone()\n"
         "print('held', flush=True)\nsys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        (brain.dir / "notes").mkdir(exist_ok=True)
        (brain.dir / "notes" / "by-hand.md").write_text("# Written by hand\n\nwithout brain write.\n")
        _, checks = doctor(brain.repo)
        assert checks["index"]["level"] == "warning" and "notes/by-hand.md" in checks["index"]["detail"]
        run_advised_fix(brain.repo, checks["index"]["fix"])  # while the other process still holds it
        _, checks = doctor(brain.repo)
        assert checks["index"]["ok"] and checks["index"]["level"] == "ok", checks["index"]
    finally:
        holder.communicate("\n", timeout=60)


def test_a_memory_file_dated_in_the_future_is_cleared_by_brain_index(brain):
    _index(brain.repo)
    note = brain.dir / "notes" / "from-an-archive.md"
    note.write_text("# Unpacked\n\nfrom an archive made on a machine whose clock runs ahead.\n")
    ahead = time.time() + 3 * 3600
    os.utime(note, (ahead, ahead))
    assert_fix_clears(brain.repo, "index")
    note.unlink()  # a removed file is something the index still holds, too
    assert_fix_clears(brain.repo, "index")


def test_a_missing_gitignore_line_is_cleared_by_brain_init(brain):
    gitignore = brain.dir / ".gitignore"
    gitignore.write_text(gitignore.read_text().replace("runtime/\n", ""))
    assert_fix_clears(brain.repo, "gitignore")


def test_loose_private_modes_are_cleared_by_the_chmod_named(brain):
    brain.runtime.chmod(0o755)
    (brain.runtime / "loose.json").write_text("{}")
    (brain.runtime / "loose.json").chmod(0o644)
    assert_fix_clears(brain.repo, "private modes")


def test_a_worktree_without_the_main_local_settings_is_cleared_by_the_cp_named(brain, repo, tmp_path):
    (brain.dir / "brain.local.yml").write_text("machine: testbox\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add brain")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "side")
    assert_fix_clears(worktree, "worktree")
    assert (worktree / ".brain" / "brain.local.yml").read_text() == "machine: testbox\n"
