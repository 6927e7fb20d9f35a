"""A new worktree's search index starts as a copy of a sibling worktree's.

Agent runners give each parallel agent a fresh `git worktree`; its first task boot found no index
and built one from nothing (3.4 s of CPU on Django, about a minute on 20,000 files), once per
agent. The repository's other worktrees usually hold an index of nearly the same files. So when
this checkout has none, the most recently written index of a sibling (the brain at the same place
in git's own worktree list) is copied, and the usual refresh takes it from there: the files it
finds with new stamps but the same text are restamped (``build.restamp_same_text``), only the
others indexed. Nothing in the index is canonical, so a copy is never wrong for long: whatever
differs is what a refresh compares anyway.

The copy is SQLite's online backup from a read-only connection (a consistent snapshot even while
the sibling writes; a read-only connection never checkpoints or deletes the sibling's WAL), taken
under the sibling's shared index lock (its swaps take it exclusively), written beside this index
and renamed into place only when there is still none.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from pathlib import Path

__all__ = ["sibling_index", "seed_from_sibling"]


def sibling_index(repo: Path, runtime: Path, name: str) -> Path | None:
    """The most recently written index file ``name`` of the same brain in another worktree, or None."""
    from ..checkout import locate_checkout, sibling_worktrees

    checkout = locate_checkout(repo)
    if checkout is None:
        return None
    try:
        rel = Path(runtime).resolve().relative_to(checkout.root)
    except ValueError:
        return None
    best: tuple[int, Path] | None = None
    for other in sibling_worktrees(checkout):
        path = other.root / rel / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not path.is_file() or path.is_symlink() or os.path.islink(path.parent):
            continue
        if best is None or st.st_mtime_ns > best[0]:
            best = (st.st_mtime_ns, path)
    return best[1] if best else None


def seed_from_sibling(repo: Path, target: Path, schema: str, lock_name: str) -> Path | None:
    """A copy of a sibling's index of schema version ``schema`` beside ``target`` (the caller renames it into
    place), or None when there is no sibling index of that version or it cannot be read."""
    source = sibling_index(repo, target.parent, target.name)
    if source is None:
        return None
    temp = target.with_name(f"{target.name}.seed-{os.getpid()}")
    try:
        with _shared_lock(source.with_name(lock_name)):
            src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
            try:
                row = src.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if row is None or row[0] != schema:
                    return None
                dst = sqlite3.connect(temp)
                try:
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode=WAL")
                finally:
                    dst.close()
            finally:
                src.close()
    except (sqlite3.Error, OSError):
        _remove(temp)
        return None
    return temp


@contextlib.contextmanager
def _shared_lock(path: Path):
    """The sibling's index lock, shared (no swap of its file meanwhile); nothing when it has no lock file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def _remove(temp: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(str(temp) + suffix)
