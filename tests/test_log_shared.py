"""Conversation logs kept in the repository's shared store: they outlive `git worktree remove`, an older
checkout's runtime/conversations/ is moved there (even by a process killed with SIGKILL half-way), two
processes append to one thread without tearing a line, and a worktree re-added under a removed one's name
keeps its logs apart. Real git repositories, real worktrees, real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

import brain as brainlib
from brain.checkout import read_checkout_id
from brain.errors import UnsafeLink
from brain.log import Conversations, ConversationLog
from together import run_together


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def committed_brain(repo: Path) -> None:
    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")


def talk(where: Path, turns: int, label: str = "turn") -> str:
    agent = brainlib.open(where)
    for i in range(1, turns + 1):
        agent.record_turn(None, "user" if i % 2 else "agent-parser", f"{label} {i}: the parser drops comments",
                          to="agent-parser" if i % 2 else "user")
    return agent.thread_between("agent-parser", "user")


def texts(log: ConversationLog, thread: str) -> list[str]:
    return [t.text for t in log.iter_turns(thread)]


def test_a_worktrees_logs_survive_its_removal_and_a_new_worktree_of_that_name_gets_a_new_id(repo):
    committed_brain(repo)
    tree = repo.parent / "wt-parser"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "parser-fix")
    thread = talk(tree, 60)
    first_id = read_checkout_id(tree / ".brain" / "runtime")
    assert first_id and not (tree / ".brain" / "runtime" / "conversations").exists()  # written to the shared store
    store = repo / ".git" / "brain" / "root" / "conversations" / first_id
    assert (store / thread / "log.jsonl").is_file()

    git(repo, "worktree", "remove", str(tree))  # no --force: ignored files do not stop git
    assert not tree.exists()
    listed = cli(repo, "log", "--worktrees", "--json")
    assert listed.returncode == 0, listed.stderr
    (gone,) = json.loads(listed.stdout)["worktrees"]
    assert gone | {"threads": None} == {"worktree": "wt-parser", "branch": "parser-fix", "key": first_id,
                                        "checkout": first_id, "removed": True, "threads": None}
    assert [t["thread"] for t in gone["threads"]] == [thread]
    text = cli(repo, "log", "--worktrees").stdout
    assert f"in worktree wt-parser (parser-fix, removed: --worktree {first_id}):" in text
    page = json.loads(cli(repo, "log", thread, "--worktree", first_id, "--page", "1", "--size", "10", "--json").stdout)
    assert page["total"] == 60 and page["turns"][0]["text"].startswith("turn 1:")
    by_name = json.loads(cli(repo, "log", thread, "--worktree", "wt-parser", "--json").stdout)
    assert by_name["total"] == 60  # no live worktree of that name: the one removed worktree that had it

    git(repo, "worktree", "add", "-q", str(tree), "-b", "parser-again")  # git gives the name out again
    talk(tree, 1, label="again")
    second_id = read_checkout_id(tree / ".brain" / "runtime")
    assert second_id and second_id != first_id
    data = json.loads(cli(repo, "log", "--worktrees", "--json").stdout)
    by_key = {w["key"]: w for w in data["worktrees"]}
    assert by_key["wt-parser"]["removed"] is False and by_key["wt-parser"]["checkout"] == second_id
    assert by_key[first_id]["removed"] is True and by_key[first_id]["branch"] == "parser-fix"
    live = json.loads(cli(repo, "log", thread, "--worktree", "wt-parser", "--json").stdout)
    old = json.loads(cli(repo, "log", thread, "--worktree", first_id, "--json").stdout)
    assert live["total"] == 1 and old["total"] == 60  # one thread id, two checkouts, kept apart
    from_sibling = json.loads(cli(tree, "log", "--worktrees", "--json").stdout)
    assert {w["key"] for w in from_sibling["worktrees"]} == {"project", first_id}  # the main checkout, the removed one

    git(repo, "worktree", "remove", str(tree))  # now two removed worktrees were named wt-parser
    both = cli(repo, "log", thread, "--worktree", "wt-parser", "--json")
    assert both.returncode == 2 and first_id in both.stderr and second_id in both.stderr  # refused, ids named
    assert json.loads(cli(repo, "log", thread, "--worktree", second_id, "--json").stdout)["total"] == 1


def _age(folder: Path, seconds: float) -> None:
    """Set every stamp under ``folder`` (itself included) back by ``seconds``, as time passing would."""
    for path in [folder, *folder.rglob("*")]:
        st = os.lstat(path)
        os.utime(path, (st.st_atime - seconds, st.st_mtime - seconds), follow_symlinks=False)


def test_prune_deletes_a_removed_worktrees_logs_past_the_retention_and_nothing_else(repo):
    committed_brain(repo)
    (repo / ".brain" / "brain.local.yml").write_text("log:\n  retention_days: 30\n")  # this machine's choice
    ids, store = {}, repo / ".git" / "brain" / "root" / "conversations"
    for name in ("wt-old", "wt-recent", "wt-live"):
        tree = repo.parent / name
        git(repo, "worktree", "add", "-q", str(tree), "-b", name)
        talk(tree, 4, label=name)
        ids[name] = read_checkout_id(tree / ".brain" / "runtime")
    talk(repo, 2)  # the main checkout's own logs
    main_id = read_checkout_id(repo / ".brain" / "runtime")
    for name in ("wt-old", "wt-recent"):
        git(repo, "worktree", "remove", str(repo.parent / name))
    day = 86400
    _age(store / ids["wt-old"], 31 * day)
    _age(store / ids["wt-recent"], 29 * day)
    _age(store / ids["wt-live"], 400 * day)  # live: however old, never pruned as removed
    _age(store / main_id, 400 * day)
    link = store / "c0123456789abcdef"  # an id-named link into the repository: never followed, never deleted
    link.symlink_to(repo)

    out = cli(repo, "log", "--prune", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["worktrees"] == [ids["wt-old"]]
    assert not (store / ids["wt-old"]).exists()
    assert (store / ids["wt-recent"]).is_dir() and (store / ids["wt-live"]).is_dir() and (store / main_id).is_dir()
    assert link.is_symlink() and (repo / ".brain").is_dir()
    listed = json.loads(cli(repo, "log", "--worktrees", "--json").stdout)["worktrees"]
    assert {w["key"] for w in listed if w["removed"]} == {ids["wt-recent"]}
    again = cli(repo, "log", "--prune")
    assert again.returncode == 0 and "removed worktree" not in again.stdout

    (repo / ".brain" / "brain.local.yml").write_text("log:\n  retention_days: 0\n")  # 0 keeps them forever
    _age(store / ids["wt-recent"], 10_000 * day)
    assert json.loads(cli(repo, "log", "--prune", "--json").stdout)["worktrees"] == []
    assert (store / ids["wt-recent"]).is_dir()


def test_the_web_ui_lists_and_reads_a_removed_worktrees_thread(repo):
    from starlette.testclient import TestClient

    from brain.web import create_app

    committed_brain(repo)
    tree = repo.parent / "wt-parser"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "parser-fix")
    thread = talk(tree, 60)
    key = read_checkout_id(tree / ".brain" / "runtime")
    git(repo, "worktree", "remove", str(tree))
    with TestClient(create_app(brainlib.open(repo), warm=False), base_url="http://127.0.0.1") as c:
        listing = c.get("/threads")
        assert listing.status_code == 200 and "In removed worktree" in listing.text and "last on parser-fix" in listing.text
        assert f'data-worktree="{key}"' in listing.text and f"?worktree={key}" in listing.text
        last = c.get(f"/threads/{thread}", params={"worktree": key})
        assert last.status_code == 200 and "turn 60:" in last.text and "page 2 of 2" in last.text
        assert "In removed worktree wt-parser (last on parser-fix)" in last.text
        assert "No handoff summary yet" not in last.text  # rendered from the fold state kept with the log
        assert c.get(f"/threads/{thread}", params={"worktree": "wt-parser"}).status_code == 200  # its last name
        for bad in ("wt-parse", "../" + key, key + "0", str(tree)):
            assert c.get(f"/threads/{thread}", params={"worktree": bad}).status_code == 404


def test_outside_git_the_logs_stay_in_runtime(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    b = brainlib.init(folder)
    b.record_turn(None, "me", "hello", to="bob")
    assert (folder / ".brain" / "runtime" / "conversations" / "bob+me" / "log.jsonl").is_file()
    assert read_checkout_id(b.runtime) is None and b.conversations_dir == b.runtime / "conversations"


def test_a_link_in_the_shared_folder_or_for_the_id_is_refused(repo, tmp_path):
    committed_brain(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shared = repo / ".git" / "brain" / "root"
    shared.mkdir(parents=True)
    (shared / "conversations").symlink_to(elsewhere)
    with pytest.raises(UnsafeLink):
        brainlib.open(repo).record_turn(None, "me", "hello", to="bob")
    (shared / "conversations").unlink()
    b = brainlib.open(repo)
    b.runtime.mkdir(parents=True, exist_ok=True)
    (b.runtime / "checkout-id").symlink_to(elsewhere / "id")
    with pytest.raises(UnsafeLink):
        b.record_turn(None, "me", "hello", to="bob")
    assert list(elsewhere.iterdir()) == []


def test_a_copied_checkout_gets_its_own_id(repo):
    committed_brain(repo)
    talk(repo, 2)
    twin = repo.parent / "twin"
    git(repo, "worktree", "add", "-q", str(twin), "-b", "twin")
    shutil.copytree(repo / ".brain" / "runtime", twin / ".brain" / "runtime", symlinks=True)  # the id came along
    assert read_checkout_id(twin / ".brain" / "runtime") == read_checkout_id(repo / ".brain" / "runtime")
    talk(twin, 1, label="twin")
    assert read_checkout_id(twin / ".brain" / "runtime") != read_checkout_id(repo / ".brain" / "runtime")
    assert len(texts(brainlib.open(repo).conversations.log, "agent-parser+user")) == 2


# -- moving an older checkout's runtime/conversations/ -------------------------------------------------------------
def legacy_logs(repo: Path) -> dict[str, list[str]]:
    """Logs as an older brain kept them, in runtime/conversations/: two threads, one in three segments."""
    b = brainlib.open(repo)
    log = ConversationLog(b.runtime / "conversations", rotate_bytes=400)
    conv = Conversations(log, b.memory)
    expected = {}
    for thread, count in (("agent+user", 9), ("bob+me", 3)):
        speakers = thread.split("+")
        for i in range(count):
            conv.record(conv.make_turn(thread, speakers[i % 2], f"{thread} turn {i} " + "x" * 60,
                                       to=speakers[(i + 1) % 2]))
        expected[thread] = [f"{thread} turn {i} " + "x" * 60 for i in range(count)]
    assert len(log.segments("agent+user")) == 3
    assert read_checkout_id(b.runtime) is None
    return expected


def assert_moved(repo: Path, expected: dict[str, list[str]]) -> None:
    b = brainlib.open(repo)
    conv = b.conversations  # opening moves what is left
    assert not (b.runtime / "conversations").exists()
    assert conv.log.root == b.conversations_dir and conv.log.root.parent.parent == b.store_dir
    assert sorted(t.thread for t in conv.threads()) == sorted(expected)
    for thread, lines in expected.items():
        assert texts(conv.log, thread) == lines  # each turn once, in order
        assert conv.state(thread).turns == len(lines)
        assert conv.log.parties(thread) == sorted(thread.split("+"))
        assert thread in conv.log.threads_of(thread.split("+")[0])


def test_an_older_checkouts_logs_are_moved_once(repo):
    committed_brain(repo)
    expected = legacy_logs(repo)
    assert_moved(repo, expected)
    # an older brain process still running writes the old folder again: the next open joins those turns in
    b = brainlib.open(repo)
    old = Conversations(ConversationLog(b.runtime / "conversations"), b.memory)
    old.record(old.make_turn("bob+me", "me", "written late by an old process", to="bob"))
    old.record(old.make_turn("new+one", "new", "a thread only the old process saw", to="one"))
    expected["bob+me"].append("written late by an old process")
    expected["new+one"] = ["a thread only the old process saw"]
    assert_moved(repo, expected)


def test_doctor_names_a_worktree_whose_logs_are_not_moved_yet_then_the_kept_ones(repo):
    committed_brain(repo)
    tree = repo.parent / "wt-old"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "old")
    legacy_logs(tree)  # as an older brain left them: removing the worktree now would lose them

    def check():
        return {c["check"]: c for c in brainlib.open(repo).doctor()}.get("worktree logs")

    found = check()
    assert found["ok"] is False and found["level"] == "warning" and "wt-old" in found["detail"]
    assert f"(cd {tree} && brain log)" in found["fix"]
    assert cli(tree, "log").returncode == 0  # moves them
    assert check() is None
    git(repo, "worktree", "remove", str(tree))
    found = check()
    assert found["ok"] is True and "1 removed worktree(s)" in found["detail"]


_KILLED_CHILD = """
import sys
import brain
from brain.log import shared

