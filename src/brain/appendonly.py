"""Appending whole lines to brain's append-only files, or nothing at all.

A line appended with one ``write()`` is whole only when the write completes: on a full
disk or past a file-size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) ``write()`` writes a
prefix and returns its length, and the next one fails with ENOSPC/EFBIG. Reported as
written, that left a torn last line (`brain record-turn` printed "recorded turn 2" and
`brain log` skipped the fragment). Here a write that did not complete cuts the file back
to the length it had and raises ``IncompleteWrite``; appenders hold the file's lock
(flock), so the cut never removes another writer's line.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from .errors import IncompleteWrite

__all__ = ["append_whole", "append_line"]


def append_whole(fd: int, data: bytes, shown: str) -> int:
    """Append ``data`` to ``fd`` (opened O_APPEND, its flock held by the caller) completely, or
    leave the file as it was and raise IncompleteWrite. Returns the bytes written."""
    before = os.fstat(fd).st_size
    written = 0
    try:
        while written < len(data):
            count = os.write(fd, data[written:])
            if count <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += count
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, before)
        reason = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        raise IncompleteWrite(shown, written, len(data), reason) from None
    return written


def append_line(path: Path, data: bytes, *, mode: int = 0o600) -> int:
    """Append one whole line (``data`` ends in a newline) to ``path``, never through a link, under the
    file's lock; a torn fragment left before (a killed writer) is closed with a newline first."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and _last_byte(path, size) != b"\n":
            data = b"\n" + data
        return append_whole(fd, data, str(path))
    finally:
        os.close(fd)  # closing releases the lock


def _last_byte(path: Path, size: int) -> bytes:
    """The file's last byte (the append descriptor is write-only)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b"\n"
    try:
        return os.pread(fd, 1, size - 1)
    finally:
        os.close(fd)
