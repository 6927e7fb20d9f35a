"""The walk of the memory stores, with each folder's listing kept between refreshes.

A no-op `brain index` at 50,000 notes was this walk: one directory read a folder, then for
every file a path join, the memory-name check (Unicode normalization, hidden and control
characters) and an ``lstat``. Only the ``lstat`` is needed to notice an edit in place (it
moves the file's own mtime, not its folder's). Adding, removing or renaming an entry moves
the folder's mtime and ctime, so a folder whose inode, ctime and mtime are what they were
when it was last listed holds the same names: its kept listing (the sub-folders to descend
and the file names that passed the name check) is reused, and only the files are stat'ed.

ctime is part of the key because nobody can set it (``touch -d`` or a restored backup can
put an old mtime back, never an old ctime). A listing is kept only when the folder's stamps
are older than the walk's start by ``RACY_NS``: an entry added within the same clock tick as
the listing would leave the stamps unchanged (git calls this the racy case), so a folder
changed that recently is listed again next time. The stamps are taken before the directory
is read: a change during the read moves them, and the next walk lists the folder again.
"""

from __future__ import annotations

import os
import stat
import time

from ..memory.paths import is_plain_memory_name
from ..trees import MAX_DEPTH, note_too_deep

__all__ = ["RACY_NS", "found", "walk_memory"]

RACY_NS = 2_000_000_000  # two seconds: coarser than any file system's timestamp tick brain runs on (FAT: 2 s)


def _list(where, top: bool, flat: bool, contracts: bool) -> tuple[list[str], list[str]] | None:
    """(sub-folders to descend, sorted; file names that may be memory) of one folder (a path or an open
    descriptor), or None if unreadable."""
    try:
        with os.scandir(where) as entries:
            listed = [(entry.name, _is_real_dir(entry)) for entry in entries]
    except OSError:
        return None
    dirs, names = [], []
    for name, is_dir in listed:
        if is_dir:
            if not flat and is_plain_memory_name(name) and not (top and name.casefold() == "runtime"):
                dirs.append(name)
        elif (name.endswith(".md") or (contracts and name.endswith(".yml"))) and is_plain_memory_name(name):
            names.append(name)  # brain.local.yml and every other setting file: never indexed
    dirs.sort()
    return dirs, names


def _is_real_dir(entry: os.DirEntry) -> bool | None:
    """True for a folder, None for a link to one (neither descended nor indexed), False otherwise."""
    try:
        if not entry.is_dir():
            return False
        return None if entry.is_symlink() else True
    except OSError:
        return False


_DIR_FD = os.stat in os.supports_dir_fd and os.scandir in os.supports_fd
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_folder(folder: str) -> int | None:
    """The folder opened (never through a link in its last part), or None where descriptors do not serve."""
    if not _DIR_FD:
        return None
    try:
        return os.open(folder, _OPEN_FLAGS)
    except OSError:
        return None


def _folder(folder: str, fd: int | None, prefix: str, rel_dir: str, kept: dict, settled: int,
            keep: dict) -> tuple[list[str], list[str]] | None:
    """One folder's (sub-folders, names): its kept listing when its stamps did not move, else read again."""
    try:
        st = os.fstat(fd) if fd is not None else os.lstat(folder)
    except OSError:
        return None
    if _DIR_FD and fd is None:
        return None  # could not be opened (gone, unreadable, or a link put in its place): skipped
    stamps = [st.st_ino, st.st_ctime_ns, st.st_mtime_ns]
    old = kept.get(folder)
    if old is not None and old[:3] == stamps:
        listed = old[3], old[4]
    else:
        listed = _list(fd if fd is not None else folder, not prefix and not rel_dir, bool(prefix),
                       not prefix and rel_dir == "contracts/")
        if listed is None:
            return None
    if st.st_ctime_ns < settled and st.st_mtime_ns < settled:
        keep[folder] = stamps + [listed[0], listed[1]]  # the walk adds the files' stamps
    return listed


def _stamps(names: list[str], folder: str, fd: int | None) -> list[int]:
    """Size and mtime of each name, flat ([size, mtime_ns, size, mtime_ns, ...]; -1, -1 for a name gone
    or a link, never followed nor read). Each looked up in the open folder where descriptors serve."""
    stamps: list[int] = []
    push, stat_of, is_link = stamps.append, os.stat, stat.S_ISLNK
    paths = names if fd is not None else [folder + os.sep + name for name in names]
    for path in paths:
        try:
            st = stat_of(path, dir_fd=fd, follow_symlinks=False)
        except OSError:
            push(-1)
            push(-1)
            continue
        if is_link(st.st_mode):
            push(-1)
            push(-1)
        else:
            push(st.st_size)
            push(st.st_mtime_ns)
    return stamps


def walk_memory(roots: list[tuple[str, str]], kept: dict | None = None) -> tuple[list, dict]:
    """Walk the memory roots ((prefix, folder) pairs; a prefixed root is read flat).

    Returns (the folders walked in order, each as (relative folder with its trailing slash, path,
    names, flat stamps: see ``_stamps``); the listings worth keeping for the next walk: folder ->
    [inode, ctime_ns, mtime_ns, sub-folders, names, stamps]). ``kept`` is that last value from the
    previous walk. ``found`` turns the folders into the set the index's stamps are compared with."""
    kept = kept or {}
    walked: list[tuple[str, str, list[str], list[int]]] = []
    keep: dict[str, list] = {}
    settled = time.time_ns() - RACY_NS
    for prefix, root in roots:
        if os.path.islink(root):
            continue  # a linked decisions folder is never read (a cloned repository may carry one)
        stack: list[tuple[str, str, int]] = [(root, "", 0)]
        while stack:
            folder, rel_dir, depth = stack.pop()
            fd = _open_folder(folder)
            try:
                listed = _folder(folder, fd, prefix, rel_dir, kept, settled, keep)
                if listed is None:
                    continue  # unreadable: skipped, as the walk always did
                dirs, names = listed
                stamps = _stamps(names, folder, fd)
            finally:
                if fd is not None:
                    os.close(fd)
            walked.append((prefix + rel_dir, folder, names, stamps))
            if folder in keep:
                keep[folder].append(stamps)
            if dirs and depth >= MAX_DEPTH:
                note_too_deep(folder)
                continue
            for name in reversed(dirs):
                stack.append((os.path.join(folder, name), rel_dir + name + "/", depth + 1))
    return walked, keep


def found(walked: list) -> set[tuple[str, int, int]]:
    """The (relative path, size, mtime_ns) of every regular memory file the walk found."""
    out = set()
    for key, _, names, stamps in walked:
        for i, name in enumerate(names):
            size = stamps[2 * i]
            if size >= 0:
                out.add((key + name, size, stamps[2 * i + 1]))
    return out
