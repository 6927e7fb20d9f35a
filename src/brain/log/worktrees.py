"""The conversation logs of the repository's other checkouts, live or removed, read from this one.

Every checkout writes its logs into the shared store, under its own checkout id (``brain.log.shared``).
A person supervising several agents opens `brain ui` or `brain log` in one checkout and reads every
agent's conversations: the live worktrees are found through git's own list
(``checkout.sibling_worktrees``) and matched to their folder by the id in their runtime/; a folder whose
id no live worktree holds is a removed worktree's, shown with the name and branch it last had. A worktree
whose brain has not moved its logs yet (an older version ran there) is still read in place. Nothing of
another checkout is opened or written, and a worktree is named by git's id or a checkout id that is
looked up among the listed ones, never used as a path.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..checkout import CONVERSATIONS_FOLDER, is_checkout_id, read_checkout_id
from ..memory.files import read_regular_file
from ..memory.paths import has_link_between
from .fold import render
from .handoff import LOCAL_FOLDER, Conversations, promoted_path
from .shared import read_record
from .store import ConversationLog
from .turns import check_thread_id

__all__ = ["WorktreeLog", "worktree_logs", "worktree_log", "prune_removed"]


class WorktreeLog:
    """Another checkout's conversations: ``name`` (git's id, or the main tree's folder; for a removed one the
    name it last had), ``branch``, ``log`` (its ConversationLog), ``brain_dir`` (its `.brain`, for the handoffs;
    None once removed), ``checkout_id`` (its folder in the shared store; None for logs not moved yet) and
    ``removed`` (its worktree is gone)."""

    __slots__ = ("name", "branch", "log", "brain_dir", "checkout_id", "removed")

    def __init__(self, name: str, branch: str | None, log: ConversationLog, brain_dir: Path | None,
                 checkout_id: str | None = None, removed: bool = False) -> None:
        self.name, self.branch, self.log, self.brain_dir = name, branch, log, brain_dir
        self.checkout_id, self.removed = checkout_id, removed

    @property
    def key(self) -> str:
        """What `--worktree` and `?worktree=` take for it: git's name while it lives (unique among the live
        ones), the checkout id once removed (a name git may since have given to another worktree)."""
        return self.checkout_id if self.removed and self.checkout_id else self.name

    def handoff(self, thread: str) -> str | None:
        """The thread's handoff text: the local one being folded there (else a promoted copy) while the worktree
        lives; once removed, the one its kept fold state renders. None when there is none."""
        check_thread_id(thread)
        for rel in (f"{LOCAL_FOLDER}/{thread}.md", promoted_path(thread)) if self.brain_dir is not None else ():
            path = self.brain_dir / rel
            if has_link_between(self.brain_dir, path.parent):
                continue
            try:
                data = read_regular_file(path)
            except OSError:  # no such folder there
                continue
            if data is not None:
                return data.decode("utf-8", errors="replace")
        if not self.log.segments(thread):
            return None
        state = Conversations(self.log, None).state(thread)  # the checksummed cache, else a replay of the log
        return render(state) if state.turns else None

    def to_dict(self) -> dict:
        return {"worktree": self.name, "branch": self.branch, "key": self.key, "checkout": self.checkout_id,
                "removed": self.removed}


def _real_folder(path: Path) -> bool:
    return path.is_dir() and not os.path.islink(path)


def worktree_logs(brain) -> list[WorktreeLog]:
    """The repository's other checkouts with conversation logs of the same brain: the live worktrees (git's
    order), then the removed ones (most recently seen first)."""
    checkout = brain.checkout
    if checkout is None:
        return []
    from ..checkout import sibling_worktrees

    try:
        rel = brain.repo.resolve().relative_to(checkout.root)
    except ValueError:
        return []
    shared = brain.store_dir / CONVERSATIONS_FOLDER
    if has_link_between(checkout.common_dir, shared):
        shared = None  # a link on the way could make the reader follow it anywhere
    found, live = [], {read_checkout_id(brain.runtime)}
    for other in sibling_worktrees(checkout):
        brain_dir = other.root / rel / ".brain"
        runtime = brain_dir / "runtime"
        if has_link_between(other.root, runtime):
            continue
        other_id = read_checkout_id(runtime)
        live.add(other_id)
        if other_id is not None and shared is not None and _real_folder(shared / other_id):
            found.append(WorktreeLog(other.name, other.branch(), ConversationLog(shared / other_id), brain_dir, other_id))
        elif _real_folder(runtime / "conversations"):  # an older brain there: its logs are not moved yet
            found.append(WorktreeLog(other.name, other.branch(), ConversationLog(runtime / "conversations"), brain_dir))
    if shared is None or not _real_folder(shared):
        return found
    removed = []
    for entry in os.scandir(shared):
        if entry.name in live or not is_checkout_id(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        record = read_record(folder)
        name, branch = record.get("worktree"), record.get("branch")
        seen = record.get("seen") if isinstance(record.get("seen"), (int, float)) else 0
        removed.append((-seen, entry.name, WorktreeLog(name if isinstance(name, str) and name else entry.name,
                                                       branch if isinstance(branch, str) else None,
                                                       ConversationLog(folder), None, entry.name, removed=True)))
    return found + [w for _, _, w in sorted(removed, key=lambda r: r[:2])]


def worktree_log(brain, key: str) -> WorktreeLog | None:
    """The other checkout ``key`` names, or None: a live worktree's git id, else a checkout id, else the name a
    single removed worktree last had (people remember the name, not the id). Several removed worktrees that
    had the name are refused with their ids: git gives a removed worktree's name out again. Looked up among
    the listed ones, never used as a path."""
    logs = worktree_logs(brain)
    found = next((w for w in logs if not w.removed and w.name == key), None) \
        or next((w for w in logs if w.checkout_id == key), None)
    if found is not None:
        return found
    named = [w for w in logs if w.removed and w.name == key]
    if len(named) > 1:
        from ..errors import InvalidInput

        ids = ", ".join(w.key for w in named)
        raise InvalidInput(f"{len(named)} removed worktrees were named {key!r}", field="worktree",
                           hint=f"name one by its checkout id: {ids} (`brain log --worktrees` lists them)")
    return named[0] if named else None


def _newest_write(folder: Path) -> float:
    """The latest mtime of anything under ``folder`` (links are not followed: their own stamp counts)."""
    newest = os.lstat(folder).st_mtime
    stack = [folder]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
    return newest


def prune_removed(brain, retention_seconds: float, now: float) -> list[str]:
    """Delete the log folders of removed worktrees in which nothing was written for ``retention_seconds``;
    returns their checkout ids. Why whole folders: a removed worktree's threads never rotate again, so the
    per-segment retention would keep their live segments forever. 0 keeps everything, as the setting says.
    A folder is named only from the listing (a checkout id no live worktree holds), never from input."""
    if not retention_seconds:
        return []
    import shutil

    cutoff, pruned = now - retention_seconds, []
    for other in worktree_logs(brain):
        if not other.removed or other.checkout_id is None:
            continue
        folder = other.log.root
        try:
            if os.path.islink(folder) or _newest_write(folder) >= cutoff:
                continue
            shutil.rmtree(folder)  # fd-based where the platform allows: a link inside is removed, not followed
        except FileNotFoundError:  # another prune got there first
            continue
        pruned.append(other.checkout_id)
    return pruned
