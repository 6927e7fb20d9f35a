"""A file of the work tree that holds this machine's paths must stay out of git.

`.claude/settings.local.json` carries the absolute command of brain's hooks. Claude Code treats
it as personal, but git only ignores it if someone said so: a tracked one would be committed
to the team, and an untracked one not ignored is one `git add -A` away. So the install refuses
a tracked one (``SharedFile``), and for one git does not ignore adds a line to the clone's own
`info/exclude` (never shared, unlike `.gitignore`), recorded so uninstall removes just that line.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BrainError, InvalidInput
from ..memory.files import atomic_write_bytes

__all__ = ["SharedFile", "keep_out_of_git", "exclude_record", "undo_exclude", "other_worktrees_using", "MARK"]

MARK = "# added by `brain install`; `brain uninstall` removes it"


class SharedFile(InvalidInput):
    """A file brain would fill with this machine's paths is tracked by git (shared with the team)."""

    kind = "shared_file"

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is tracked by git: brain would put this machine's paths into a shared file; "
                         "nothing was changed", field="file",
                         hint=f"untrack it (`git rm --cached {path}`, then ignore it) and install again")
        self.path = path


def _git(repo: Path):
    from ..gitsafe import GitRepo, find_worktree_root

    root = find_worktree_root(repo)
    if root is None:
        return None, None
    try:
        return GitRepo(root), root.resolve()
    except BrainError:
        return None, None


def keep_out_of_git(repo: Path, rel: str, *, write: bool) -> dict | None:
    """Refuse a tracked ``rel``; when git does not ignore it, add it to `info/exclude` (only with ``write``;
    without, validate). Returns {"exclude": file, "line": line} when a line is (or would be) added."""
    git, root = _git(repo)
    if git is None:
        return None
    target = os.path.relpath(Path(repo).resolve() / rel, root)
    try:
        tracked = git.run("ls-files", "--error-unmatch", "--", target, check=False).returncode == 0
        if tracked:
            raise SharedFile(str(Path(repo) / rel))
        if git.run("check-ignore", "-q", "--", target, check=False).returncode == 0:
            return None
        exclude = git.run("rev-parse", "--path-format=absolute", "--git-path", "info/exclude").stdout.strip()
    except SharedFile:
        raise
    except BrainError:
        return None  # git cannot answer: nothing to add to
    line = "/" + target.replace(os.sep, "/")
    if write:
        path = Path(exclude)
        try:
            text = path.read_bytes().decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            text = ""
        sep = "" if not text or text.endswith("\n") else "\n"
        new = text + sep + f"{MARK}\n{line}\n"
        atomic_write_bytes(path, new.encode("utf-8", "surrogateescape"))
    return {"exclude": exclude, "line": line}


def exclude_record(repo: Path, rel: str) -> dict | None:
    """Where ``keep_out_of_git`` puts ``rel``'s line, whoever added it (an install in another worktree of the
    same repository shares the clone's `info/exclude`); None when git cannot say."""
    git, root = _git(repo)
    if git is None:
        return None
    try:
        exclude = git.run("rev-parse", "--path-format=absolute", "--git-path", "info/exclude").stdout.strip()
    except BrainError:
        return None
    return {"exclude": exclude, "line": "/" + os.path.relpath(Path(repo).resolve() / rel, root).replace(os.sep, "/")}


def other_worktrees_using(repo: Path, rel: str, needle: str) -> list[str]:
    """The other work trees of ``repo``'s repository whose ``rel`` still holds ``needle`` (brain's hooks):
    `info/exclude` and Claude Code's local scope are shared by every worktree, so they stay while one uses them."""
    from . import repofiles

    git, root = _git(repo)
    if git is None:
        return []
    try:
        listing = git.run("worktree", "list", "--porcelain", check=False).stdout
    except BrainError:
        return []
    inside = os.path.relpath(Path(repo).resolve(), root)
    users = []
    for line in listing.splitlines():
        if not line.startswith("worktree "):
            continue
        other = Path(line[len("worktree "):])
        if os.path.realpath(other) == str(root):
            continue
        try:
            text = repofiles.read_text(other / inside, rel)
        except (BrainError, OSError):
            continue
        if text and needle in text:
            users.append(str(other))
    return users


def undo_exclude(record: dict | None, repo: Path | None = None, rel: str = "", needle: str = "") -> bool:
    """Remove the two lines ``keep_out_of_git`` added (the user's lines stay), unless another worktree's ``rel``
    still holds ``needle``; True if removed."""
    if not record or not record.get("exclude") or not record.get("line"):
        return False
    if repo is not None and needle and other_worktrees_using(repo, rel, needle):
        return False
    path = Path(record["exclude"])
    try:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return False
    block = f"{MARK}\n{record['line']}\n"
    if block not in text:
        return False
    atomic_write_bytes(path, text.replace(block, "", 1).encode("utf-8", "surrogateescape"))
    return True
