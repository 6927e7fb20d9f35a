"""Reading untrusted input in bounded memory: whole inputs and lines, refused or skipped by size while reading.

A size check after ``read()`` comes too late: ``brain write note x --file`` on a 3 GB file
took 6 GB before refusing, ``--file /dev/zero`` (or a FIFO, or standard input) never ends,
and under a memory cap it was a MemoryError traceback. Here nothing holds more than the
limit plus one chunk: ``read_bounded`` stops at ``limit + 1`` bytes and raises
``InputTooLarge`` (exit code 2, like every other too-large input), and ``bounded_lines``
hands a line longer than its bound back as ``None`` (with its length) without keeping its
bytes, so readers of JSON Lines files (transcripts, conversation logs) count it as damaged
and go on.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a task boot (decision 0043)
if TYPE_CHECKING:
    from typing import BinaryIO

from .errors import InputTooLarge, InvalidInput, NotFound

__all__ = ["read_bounded", "read_file_bounded", "read_repository_file", "bounded_lines", "loads_json", "CHUNK",
           "MAX_REPOSITORY_FILE"]

CHUNK = 1 << 16  # bytes read at a time
MAX_REPOSITORY_FILE = 8 * 1024 * 1024  # a manifest, a git hook, AGENTS.md: anything larger is no such file


def read_bounded(stream: BinaryIO, limit: int, what: str, *, setting: str | None = None) -> bytes:
    """At most ``limit`` bytes of ``stream``; InputTooLarge as soon as byte ``limit + 1`` arrives."""
    parts: list[bytes] = []
    held = 0
    while True:
        chunk = stream.read(min(CHUNK, limit + 1 - held))
        if not chunk:
            return b"".join(parts)
        held += len(chunk)
        if held > limit:
            raise InputTooLarge(what, limit, setting)
        parts.append(chunk)


def read_file_bounded(path: str, limit: int, what: str, *, setting: str | None = None) -> bytes:
    """The bytes of the file at ``path`` (a regular file, a FIFO, a device...), at most ``limit``.

    A regular file is refused by its size before a byte is read (its exact size goes in the error)."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise NotFound(f"input file {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder", field="file") from None
    with handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise InvalidInput(f"{path} is a folder", field="file")
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise InputTooLarge(what, limit, setting, size=info.st_size)
        return read_bounded(handle, limit, what, setting=setting)


def read_repository_file(path, limit: int = MAX_REPOSITORY_FILE, what: str | None = None) -> bytes | None:
    """The bytes of a file a clone ships (a manifest, AGENTS.md, a git hook), or None when it is absent,
    a symbolic link or not a regular file; InputTooLarge past ``limit`` (checked by size first, then while
    reading, so a file growing meanwhile is still bounded). A clone is somebody else's data: a 3 GB
    package.json or a FIFO named pyproject.toml must cost a bounded read, never a hang."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        import errno

        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EACCES):
            return None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        shown = what or str(path)
        if info.st_size > limit:
            raise InputTooLarge(shown, limit, None, size=info.st_size)
        return read_bounded(handle, limit, shown)


def bounded_lines(handle: BinaryIO, max_line: int) -> Iterator[tuple[bytes | None, int, bool]]:
    """Each line of ``handle`` as (bytes, length, whole): ``whole`` when it ends in a newline (only the
    last line may not: torn, or being written).

    A line longer than ``max_line`` bytes (newline included) comes with None for its bytes: they are
    read through in chunks and dropped, so memory never holds more than ``max_line`` + 1 bytes."""
    while True:
        raw = handle.readline(max_line + 1)
        if not raw:
            return
        if len(raw) <= max_line:
            yield raw, len(raw), raw.endswith(b"\n")
            continue
        size = len(raw)
        while not raw.endswith(b"\n"):
            raw = handle.readline(CHUNK)
            if not raw:
                break
            size += len(raw)
        yield None, size, raw.endswith(b"\n")


def loads_json(data: str | bytes):
    """``json.loads``, with a document nested too deeply for it (``[[[[...]]]]`` 100,000 deep: valid JSON, a
    RecursionError) refused as invalid: a ``json.JSONDecodeError``, the ValueError every caller handles."""
    try:
        return json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
