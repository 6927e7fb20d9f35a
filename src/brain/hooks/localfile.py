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

__all__ = ["SharedFile", "keep_out_of_git", "undo_exclude", "MARK"]

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


def undo_exclude(record: dict | None) -> bool:
    """Remove the two lines ``keep_out_of_git`` added (the user's lines stay); True if removed."""
    if not record or not record.get("exclude") or not record.get("line"):
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
