"""Walking folder trees a repository ships: iteratively, never through links, and only so deep.

A folder 1,200 levels deep (git commits and clones it) made `brain index`, `map`, `search`
and `doctor` fail with RecursionError: ``os.walk`` and ``Path.rglob`` of Python 3.11
recurse once per level, and so did brain's own walks. ``walk`` here is ``os.walk``
(top-down, ``dirs`` may be pruned in place, links to folders listed but not descended)
with an explicit stack, and a bound: a folder ``MAX_DEPTH`` levels below the root is listed
but not descended, and ``too_deep`` notes it. ``too_deep_path`` applies the same bound
to listings that do not come from a walk (``git ls-files``).

The notices are kept for the command's edge to report (``take_notices``: the CLI prints
one line each on stderr) rather than printed here, so library callers stay silent.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

__all__ = ["MAX_DEPTH", "walk", "too_deep_path", "note_too_deep", "take_notices", "shown"]

MAX_DEPTH = 128  # folders below the root; real trees stay under 30 (Java packages, monorepos)
_MAX_NOTICES = 100

_notices: dict[str, None] = {}
_guard = threading.Lock()


def note_too_deep(path: str) -> None:
    """Record that the folder ``path`` was not descended (deeper than MAX_DEPTH)."""
    with _guard:
        if len(_notices) < _MAX_NOTICES:
            _notices[path] = None


def take_notices() -> list[str]:
    """The folders skipped as too deep since the last call (oldest first), forgotten once taken."""
    with _guard:
        found = list(_notices)
        _notices.clear()
    return found


def walk(root: str | os.PathLike, *, max_depth: int = MAX_DEPTH) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` without recursion (see the module docstring); unreadable folders are skipped."""
    root = os.fspath(root)
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        dirs, files, links = [], [], set()
        for entry in listed:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                dirs.append(entry.name)
                try:
                    if entry.is_symlink():
                        links.add(entry.name)
                except OSError:
                    links.add(entry.name)
            else:
                files.append(entry.name)
        yield folder, dirs, files
        descend = [d for d in dirs if d not in links]
        if descend and depth >= max_depth:
            note_too_deep(folder)
            continue
        for name in reversed(descend):
            stack.append((os.path.join(folder, name), depth + 1))


def too_deep_path(rel: str, *, max_depth: int = MAX_DEPTH, root: str = "") -> bool:
    """Whether the repository-relative file path ``rel`` lies more than ``max_depth`` folders down
    (noted once, by its folder at the bound, prefixed with ``root``)."""
    if rel.count("/") <= max_depth:
        return False
    note_too_deep(os.path.join(root, *rel.split("/")[:max_depth + 1]) if root else "/".join(rel.split("/")[:max_depth + 1]))
    return True


def shown(path: str, keep: int = 3) -> str:
    """A deep path for a person: relative to the current folder when inside it, its middle elided
    (``a/b/c/.../x/y/z (130 folders)``)."""
    try:
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            path = rel
    except ValueError:
        pass
    parts = path.split(os.sep)
    if len(parts) <= 2 * keep + 1:
        return path
    return os.sep.join(parts[:keep] + ["..."] + parts[-keep:]) + f" ({len(parts)} folders)"
