"""Where the shared coordination store is, how an old per-checkout store joins it, and what a repository's
own data cannot make brain do (issue 19, item 1): real repositories, worktrees and bare clones in temp
folders, real processes killed with SIGKILL for the import's crash-safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import brain as brainlib
from brain.backends.sqlite import SqliteBackend
from brain.backends.testing import FakeClock
from brain.checkout import locate_checkout
from brain.coord import Coordinator
from brain.errors import SettingsError, UnsafeLink
from conftest import git


def committed_brain(repo: Path) -> Path:
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    return repo


def rev_parse(folder: Path, *args: str) -> list[Path]:
    out = git(folder, "rev-parse", "--path-format=absolute", *args)
    return [Path(line).resolve() for line in out.splitlines()]


# -- finding the repository ---------------------------------------------------------------------------------------
def test_the_common_dir_is_the_one_git_reports_in_the_main_tree_a_worktree_and_a_bare_repository(tmp_path, repo):
    committed_brain(repo)
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "hub.git"))
    git(tmp_path / "hub.git", "worktree", "add", "-q", str(tmp_path / "hub-main"), "main")
    for folder in (repo, tmp_path / "side", tmp_path / "hub-main", repo / ".brain"):
        found = locate_checkout(folder)
        top, git_dir, common = rev_parse(folder, "--show-toplevel", "--git-dir", "--git-common-dir")
        assert (found.root, found.git_dir, found.common_dir) == (top, git_dir, common)
    assert locate_checkout(tmp_path / "side").branch() == "side"
    assert locate_checkout(tmp_path / "side").name == "side"
    assert locate_checkout(tmp_path / "hub-main").repository_name == "hub"
    assert brainlib.open(tmp_path / "hub-main").store_dir == (tmp_path / "hub.git" / "brain" / "root").resolve()
    git(tmp_path / "side", "checkout", "-q", "--detach")
    assert locate_checkout(tmp_path / "side").branch().startswith("detached@")


def test_a_worktree_written_with_relative_paths_is_found_too(tmp_path, repo):
    """git 2.48's `worktree.useRelativePaths` writes both links relative; the layout is the same."""
    committed_brain(repo)
    side = tmp_path / "side"
    git(repo, "worktree", "add", "-q", "-b", "side", str(side))
    admin = repo / ".git" / "worktrees" / "side"
    (side / ".git").write_text(f"gitdir: {os.path.relpath(admin, side)}\n")
    (admin / "gitdir").write_text(os.path.relpath(side / ".git", admin) + "\n")
    found = locate_checkout(side)
    assert (found.root, found.common_dir, found.linked) == (side.resolve(), (repo / ".git").resolve(), True)


def test_a_brain_below_the_top_of_the_tree_keeps_its_own_store_and_name_in_every_worktree(tmp_path, repo):
    (repo / "app").mkdir()
    brainlib.init(repo / "app")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "app brain")
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    main, side = brainlib.open(repo / "app"), brainlib.open(tmp_path / "side" / "app")
    assert main.store_dir == side.store_dir and main.store_dir.parent == (repo / ".git" / "brain").resolve()
    assert main.store_dir.name.startswith("app-") and main.name == side.name == "app"


def test_outside_git_the_store_stays_in_runtime(tmp_path):
    opened = brainlib.init(tmp_path / "plain")
    assert opened.checkout is None and opened.store_dir == opened.runtime


