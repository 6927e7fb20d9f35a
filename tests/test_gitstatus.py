"""The boot's git status from brain's index copy with git's untracked cache (search.gitstatus): real git
repositories, each answer compared with the full listing (`--untracked-files=all -- . :(exclude).brain`)
after every kind of change a boot must see."""

from __future__ import annotations

from pathlib import Path

import pytest

import brain as brainlib
from brain.search import gitstamp, gitstatus
from conftest import git


def full(repo: Path, monkeypatch) -> gitstamp.GitState:
    with monkeypatch.context() as m:
        m.setattr(gitstatus, "cached_status", lambda repo: None)
        return gitstamp._read_state(repo)


def copies(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / ".brain" / "runtime").glob(gitstatus.PRIVATE_INDEX + ".*"))


def cached(repo: Path) -> gitstamp.GitState | None:
    out = gitstatus.cached_status(repo)
    return None if out is None else gitstamp._read_state(repo)


@pytest.fixture
def shop(repo: Path) -> Path:
    (repo / "shop").mkdir()
    (repo / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.2\n")
    (repo / "shop" / "gateway.py").write_text("def charge(card):\n    return card\n")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shop")
    brainlib.init(repo)
    return repo


def same(repo: Path, monkeypatch) -> gitstamp.GitState:
    expected = full(repo, monkeypatch)
    got = cached(repo)
    assert got is not None, "the cached listing gave up where it should answer"
    assert got == expected
    return got


def test_every_change_reads_as_the_full_listing_says(shop, monkeypatch):
    first = same(shop, monkeypatch)
    assert not any(p.startswith(".brain") for p in first.paths)  # the memory is never listed
    assert len(copies(shop)) == 1
    index = (shop / ".git" / "index").read_bytes()
    same(shop, monkeypatch)
    assert (shop / ".git" / "index").read_bytes() == index  # the user's index is never written
    (shop / "shop" / "refund.py").write_text("def refund():\n    pass\n")  # untracked, in a known folder
    assert "shop/refund.py" in same(shop, monkeypatch).paths
    (shop / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.21\n")  # modified
    assert same(shop, monkeypatch).paths["shop/tax.py"] == " M"
    old = copies(shop)
    git(shop, "add", "shop/refund.py")  # staged: the index changed, a new copy
    assert same(shop, monkeypatch).paths["shop/refund.py"] == "A "
    assert len(copies(shop)) == 1 and copies(shop) != old
    (shop / "shop" / "debug.log").write_text("x\n")  # ignored
    assert "shop/debug.log" not in same(shop, monkeypatch).paths
    (shop / ".gitignore").write_text("")  # no longer ignored: git's cache sees the rule change
    assert "shop/debug.log" in same(shop, monkeypatch).paths
    (shop / ".git" / "info").mkdir(exist_ok=True)
    (shop / ".git" / "info" / "exclude").write_text("*.log\n")  # ignored again, by the exclude file
    assert "shop/debug.log" not in same(shop, monkeypatch).paths
    (shop / "shop" / "gateway.py").unlink()
    assert same(shop, monkeypatch).paths["shop/gateway.py"] == " D"
    git(shop, "add", "-A")
    git(shop, "commit", "-q", "-m", "refund")
    assert same(shop, monkeypatch).head == git(shop, "rev-parse", "HEAD").strip()
    (shop / ".brain" / "notes").mkdir(parents=True, exist_ok=True)
    (shop / ".brain" / "notes" / "n.md").write_text("a note\n")
    assert not any(p.startswith(".brain") for p in same(shop, monkeypatch).paths)


def test_untracked_folders_nested_repositories_and_renames(shop, monkeypatch):
    same(shop, monkeypatch)
    (shop / "billing" / "sub").mkdir(parents=True)
    (shop / "billing" / "invoice.py").write_text("class Invoice:\n    pass\n")
    (shop / "billing" / "sub" / "due.py").write_text("def due():\n    pass\n")
    (shop / "billing" / "sub" / "run.log").write_text("ignored\n")
    (shop / "billing" / "empty").mkdir()
    (shop / "logs").mkdir()
    (shop / "logs" / "a.log").write_text("only ignored files: not listed\n")
    (shop / "vendor" / "lib").mkdir(parents=True)
    git(shop / "vendor", "init", "-q")  # a nested repository: one `vendor/` line in both listings
    (shop / "vendor" / "lib" / "x.py").write_text("x = 1\n")
    got = same(shop, monkeypatch)
    assert {"billing/invoice.py", "billing/sub/due.py", "vendor/"} <= set(got.paths)
    assert "billing/sub/run.log" not in got.paths and not any(p.startswith("logs") for p in got.paths)
    git(shop, "add", "billing")
    git(shop, "mv", "shop/tax.py", "shop/vat.py")
    got = same(shop, monkeypatch)
    assert got.paths["shop/vat.py"] == "R " and got.paths["shop/tax.py"] == "D "


def test_without_a_brain_runtime_or_with_a_split_index_nothing_is_copied(repo, monkeypatch):
    assert gitstatus.cached_status(repo) is None  # no .brain/runtime: the full listing, nothing written
    brainlib.init(repo)
    git(repo, "update-index", "--split-index")
    assert gitstatus.cached_status(repo) is None
    assert copies(repo) == []
    assert gitstamp._read_state(repo) == full(repo, monkeypatch)


def test_a_copy_of_an_older_index_written_late_is_never_read(shop, monkeypatch):
    """A boot whose git still refreshes the copy of the index before a `git add` writes that older copy,
    after another boot made the new one: the new boot reads its own."""
    same(shop, monkeypatch)
    runtime = shop / ".brain" / "runtime"
    stale = runtime / copies(shop)[0]
    older = stale.read_bytes()
    (shop / "shop" / "refund.py").write_text("def refund():\n    pass\n")
    git(shop, "add", "shop/refund.py")
    assert same(shop, monkeypatch).paths["shop/refund.py"] == "A "
    stale.write_bytes(older)  # the slow boot's git renames its refreshed old copy into place
    assert same(shop, monkeypatch).paths["shop/refund.py"] == "A "


def test_the_copy_stays_private_under_umask_022(shop, monkeypatch):
    import os
    import stat

    old = os.umask(0o022)
    try:
        same(shop, monkeypatch)
        (shop / "shop" / "refund.py").write_text("def refund():\n    pass\n")  # git rewrites the copy (its cache)
        same(shop, monkeypatch)
    finally:
        os.umask(old)
    runtime = shop / ".brain" / "runtime"
    found = {name: stat.S_IMODE((runtime / name).stat().st_mode) for name in copies(shop)}
    assert found and all(mode == 0o600 for mode in found.values()), found


def test_a_linked_worktree_reads_its_own_index(shop, tmp_path, monkeypatch):
    """Parallel agents each work in a `git worktree add` checkout, whose `.git` is a `gitdir:` file: the copy
    is made from that worktree's own index, and the answer is the full listing's, never the main checkout's."""
    tree = tmp_path / "agent-2"
    git(shop, "worktree", "add", "-q", "-b", "agent-2", str(tree))
    assert (tree / ".git").is_file()
    brainlib.init(tree)
    (tree / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.25\n")
    (tree / "shop" / "coupon.py").write_text("def apply():\n    pass\n")
    got = same(tree, monkeypatch)
    assert got.paths["shop/tax.py"] == " M" and got.paths["shop/coupon.py"] == "??"
    assert len(copies(tree)) == 1 and copies(shop) == []  # the worktree's runtime, not the main checkout's
    main_index = (shop / ".git" / "index").read_bytes()
    git(tree, "add", "shop/coupon.py")  # the worktree's index changes; the main checkout's does not
    assert same(tree, monkeypatch).paths["shop/coupon.py"] == "A "
    assert (shop / ".git" / "index").read_bytes() == main_index
    assert "shop/coupon.py" not in same(shop, monkeypatch).paths


def test_a_gitdir_file_without_back_links_is_not_followed(shop, tmp_path, monkeypatch):
    """A `.git` file is data (an archive can carry one): one naming a git dir that does not name it back
    (here the main checkout's own) gets no copy; the full listing answers as before."""
    other = tmp_path / "unpacked"
    other.mkdir()
    (other / ".git").write_text(f"gitdir: {shop / '.git'}\n")
    (other / ".brain" / "runtime").mkdir(parents=True)
    assert gitstatus.cached_status(other) is None
    assert copies(other) == []
