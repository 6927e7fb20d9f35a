"""Private by default: brain's own state is created readable by its owner only, whatever the umask.

Why: `runtime/` holds the human-only conversation logs, the coordination database, token
hashes, boot and report records; the personal layer (`$BRAIN_HOME/personal`) holds one
person's notes. With the common umask 022 every local user could read them. So every folder
of that state is created 0700 and every file 0600 (a umask can only take bits away from
those, never add any), by the two functions here, which every writer of such state calls
(``ensure_private_dir``, ``open_private``; ``precreate_private`` for files another library
creates, such as SQLite's: its `-wal`, `-shm` and journal files copy the database file's mode).
Files brain did not create (an older brain's, a copy) are never chmod-ed behind the user's
back: ``loose_modes`` finds them and `brain doctor` names them with the chmod that fixes them.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "ensure_private_dir", "open_private", "precreate_private",
           "loose_modes", "chmod_fix"]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_OTHERS = 0o077  # any bit for the group or the others


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents as 0700 folders (existing ones are left as they are).

    The one helper for runtime-like folders (runtime/, conversations/, a layer, a per-repository
    store): the mode is set on the open folder after mkdir, so even a umask of 0o777 leaves a
    usable folder, and a link swapped in meanwhile is not followed."""
    path = Path(path)
    missing: list[Path] = []
    cur = path
    while not os.path.lexists(cur) and cur != cur.parent:
        missing.append(cur)
        cur = cur.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # a concurrent writer made it (with this same helper, or it is reported by doctor)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, PRIVATE_DIR_MODE)
        finally:
            os.close(fd)
    return path


def open_private(path: Path | str, flags: int, *, dir_fd: int | None = None) -> int:
    """``os.open`` creating a missing file 0600 (never through a link); returns the fd."""
    return os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE, dir_fd=dir_fd)


def precreate_private(path: Path) -> None:
    """Create ``path`` empty and 0600 when it is missing, in a private folder, before another library opens it.

    SQLite creates a database 0644 minus the umask, and its `-wal`, `-shm` and `-journal` files with
    the mode of the database file: a database made here first keeps all four private."""
    ensure_private_dir(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(open_private(path, os.O_WRONLY | os.O_EXCL))


def loose_modes(root: Path) -> list[tuple[str, int]]:
    """(path, mode) of every folder and file under ``root`` (and ``root`` itself) that the group or
    others may use, without following links; [] when ``root`` is missing."""
    found: list[tuple[str, int]] = []
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return found
    if stat.S_ISLNK(info.st_mode):
        return found
    if info.st_mode & _OTHERS:
        found.append((str(root), stat.S_IMODE(info.st_mode)))
    if not stat.S_ISDIR(info.st_mode):
        return found
    stack = [str(root)]
    while stack:  # iterative: a deep tree must not exhaust the recursion limit
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & _OTHERS:
                found.append((entry.path, stat.S_IMODE(st.st_mode)))
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
    return sorted(found)


def chmod_fix(root: Path) -> str:
    """The command that makes ``root`` private again (folders 0700, files 0600 where they were group/other-readable)."""
    import shlex

    return f"chmod -R go-rwx {shlex.quote(str(root))}"