def test_a_dot_git_file_that_names_another_repository_does_not_move_the_store(tmp_path, repo):
    """A `.git` file is data (an archive can carry one): the git dir it names must name this tree back."""
    committed_brain(repo)
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'side'}\n")  # not its worktree
    brainlib.init(stranger)
    assert locate_checkout(stranger) is None
    assert brainlib.open(stranger).store_dir == (stranger / ".brain" / "runtime").resolve()
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(repo / ".git", linked / ".git")
    assert locate_checkout(linked) is None
    loose = tmp_path / "loose"  # a gitdir file without a worktree's back links (like --separate-git-dir)
    loose.mkdir()
    (loose / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert locate_checkout(loose) is None


@pytest.mark.parametrize("what", ["folder", "key", "file"])
def test_a_link_in_the_shared_store_is_refused_before_anything_is_written(tmp_path, repo, what):
    committed_brain(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = repo / ".git" / "brain"
    if what == "folder":
        os.symlink(elsewhere, store)
    else:
        store.mkdir()
        if what == "key":
            os.symlink(elsewhere, store / "root")
        else:
            (store / "root").mkdir()
            os.symlink(elsewhere / "db", store / "root" / "brain.db")
    with pytest.raises(UnsafeLink):
        brainlib.open(repo).coord.sessions()
    assert list(elsewhere.iterdir()) == []


def test_a_file_where_the_store_folder_goes_is_a_settings_error(repo):
    committed_brain(repo)
    (repo / ".git" / "brain").write_text("not a folder")
    with pytest.raises(SettingsError):
        brainlib.open(repo).coord.sessions()


# -- an old per-checkout store ---------------------------------------------------------------------------------
def old_store(path: Path, clock: FakeClock, role: str = "build") -> dict:
    """What an earlier version left in a checkout's runtime/brain.db: two sessions with claims, signals (one
    read, one not), a checkpoint, an answered ask and live state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backend = SqliteBackend(path)
    coord = Coordinator(backend, brain_name="project", machine="testbox", clock=clock)
    a = coord.start_session(role).id
    b = coord.start_session("review").id
    claim = coord.claim(a, "src/parser.py")
    coord.signal(b, a, "read this one")
    coord.signals(a, ack=True)
    coord.signal(b, a, "not read yet")
    coord.checkpoint(a, "halfway", note="parser ported")
    ticket = coord.arm(b, a, "frozen?").ticket
    coord.reply(a, ticket, "yes")
    coord.livestate.set(a, intent="port the parser", status="working", writer=a)
    backend.close()
    conn = sqlite3.connect(path)  # back to the schema of the versions before 0004 (no worktree columns)
    with conn:
        for column in ("worktree", "branch", "worktree_path"):
            conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
        conn.execute("DROP TABLE store_imports")
        conn.execute("DELETE FROM brain_migrations WHERE name = '0005_session_worktree'")
    conn.close()
    return {"a": a, "b": b, "claim": claim.claim, "ticket": ticket}


def table_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("sessions", "claims", "signals", "signal_cursors", "checkpoints", "asks", "livestate", "audit")}
    finally:
        conn.close()


def test_an_old_store_in_each_checkout_is_imported_once_and_every_row_is_kept(tmp_path, repo):
    committed_brain(repo)
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    clock = FakeClock(time.time() // 60 * 60)  # the same minute in both stores: the same ids, renumbered on import
    main_rows = old_store(repo / ".brain" / "runtime" / "brain.db", clock)
    clock.advance(5)  # other sessions, started seconds later
    side_db = tmp_path / "side" / ".brain" / "runtime" / "brain.db"
    side_rows = old_store(side_db, clock)
    assert main_rows["a"] == side_rows["a"]
    before = {k: v * 2 for k, v in table_counts(side_db).items()}

    main = brainlib.open(repo)
    assert [s.id for s in main.coord.sessions()] == [main_rows["a"], main_rows["b"]]  # the first import keeps ids
    side = brainlib.open(tmp_path / "side")
    sessions = side.coord.sessions()
    assert len(sessions) == 4 and len({s.id for s in sessions}) == 4
    moved = {s.id: s for s in sessions if s.worktree == "side"}
    assert len(moved) == 2 and all(s.branch == "side" for s in moved.values())
    new_a = next(sid for sid in moved if sid.startswith(main_rows["a"].split("@")[0] + ".2@"))
    assert [c.item for c in side.coord.claims(session=new_a)] == ["src/parser.py"]
    assert [s.body for s in side.coord.signals(new_a)] == ["not read yet"]  # the read one stays read
    assert side.coord.read_checkpoint(new_a).step == "halfway"
    assert {e.key for e in side.coord.livestate.read()} == {main_rows["a"], new_a}
    [answered] = [x for x in side.coord.asks(session=new_a, pending_only=False)]
    assert (answered.asker.endswith(".2@testbox") or answered.asker == side_rows["b"], answered.answer) == (True, "yes")
    fences = [c.fence for c in side.coord.claims()]
    assert len(set(fences)) == len(fences)
    shared = side.store_dir / "brain.db"
    assert table_counts(shared) == before | {"audit": table_counts(shared)["audit"]}
    assert table_counts(shared)["audit"] >= before["audit"]

    for folder in (repo, tmp_path / "side"):  # the old files are retired; opening again imports nothing
        assert not (folder / ".brain" / "runtime" / "brain.db").exists()
        assert list((folder / ".brain" / "runtime").glob("brain.db.imported-*"))
    again = brainlib.open(tmp_path / "side")
    assert len(again.coord.sessions()) == 4
    assert table_counts(shared)["sessions"] == 4


# The child stops at a chosen point of the import, says so, and waits for stdin: the parent kills it there
# with SIGKILL (inside the import's transaction after rows went in, or after the commit before the rename).
_KILLED_CHILD = """
import sys, brain
import brain.coord.imports as imports
where = sys.argv[2]
if where == "inside":
    merge = imports._merge
    def stopping(tx, rows, worktree):
        execute, seen = tx.execute, [0]
        def counted(sql, params=()):
            seen[0] += 1
            if seen[0] == 500:
                print("stopped", flush=True)
                sys.stdin.readline()
            return execute(sql, params)
        tx.execute = counted
        return merge(tx, rows, worktree)
    imports._merge = stopping
else:
    retire = imports._retire
    def stopping(path):
        print("stopped", flush=True)
        sys.stdin.readline()
        retire(path)
    imports._retire = stopping
brain.open(sys.argv[1]).coord.sessions()
print("done", flush=True)
"""


@pytest.mark.parametrize("where", ["inside", "after_commit"])
def test_an_import_killed_with_sigkill_keeps_every_row_exactly_once(repo, where):
    committed_brain(repo)
    db = repo / ".brain" / "runtime" / "brain.db"
    clock = FakeClock(time.time())
    old_store(db, clock)
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany("INSERT INTO audit (at, session, action, subject, detail) VALUES (?, NULL, 'note', ?, '{}')",
                         [(clock(), f"x:{i}") for i in range(2000)])
    conn.close()
    expected = table_counts(db)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(repo), where], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "stopped"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        proc.kill()
    shared = brainlib.open(repo).store_dir / "brain.db"
    assert db.exists()  # killed before the rename: the old file is where it was
    if where == "inside":
        assert table_counts(shared)["audit"] == 0  # nothing of the killed transaction is left
    finished = subprocess.run([sys.executable, "-c", "import sys, brain; brain.open(sys.argv[1]).coord.sessions()",
                               str(repo)], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert table_counts(shared) == expected
    assert not db.exists() and list(db.parent.glob("brain.db.imported-*"))


def test_without_a_shared_location_an_old_store_is_used_where_it_is(tmp_path):
    opened = brainlib.init(tmp_path / "plain")
    sid = opened.coord.start_session("build").id
    assert (opened.runtime / "brain.db").exists()
    assert [s.id for s in brainlib.open(tmp_path / "plain").coord.sessions()] == [sid]


def test_two_processes_opening_one_checkout_at_once_import_its_old_store_once(repo):
    committed_brain(repo)
    db = repo / ".brain" / "runtime" / "brain.db"
    clock = FakeClock(time.time())
    old_store(db, clock)
    conn = sqlite3.connect(db)
    with conn:  # more statements than the child runs before it stops
        conn.executemany("INSERT INTO audit (at, session, action, subject, detail) VALUES (?, NULL, 'note', ?, '{}')",
                         [(clock(), f"x:{i}") for i in range(1000)])
    conn.close()
    expected = table_counts(db)
    first = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(repo), "inside"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    second = None
    try:
        assert first.stdout.readline().strip() == "stopped"  # the first holds the write lock, rows half in
        second = subprocess.Popen([sys.executable, "-c", "import sys, brain; print('opening', flush=True); "
                                   "brain.open(sys.argv[1]).coord.sessions(); print('done', flush=True)", str(repo)],
                                  stdout=subprocess.PIPE, text=True)
        assert second.stdout.readline().strip() == "opening"
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.stdout.readline().strip() == "done" and first.wait(timeout=60) == 0
        assert second.stdout.readline().strip() == "done" and second.wait(timeout=60) == 0
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert table_counts(brainlib.open(repo).store_dir / "brain.db") == expected


def test_a_client_never_joins_a_session_of_another_worktree(tmp_path, repo):
    """The hooks and MCP server of one client share a session; two clients in two worktrees never do."""
    from brain.backends import open_backend
    from brain.coord.model import Worktree

    backend = open_backend(f"sqlite:{tmp_path / 'shared.db'}")
    here = Coordinator(backend, brain_name="project", machine="testbox",
                       worktree=Worktree("wt-a", "a", str(tmp_path)))
    there = Coordinator(backend, brain_name="project", machine="testbox",
                        worktree=Worktree("wt-b", "b", str(repo)))
    mine, joined = here.join_or_start_session("claude-code", pid=os.getpid(), joinable=lambda pid, started: True)
    assert not joined
    again, joined = here.join_or_start_session("claude-code", pid=os.getpid(), joinable=lambda pid, started: True)
    assert joined and again.id == mine.id
    other, joined = there.join_or_start_session("claude-code", pid=os.getpid(), joinable=lambda pid, started: True)
    assert not joined and other.id != mine.id and (other.worktree, other.branch) == ("wt-b", "b")
    backend.close()


@pytest.mark.parametrize("item, expected", [
    ("/w/wt-1/src/x.py", "src/x.py"),
    ("/w/wt-1/src/**", "src/**"),
    ("/w/wt-1", "/w/wt-1"),            # the root itself: never "everything" by accident
    ("/w/wt-10/src/x.py", "/w/wt-10/src/x.py"),  # another folder that only starts with the same letters
    ("/elsewhere/x.py", "/elsewhere/x.py"),
    ("src/x.py", "src/x.py"),
    ("name:/w/wt-1/x", "name:/w/wt-1/x"),
])
def test_an_absolute_claim_path_is_made_relative_only_inside_the_working_tree(item, expected):
    from brain.coord.overlap import relative_to_root

    assert relative_to_root(item, "/w/wt-1") == expected



def test_doctor_in_a_worktree_names_the_shared_store_and_a_missing_brain_local_yml(tmp_path, repo):
    import json

    committed_brain(repo)
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))

    def worktree_check(folder):
        out = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=folder, capture_output=True,
                             text=True, timeout=120)
        return next((c for c in json.loads(out.stdout) if c["check"] == "worktree"), None)

    assert worktree_check(repo) is None  # the main working tree: nothing to say
    assert worktree_check(tmp_path / "side")["level"] == "info"
    (repo / ".brain" / "brain.local.yml").write_text("machine: build-box\n")
    check = worktree_check(tmp_path / "side")
    assert (check["ok"], check["level"], check["file"]) == (False, "warning", str(repo / ".brain" / "brain.local.yml"))
    (tmp_path / "side" / ".brain" / "brain.local.yml").write_text("machine: build-box\n")
    assert worktree_check(tmp_path / "side")["ok"]


# -- a worktree whose branch lacks the main working tree's memory ---------------------------------------------------
def brain_cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=folder, capture_output=True, text=True,
                          env=os.environ, timeout=60)


def test_a_worktree_made_before_the_brain_was_committed_is_told_where_the_memory_is(tmp_path, repo):
    """`brain init` then `git worktree add` before committing `.brain/`: the agent in the worktree learns that
    the repository has a brain its branch lacks, and how to bring it in, not to `brain init` a second one."""
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    brainlib.init(repo)
    (tmp_path / "side" / "pkg").mkdir()
    for folder in (tmp_path / "side", tmp_path / "side" / "pkg"):
        out = brain_cli(folder, "boot", "--json")
        assert out.returncode == 3
        error = json.loads(out.stderr)  # errors go to stderr, as JSON under --json
        assert error["error"] == "not_initialized"
        assert error["main_brain"] == str((repo / ".brain").resolve()) and error["branch"] == "side"
    # the main working tree and a plain folder outside git are as before: no main_brain
    assert brain_cli(repo, "boot", "--json").returncode == 0
    (tmp_path / "plain").mkdir()
    plain = json.loads(brain_cli(tmp_path / "plain", "boot", "--json").stderr)
    assert plain["error"] == "not_initialized" and plain["main_brain"] is None
    # once committed and merged into the branch, the worktree has its own copy and boots
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    git(tmp_path / "side", "merge", "-q", "main")
    assert brain_cli(tmp_path / "side", "boot", "--json").returncode == 0


def test_init_says_to_commit_the_brain_and_warns_of_a_second_memory_in_a_worktree(tmp_path, repo):
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    first = json.loads(brain_cli(repo, "init", "--json").stdout)
    assert first["git"] and first["commit"].startswith("git add .brain") and "main_worktree_brain" not in first
    again = json.loads(brain_cli(repo, "init", "--json").stdout)
    assert again["created"] == [] and "commit" not in again  # nothing new: nothing to say
    side = json.loads(brain_cli(tmp_path / "side", "init", "--json").stdout)
    assert side["main_worktree_brain"] == str((repo / ".brain").resolve())
    assert side["brain"] == str((tmp_path / "side" / ".brain").resolve())


def test_the_session_start_hook_tells_an_agent_in_such_a_worktree_what_it_is_missing(tmp_path, repo):
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    brainlib.init(repo)
    side = tmp_path / "side"
    for client in ("claude-code", "codex"):
        payload = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
                              "cwd": str(side)})
        out = subprocess.run([sys.executable, "-m", "brain", "hook", client, "session-start"], cwd=side,
                             input=payload, capture_output=True, text=True, env=os.environ, timeout=60)
        assert out.returncode == 0
        answer = json.loads(out.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == "SessionStart"
        assert str((repo / ".brain").resolve()) in answer["additionalContext"]
    assert not (side / ".brain").exists()  # told, nothing written
    # a folder with no brain anywhere stays silent on stdout (a global plugin runs in every project)
    (tmp_path / "plain").mkdir()
    out = subprocess.run([sys.executable, "-m", "brain", "hook", "claude-code", "session-start"],
                         cwd=tmp_path / "plain", input=json.dumps({"session_id": "s2", "cwd": str(tmp_path / "plain")}),
                         capture_output=True, text=True, env=os.environ, timeout=60)
    assert out.returncode == 0 and out.stdout == ""
