"""Helpers the card and ranking tests share: write a file of the test's project (or commit a set of
them), read a module's card."""

from __future__ import annotations

import subprocess

__all__ = ["write", "commit_files", "card"]


def write(repo, rel, text):
    """``text`` at ``repo/rel``, its folders made."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def commit_files(brain, files: dict[str, str], *, now: str | None = None) -> None:
    """Write ``files`` (path -> text) into the brain's repository and commit them, so that none counts as
    changed in the working tree (a ranking signal of its own); ``now`` also writes now.md first."""
    for rel, text in files.items():
        write(brain.repo, rel, text)
    if now is not None:
        brain.write("now.md", now)
    git = ["git", "-C", str(brain.repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)


def card(brain, module):
    """The card text of ``module`` (``.`` is the root module)."""
    return (brain.dir / "modules" / (module + ".md" if module != "." else "_root.md")).read_text()
