"""A saved card layout checked against the boot's own `git status` (cards.mapper): real git repositories.

In a git work tree the layout lists git's tracked and untracked-not-ignored files, so when the boot's
git answer (HEAD, the listed paths and their letters) equals the one noted with the layout, no folder
is stat-ed; an added, removed or newly untracked file changes that answer, and then the folders'
mtimes decide, as they do outside a boot (no git answer read, none run).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import brain as brainlib
from brain.boot.call import boot_call
from brain.cards.mapper import Mapper
from brain.search.gitstamp import git_state
from conftest import git


@pytest.fixture
def shop(repo: Path):
    (repo / "shop").mkdir()
    (repo / "shop" / "__init__.py").write_text('"""Shop."""\n')
    (repo / "shop" / "tax.py").write_text("def vat(amount):\n    return amount * 0.2\n")
    (repo / "billing").mkdir()
    (repo / "billing" / "__init__.py").write_text("def charge(x):\n    return x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shop")
    b = brainlib.init(repo)
    b.map()
    return b


def folder_stats(monkeypatch, repo: Path) -> list[str]:
    seen: list[str] = []
    real = os.stat
    import stat as stat_mod

    def spy(p, *a, **k):
        result = real(p, *a, **k)
        if stat_mod.S_ISDIR(result.st_mode):
            seen.append(str(p))
        return result

    monkeypatch.setattr(os, "stat", spy)
    return seen


def adopt(b, seen: list[str] | None = None) -> bool:
    """One boot's layout check: git's answer read first, then the layout adopted (and its note saved);
    ``seen`` keeps only the folder stats of the check itself."""
    with boot_call():
        git_state(b.repo)  # the boot's one git status, as the refresh and the changed-files slot read it
        if seen is not None:
            seen.clear()
        mapper = Mapper(b)
        adopted = mapper.load_layout()
        mapper.save_caches()
        return adopted


def test_a_layout_matching_the_boots_git_answer_stats_no_folder(shop, monkeypatch):
    assert adopt(shop)  # the first boot after a map compares folder mtimes, then notes git's answer
    stats = folder_stats(monkeypatch, shop.repo)
    assert adopt(shop, stats)
    assert stats == []


def test_a_folder_changed_only_by_an_ignored_file_keeps_the_layout(shop):
    """A `__pycache__` or a log written beside the code changes its folder's mtime, not git's answer:
    the layout stands (the folder check alone discovered it again)."""
    (shop.repo / ".git" / "info").mkdir(exist_ok=True)
    (shop.repo / ".git" / "info" / "exclude").write_text("*.log\n")
    assert adopt(shop) and adopt(shop)
    (shop.repo / "shop" / "debug.log").write_text("x\n")
    assert not Mapper(shop).load_layout()  # without git's answer: the folder's mtime changed
    assert adopt(shop)


@pytest.mark.parametrize("change", ["untracked", "deleted", "staged", "commit"])
def test_a_file_added_or_removed_is_seen_after_a_noted_layout(shop, change):
    assert adopt(shop) and adopt(shop)
    repo = shop.repo
    folder = repo / "shop"
    if change == "deleted":
        (folder / "tax.py").unlink()
    else:
        (folder / "refund.py").write_text("def refund():\n    pass\n")
    if change in ("staged", "commit"):
        git(repo, "add", "shop/refund.py")
    if change == "commit":
        git(repo, "commit", "-q", "-m", "refund")
    with boot_call():
        git_state(repo)
        mapper = Mapper(shop)
        paths = {f.path for f in mapper.files()}
    assert ("shop/refund.py" in paths) == (change != "deleted")
    assert ("shop/tax.py" in paths) == (change != "deleted")


def test_outside_a_boot_the_folders_decide_and_git_is_not_run(shop, monkeypatch):
    assert adopt(shop) and adopt(shop)
    import brain.search.gitstamp as gitstamp

    monkeypatch.setattr(gitstamp, "_read_state", lambda repo: pytest.fail("a layout check ran git"))
    assert Mapper(shop).load_layout()
    (shop.repo / "shop" / "refund.py").write_text("def refund():\n    pass\n")
    assert not Mapper(shop).load_layout()