stop_at, count = int(sys.argv[1]), 0


def stop(step):
    global count
    count += 1
    if count == stop_at:
        print("at", step, flush=True)
        sys.stdin.read()  # the parent kills us here with SIGKILL


shared.after_step = stop
if sys.argv[3] == "copy":  # as when runtime/ and the git dir are on two file systems: no hard link between them
    import errno, os

    link = os.link

    def no_link_across(src, dst, **kw):
        if "/runtime/conversations/" in str(src):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        return link(src, dst, **kw)

    os.link = no_link_across
brain.open(sys.argv[2]).conversations
print("done", count, flush=True)
"""


@pytest.mark.parametrize("how", ["link", "copy"])
def test_a_move_killed_at_any_step_loses_nothing_and_is_finished_by_the_next_open(repo, tmp_path, how):
    committed_brain(repo)
    expected = legacy_logs(repo)
    steps, stop_at = [], 1
    while True:
        copy = tmp_path / f"kill-{stop_at}"
        shutil.copytree(repo, copy, symlinks=True)
        child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(stop_at), str(copy), how], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = child.stdout.readline().split()
        child.kill()  # SIGKILL: no finally, no atexit
        _, err = child.communicate(timeout=60)
        if line[:1] == ["done"]:
            assert int(line[1]) == len(steps)  # every step was a kill point
            break
        assert line[:1] == ["at"], err
        assert child.returncode == -9
        steps.append(line[1])
        assert_moved(copy, expected)
        stop_at += 1
    kinds = {"index", "state", "placed", "unlinked", "thread", "done"} | ({"copied"} if how == "copy" else set())
    assert set(steps) == kinds and len(steps) >= 12


_APPENDER = """
import sys
import brain

