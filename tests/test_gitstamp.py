"""A no-op code refresh answered from git's stat data (search.gitstamp): real git repositories.

The check may only ever say "unchanged" when the code tables match the files: every change a
walk of the tree would see (an edit, a new untracked file, a deletion, a rename, a revert, a
commit, an ignored file's edit) must still reach the index; and a clean tree must not be walked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import brain as brainlib
from brain.search import build
from brain.search.gitstamp import git_state, unchanged_since_refresh
from conftest import git


@pytest.fixture
def shop(repo: Path) -> Path:
    (repo / "shop").mkdir()
    (repo / "shop" / "gateway.py").write_text("def charge(card):\n    return card\n")
    (repo / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shop")
    return repo


@pytest.fixture
def walks(monkeypatch) -> list[Path]:
    """Each walk of the tree a refresh makes (``code.scan_files`` as ``build.plan_code`` calls it)."""
    seen: list[Path] = []
    original = build.scan_files
    monkeypatch.setattr(build, "scan_files", lambda repo, *rest, **kw: seen.append(repo) or original(repo, *rest, **kw))
    return seen


def symbols(b) -> set[tuple[str, str]]:
    return set(b.index.db.execute("SELECT path, name FROM code_symbols"))


def test_a_clean_tree_is_not_walked_and_an_edit_is_seen(shop, walks):
    b = brainlib.init(shop)
    b.reindex()
    walks.clear()
    assert b.index.refresh_code()["changed"] == 0
    assert walks == []  # HEAD and git's stat data: nothing changed, no walk
    (shop / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.21\n\ndef levy():\n    pass\n")
    assert b.index.refresh_code()["changed"] == 1
    assert ("shop/tax.py", "levy") in symbols(b)
    walks.clear()
    assert b.index.refresh_code()["changed"] == 0
    assert walks == []  # the edited file keeps its indexed stamp: no walk again
    git(shop, "checkout", "-q", "--", "shop/tax.py")  # reverted: git lists it no more, the index noted it
    assert not unchanged_since_refresh(b.index.db, shop)
    b.index.refresh_code()
    assert ("shop/tax.py", "levy") not in symbols(b)


def test_new_deleted_and_renamed_files_reach_the_index(shop):
    b = brainlib.init(shop)
    b.reindex()
    (shop / "shop" / "refund.py").write_text("def refund(order):\n    return order\n")
    b.index.refresh_code()
    assert ("shop/refund.py", "refund") in symbols(b)
    (shop / "shop" / "gateway.py").unlink()
    b.index.refresh_code()
    assert not any(path == "shop/gateway.py" for path, _ in symbols(b))
    git(shop, "checkout", "-q", "--", "shop/gateway.py")
    b.index.refresh_code()
    git(shop, "mv", "shop/tax.py", "shop/vat.py")
    b.index.refresh_code()
    paths = {path for path, _ in symbols(b)}
    assert "shop/vat.py" in paths and "shop/tax.py" not in paths


def test_a_commit_walks_and_the_stamp_follows_head(shop, walks):
    b = brainlib.init(shop)
    b.reindex()
    (shop / "shop" / "tax.py").write_text("def vat(amount, rate):\n    return amount * rate\n")
    git(shop, "commit", "-q", "-am", "rate")
    walks.clear()
    b.index.refresh_code()
    assert len(walks) == 1  # another HEAD: the walk decides
    assert b.index.db.execute("SELECT value FROM meta WHERE key = 'history_head'").fetchone()[0] == git_state(shop).head
    walks.clear()
    b.index.refresh_code()
    assert walks == []


def test_an_indexed_ignored_file_is_followed_by_its_stamp_and_folder(shop, walks):
    (shop / ".gitignore").write_text("generated/\n")
    (shop / "generated").mkdir()
    (shop / "generated" / "api.py").write_text("def call():\n    pass\n")
    git(shop, "add", ".gitignore")
    git(shop, "commit", "-q", "-m", "ignore")
    b = brainlib.init(shop)
    b.reindex()
    assert ("generated/api.py", "call") in symbols(b)  # git does not list it, the walk does
    walks.clear()
    b.index.refresh_code()
    assert walks == []
    (shop / "generated" / "api.py").write_text("def call_again():\n    pass\n")
    b.index.refresh_code()
    assert walks and ("generated/api.py", "call_again") in symbols(b)
    (shop / "generated" / "more.py").write_text("def other():\n    pass\n")  # its folder's mtime changes
    b.index.refresh_code()
    assert ("generated/more.py", "other") in symbols(b)
    walks.clear()
    b.index.refresh_code()
    assert walks == []


def test_too_many_ignored_files_keep_every_refresh_walking(shop, walks, monkeypatch):
    from brain.search import gitstamp

    monkeypatch.setattr(gitstamp, "MAX_CANDIDATES", 1)
    (shop / ".gitignore").write_text("generated/\n")
    (shop / "generated").mkdir()
    for name in ("a", "b"):
        (shop / "generated" / f"{name}.py").write_text(f"def {name}():\n    pass\n")
    git(shop, "add", ".gitignore")
    git(shop, "commit", "-q", "-m", "ignore")
    b = brainlib.init(shop)
    git(shop, "add", "-A")
    git(shop, "commit", "-q", "-m", "brain")  # a clean tree: git lists nothing
    b.reindex()
    walks.clear()
    b.index.refresh_code()
    assert len(walks) == 1
    monkeypatch.setattr(gitstamp, "MAX_CANDIDATES", 2000)  # the note "walk" is renewed by the next walk
    b.index.refresh_code()
    walks.clear()
    b.index.refresh_code()
    assert walks == []


def test_without_git_every_refresh_walks(tmp_path, walks):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "app.py").write_text("def main():\n    pass\n")
    b = brainlib.init(folder)
    b.reindex()
    walks.clear()
    b.index.refresh_code()
    assert len(walks) == 1
    assert b.index.db.execute("SELECT 1 FROM meta WHERE key = 'code_git'").fetchone() is None


def test_a_boot_runs_git_status_once(shop, monkeypatch):
    from brain.gitsafe import GitRepo

    b = brainlib.init(shop)
    b.reindex()
    calls = []
    original = GitRepo.output
    monkeypatch.setattr(GitRepo, "output", lambda self, *a, **k: calls.append(a) or original(self, *a, **k))
    result = b.boot("the vat amount is wrong in shop/tax.py", record=False).to_dict()
    assert "shop/tax.py" in result["files"]
    assert sum("status" in a for a in calls) == 1  # the changed files and the refresh's check share one answer


def test_a_call_takes_a_git_status_started_after_it_arrived_never_an_older_one(shop, monkeypatch):
    """A team server's call (``arrived``) reuses the answer of a git status another call started after its
    arrival; a change made before it arrived is always in its answer (it runs git itself then)."""
    import time

    from brain.search import gitstamp

    runs: list[float] = []
    real = gitstamp._read_state
    monkeypatch.setattr(gitstamp, "_read_state", lambda repo: runs.append(time.monotonic()) or real(repo))
    first_arrived = time.monotonic()
    with gitstamp.arrived(first_arrived):
        assert "shop/new.py" not in git_state(shop).paths  # nothing newer: its own status
    assert len(runs) == 1
    with gitstamp.arrived(first_arrived):  # arrived before that status started: its answer will do
        assert "shop/new.py" not in git_state(shop).paths
    assert len(runs) == 1
    (shop / "shop" / "new.py").write_text("x = 1\n")
    with gitstamp.arrived(time.monotonic()):  # arrived after the change: the old answer is not enough
        assert "shop/new.py" in git_state(shop).paths
    assert len(runs) == 2
    assert "shop/new.py" in git_state(shop).paths  # a library call (no arrival) always asks git
    assert len(runs) == 3



def test_a_checkout_moved_between_commits_indexes_what_a_fresh_clone_of_each_does(shop, tmp_path):
    """One working tree moved between commits (a user's `git checkout`, bench_history.py's tasks): after each
    move the refresh leaves what the ranking reads of the code and history tables as a fresh clone at that
    commit builds it, also when a changed file keeps its size, a deleted file comes back (its older commits
    were read while it was gone), and the move goes back in time."""
    commits = {"a": git(shop, "rev-parse", "HEAD").strip()}
    (shop / "shop" / "tax.py").write_text("def vax(amount):\n    return amount * 0.3\n")  # the same size
    git(shop, "commit", "-q", "-am", "vat renamed")
    commits["b"] = git(shop, "rev-parse", "HEAD").strip()
    (shop / "shop" / "refund.py").write_text("def refund(order):\n    return order\n")
    git(shop, "rm", "-q", "shop/gateway.py")
    git(shop, "add", "-A", "shop")
    git(shop, "commit", "-q", "-m", "refunds, no gateway")
    commits["c"] = git(shop, "rev-parse", "HEAD").strip()
    (shop / "shop" / "gateway.py").write_text("def charge(card, amount):\n    return card\n")
    git(shop, "add", "-A", "shop")
    git(shop, "commit", "-q", "-m", "the gateway is back")
    commits["d"] = git(shop, "rev-parse", "HEAD").strip()

    def tables(b) -> tuple:
        db = b.index.db
        sources = {p for (p,) in db.execute("SELECT path FROM code_files WHERE is_test = 0")}
        return (symbols(b), set(db.execute("SELECT path, size FROM code_files")),
                set(db.execute("SELECT sha FROM hist_commits")),
                {(sha, path) for sha, path in db.execute("SELECT c.sha, f.path FROM hist_files f JOIN hist_commits c "
                                                         "ON c.id = f.commit_id") if path in sources})

    b = brainlib.init(shop)
    b.reindex()
    for step, name in enumerate(("c", "d", "a", "b", "a", "c", "b", "d")):
        git(shop, "checkout", "-q", "--detach", commits[name])
        b.index.refresh_code()
        fresh = tmp_path / f"fresh-{step}"
        git(tmp_path, "clone", "-q", str(shop), str(fresh))
        git(fresh, "checkout", "-q", "--detach", commits[name])
        other = brainlib.init(fresh)
        other.reindex()
        assert tables(b) == tables(other), f"step {step}: at {name}"
    assert ("shop/gateway.py", "charge") in symbols(b) and ("shop/refund.py", "refund") in symbols(b)
