"""The boot's ``git status`` without git's walk of every folder: git's own untracked cache, in brain's copy
of the index.

A task boot asks git for the changed and untracked files (``gitstamp.git_state``). Listing the untracked
ones is most of that call's cost (on Django 4.2: 0.043 s of CPU with them, 0.015 s without): git opens
every folder of the tree and matches every name against the ignore rules. Git can remember that walk
(``core.untrackedCache``: each folder's mtime, its `.gitignore`, the exclude files) in an extension of
the index, but only when it writes the index, and the boot must not write the user's (``--no-optional-locks``:
no lock beside the user's own git, and `brain map`'s layout watches that file). So the boot gives git a
copy: ``.brain/runtime/git-status.index.<checksum>``, a byte copy of `.git/index` named by its trailing
checksum (a new copy when the real index changes), in which git keeps its untracked cache. The
answer is git's own: same entries, same working tree, same ignore rules, the cache invalidated by git
itself when a folder, a `.gitignore` or an exclude file changes.

With ``--untracked-files=all`` git does not use the cache, so this asks for ``normal`` (an untracked
folder as one `dir/` line) and lists the files of the untracked folders it names with one ``git
ls-files --others --exclude-standard`` over those folders only. Without a brain runtime folder, a
git dir or a checksummed index, or with a split index, the caller runs the full listing as before. A
linked worktree (`git worktree add`: `.git` is a `gitdir:` file) has its own index in its own git dir,
found as ``checkout.locate_checkout`` finds it (its back links checked, so a `.git` file cannot point the
copy at another folder's index); agents in parallel worktrees are the common case, not an exception. Nothing here lets the repository choose what git
runs: the command line sets the cache on and split index off, gitsafe does the rest.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["PRIVATE_INDEX", "cached_status"]

PRIVATE_INDEX = "git-status.index"  # in .brain/runtime/, then a dot and the real index's checksum
_TAIL = 32  # the index's trailing checksum: SHA-1 (20 bytes) or SHA-256 (32); the last 32 bytes hold either


def _git_dir(repo: Path) -> Path | None:
    """The git dir holding ``repo``'s index: `.git` itself, or a linked worktree's own git dir; None for
    anything else (no git, a link, a submodule's or a separate git dir's `gitdir:` file)."""
    dot_git = repo / ".git"
    if os.path.islink(dot_git):
        return None
    if os.path.isdir(dot_git):
        return dot_git
    if not os.path.isfile(dot_git):
        return None
    from ..checkout import locate_checkout

    found = locate_checkout(repo)
    if found is None or not found.linked or found.root != Path(repo).resolve():
        return None
    return found.git_dir


def _copy(repo: Path, runtime: Path) -> Path | None:
    """brain's copy of the repository's current index (made now when there is none), or None.

    The copy is named by the real index's trailing checksum: a boot whose git is still writing the
    copy of an older index (its refreshed stat data) writes that older file, never the current one."""
    git_dir = _git_dir(repo)
    if git_dir is None:
        return None
    try:
        with open(git_dir / "index", "rb") as f:  # one open file: the checksum and the bytes agree
            size = os.fstat(f.fileno()).st_size
            if size < 12 + _TAIL:
                return None
            f.seek(size - _TAIL)
            tail = f.read(_TAIL).hex()
            if tail.endswith("0" * 40):
                return None  # index.skipHash: no checksum tells one index from another
            private = runtime / f"{PRIVATE_INDEX}.{tail[-40:]}"
            if os.path.isfile(private):
                return private
            if any(name.startswith("sharedindex.") for name in os.listdir(git_dir)):
                return None  # a split index: git would write shared parts into the git dir
            f.seek(0)
            data = f.read()
        from ..memory.private import open_private

        tmp = runtime / f"{PRIVATE_INDEX}.{os.getpid()}.tmp"
        fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)  # 0600, as every runtime file
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, private)
        for name in os.listdir(runtime):  # the copies of older indexes
            if name.startswith(PRIVATE_INDEX + ".") and name != private.name and not name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(runtime / name)
        return private
    except OSError:
        return None


def cached_status(repo: Path) -> str | None:
    """``git status --porcelain=v2 --branch -z`` output whose entries are what ``--untracked-files=all --
    . :(exclude).brain`` lists, from brain's index copy; None when that cannot be had this way."""
    from ..errors import UntrustedRepository
    from ..gitsafe import GitRepo

    runtime = repo / ".brain" / "runtime"
    try:
        if not os.path.isdir(runtime):
            return None
    except OSError:
        return None
    private = _copy(repo, runtime)
    if private is None:
        return None
    try:
        # umask 077: git's own rewrite of the copy (its refreshed stat data, its cache) stays 0600 too
        git = GitRepo(repo, timeout=5, index_file=str(private), private=True)
    except UntrustedRepository:
        return None
    out = git.output("-c", "core.untrackedCache=true", "-c", "core.splitIndex=false", "status", "--porcelain=v2",
                     "--branch", "--untracked-files=normal", "-z")
    if out is None:
        return None
    items = out.split("\0")
    kept: list[str] = []
    folders: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if item.startswith("2 "):  # a rename: its original path follows as its own item
            source = items[i] if i < len(items) else ""
            i += 1
            if not (_in_brain(item.split(" ", 9)[-1]) and _in_brain(source)):
                if _in_brain(item.split(" ", 9)[-1]) or _in_brain(source):
                    return None  # a rename across .brain/'s edge: the pathspec's answer differs, ask it
                kept += [item, source]
            continue
        path = _path_of(item)
        if path is not None and _in_brain(path):
            continue
        if item.startswith("? ") and item.endswith("/"):
            folders.append(item[2:])  # an untracked folder (or a nested repository) as one line
            continue
        kept.append(item)
    if folders:
        # the files the full listing names in them, by the same rules (git's standard excludes), walking
        # only these folders; a nested repository stays one `dir/` line, as in the full listing
        listed = git.output("ls-files", "--others", "--exclude-standard", "-z", "--",
                            *(":(literal)" + folder for folder in folders))
        if listed is None:
            return None
        kept[-1:-1] = ["? " + path for path in listed.split("\0") if path and not _in_brain(path)]
    return "\0".join(kept)


def _path_of(item: str) -> str | None:
    if item.startswith("1 "):
        return item.split(" ", 8)[-1]
    if item.startswith("u "):
        return item.split(" ", 10)[-1]
    if item.startswith(("? ", "! ")):
        return item[2:]
    return None  # a header (`# branch.oid ...`) or the empty tail


def _in_brain(path: str) -> bool:
    return path == ".brain" or path == ".brain/" or path.startswith(".brain/")