b = brain.open(sys.argv[1])
for i in range(int(sys.argv[3])):
    b.record_turn("agent+user", "agent", f"{sys.argv[2]} {i} " + "y" * 3000, to="user")
"""


def test_two_processes_append_to_one_thread_without_interleaving(repo):
    committed_brain(repo)
    tree = repo.parent / "wt-a"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "a")
    results = run_together([["-c", _APPENDER, str(tree), writer, "150"] for writer in ("first", "second")], cwd=tree)
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    b = brainlib.open(tree)
    log = b.conversations.log
    raw = (log.folder("agent+user") / "log.jsonl").read_bytes().splitlines()
    assert len(raw) == 300 and all(json.loads(line)["thread"] == "agent+user" for line in raw)  # no torn line
    said = texts(log, "agent+user")
    for writer in ("first", "second"):
        assert [t.split()[1] for t in said if t.startswith(writer)] == [str(i) for i in range(150)]
    assert b.conversations.state("agent+user").turns == 300
    assert os.stat(log.folder("agent+user") / "log.jsonl").st_mode & 0o077 == 0
    assert os.stat(log.root).st_mode & 0o077 == 0 and os.stat(log.root.parent).st_mode & 0o077 == 0


def test_an_id_another_process_links_in_between_the_read_and_the_check_is_the_one_used(tmp_path, monkeypatch):
    """Many processes of one checkout start at once: one finds no id file, another links its id in before the
    first looks again. The first takes that id (it is whole: ids are linked into place), never an error."""
    from brain.log import shared

    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    theirs = "c" + "ab" * 8
    reads = []

    def read_then_another_links_its_id(folder):
        reads.append(folder)
        if len(reads) == 1:  # the first read: nothing yet; meanwhile another process links its id in
            (runtime / "checkout-id").write_text(theirs + "\n")
            return None
        return read_checkout_id(folder)

    monkeypatch.setattr(shared, "read_checkout_id", read_then_another_links_its_id)
    assert shared.ensure_checkout_id(runtime) == theirs
    assert (runtime / "checkout-id").read_text() == theirs + "\n"
