"""The pre-commit hook, with a real git repository and real commits."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from brain.cards.githook import CHAINED, HookExists, install_git_hook, uninstall_git_hook
from brain.cards.markers import parse_card

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo, *args, check=True):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=check, env={**os.environ, **ENV})


def brain_cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, env=os.environ)


@pytest.fixture
def mapped(brain):
    repo = brain.repo
    (repo / "pay").mkdir()
    (repo / "pay/__init__.py").write_text("def pay(amount: int) -> bool:\n    return True\n")
    (repo / "ship").mkdir()
    (repo / "ship/__init__.py").write_text("def ship() -> None:\n    pass\n")
    brain.map()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code and cards")
    return brain


def test_commit_refreshes_and_stages_the_cards_of_staged_modules(mapped):
    repo = mapped.repo
    out = brain_cli(repo, "install", "git-hook")
    assert out.returncode == 0, out.stderr
    (repo / "pay/__init__.py").write_text("def pay(amount: int, currency: str = 'EUR') -> bool:\n    return True\n")
    (repo / "ship/__init__.py").write_text("def ship(fast: bool) -> None:\n    pass\n")  # changed but not staged
    git(repo, "add", "pay/__init__.py")
    commit = git(repo, "commit", "-q", "-m", "pay in currencies", check=False)
    assert commit.returncode == 0, commit.stderr
    files = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert sorted(files) == [".brain/modules/pay.md", "pay/__init__.py"]
    committed = git(repo, "show", "HEAD:.brain/modules/pay.md").stdout
    assert "currency: str = 'EUR'" in committed
    assert "fast: bool" not in (repo / ".brain/modules/ship.md").read_text()  # unstaged module untouched
    assert mapped.map(check=True).stale == ["ship"]


def test_existing_hook_is_refused_or_chained(mapped):
    repo = mapped.repo
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    user_hook = hooks / "pre-commit"
    user_hook.write_text("#!/bin/sh\necho user-hook-ran > \"$(git rev-parse --show-toplevel)/hook.log\"\nexit 0\n")
    user_hook.chmod(0o755)
    with pytest.raises(HookExists):
        install_git_hook(mapped)
    assert "user-hook-ran" in user_hook.read_text()  # untouched
    refused = brain_cli(repo, "install", "git-hook", "--json")
    assert refused.returncode == 2 and "hook_exists" in refused.stderr
    result = install_git_hook(mapped, chain=True)
    assert result["chained"].endswith(CHAINED)
    (repo / "pay/__init__.py").write_text("def pay(amount: float) -> bool:\n    return True\n")
    git(repo, "add", "pay/__init__.py")
    assert git(repo, "commit", "-q", "-m", "float", check=False).returncode == 0
    assert (repo / "hook.log").read_text().strip() == "user-hook-ran"
    assert "amount: float" in git(repo, "show", "HEAD:.brain/modules/pay.md").stdout
    # a failing chained hook still stops the commit
    (hooks / CHAINED).write_text("#!/bin/sh\nexit 3\n")
    (repo / "ship/__init__.py").write_text("X = 1\n")
    git(repo, "add", "ship/__init__.py")
    assert git(repo, "commit", "-q", "-m", "blocked", check=False).returncode != 0
    assert uninstall_git_hook(mapped)["restored"]
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 3\n"


def test_human_section_kept_through_the_hook(mapped):
    repo = mapped.repo
    mapped.report_done("pay", how_to_use="Call pay() once per order.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "how to use")
    install_git_hook(mapped)
    (repo / "pay/extra.py").write_text("def refund() -> None:\n    pass\n")
    git(repo, "add", "pay/extra.py")
    assert git(repo, "commit", "-q", "-m", "refund", check=False).returncode == 0
    card = git(repo, "show", "HEAD:.brain/modules/pay.md").stdout
    assert parse_card(card).human == "Call pay() once per order.\n" and "refund() -> None" in card
