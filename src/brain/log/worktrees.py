"""The conversation logs of the repository's other worktrees, read from this one.

A log stays in the runtime of the checkout whose process saw the turn (docs/coordination.md): an
agent in its own worktree writes there. A person supervising several agents opens `brain ui` or
`brain log` in one checkout and should still read every agent's conversations; these are found
through git's own worktree list (``checkout.sibling_worktrees``), the brain at the same place in
each, and read without opening that brain (no settings, caches or stores of another checkout are
touched). A worktree is named by git's id, never by a path a request carries.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..memory.files import read_regular_file
from ..memory.paths import has_link_between
from .handoff import LOCAL_FOLDER, promoted_path
from .store import ConversationLog
from .turns import check_thread_id

__all__ = ["WorktreeLog", "worktree_logs", "worktree_log"]


class WorktreeLog:
    """One other worktree's conversations: ``name`` (git's id, or the main tree's folder), ``branch``,
    ``log`` (its ConversationLog) and ``brain_dir`` (its `.brain`, for the handoffs)."""

    __slots__ = ("name", "branch", "log", "brain_dir")

    def __init__(self, name: str, branch: str | None, log: ConversationLog, brain_dir: Path) -> None:
        self.name, self.branch, self.log, self.brain_dir = name, branch, log, brain_dir

    def handoff(self, thread: str) -> str | None:
        """The thread's handoff text there (the local one being folded, else a promoted copy), or None."""
        check_thread_id(thread)
        for rel in (f"{LOCAL_FOLDER}/{thread}.md", promoted_path(thread)):
            path = self.brain_dir / rel
            if has_link_between(self.brain_dir, path.parent):
                continue
            try:
                data = read_regular_file(path)
            except OSError:  # no such folder there
                continue
            if data is not None:
                return data.decode("utf-8", errors="replace")
        return None

    def to_dict(self) -> dict:
        return {"worktree": self.name, "branch": self.branch}


def worktree_logs(brain) -> list[WorktreeLog]:
    """The other worktrees of ``brain``'s repository that hold conversation logs of the same brain."""
    checkout = brain.checkout
    if checkout is None:
        return []
    from ..checkout import sibling_worktrees

    try:
        rel = brain.repo.resolve().relative_to(checkout.root)
    except ValueError:
        return []
    found = []
    for other in sibling_worktrees(checkout):
        brain_dir = other.root / rel / ".brain"
        folder = brain_dir / "runtime" / "conversations"
        if not folder.is_dir() or has_link_between(other.root, folder) or os.path.islink(folder):
            continue  # a link on the way could make the reader follow it anywhere
        found.append(WorktreeLog(other.name, other.branch(), ConversationLog(folder), brain_dir))
    return found


def worktree_log(brain, name: str) -> WorktreeLog | None:
    """The other worktree called ``name`` (git's id), or None: the name is looked up, never used as a path."""
    return next((w for w in worktree_logs(brain) if w.name == name), None)
