"""Files the client installs read and write inside the repository, never through a link.

A cloned repository can ship symbolic links: `.claude -> ~/.claude` would make
`brain install claude-code` write `settings.json` into the user's global client settings
(and uninstall edit it later); a `CLAUDE.md` or `.mcp.json` link points anywhere too. So
every path below the repository is walked one component at a time with ``O_NOFOLLOW``
from an open descriptor of the repository (``openat``): a link at any level, even one
swapped in after a check, is refused with ``UnsafeLink`` and nothing is read or written
through it. A write replaces the file by an atomic rename in the folder already opened,
so it never writes into an existing inode either (a hard link keeps its old bytes).
``check`` validates a whole plan before the first write, so an install writes all or nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from ..errors import InvalidInput, UnsafeLink
from ..inputs import read_bounded
from ..memory.files import _write_at

__all__ = ["read_text", "write_text", "remove", "check", "exists"]

# a client's settings, `.mcp.json`, CLAUDE.md or AGENTS.md a clone ships is read at most this far (InputTooLarge)
MAX_CLIENT_FILE_BYTES = 8 * 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise InvalidInput(f"{rel!r} is not a path inside the repository", field="path")
    return parts


def _refuse(repo: Path, parts: list[str], what: str) -> UnsafeLink:
    shown = repo.joinpath(*parts)
    try:
        target = os.readlink(shown)
    except OSError:
        target = "?"
    return UnsafeLink(str(shown), target, what)


def _open_parent(repo: Path, parts: list[str], *, create: bool) -> int | None:
    """An fd of the folder holding ``parts[-1]``, every component opened without following a link;
    None when a folder is missing and ``create`` is false."""
    fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)  # the repository itself is where the user works
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if _is_link(fd, part):  # a dangling link
                    raise _refuse(repo, parts[: i + 1], "client settings folder") from None
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = _open_dir(repo, parts[: i + 1], fd, part)
            except OSError as exc:
                raise _classify(exc, repo, parts[: i + 1], fd, part) from None
            os.close(fd)
            fd = child
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return fd


def _open_dir(repo: Path, shown: list[str], fd: int, part: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _classify(exc, repo, shown, fd, part) from None


def _classify(exc: OSError, repo: Path, shown: list[str], fd: int, part: str) -> Exception:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
        return _refuse(repo, shown, "client settings folder")
    if exc.errno == errno.ENOTDIR:
        return InvalidInput(f"{repo.joinpath(*shown)} is not a folder; nothing was changed", field="path")
    return exc


def _is_link(fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _final(repo: Path, parts: list[str], fd: int) -> os.stat_result | None:
    """The last component's own status (None: absent); a link or a folder there is refused."""
    try:
        info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(repo, parts, "client file")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(f"{repo.joinpath(*parts)} is not a regular file; nothing was changed", field="path")
    return info


def read_text(repo: Path, rel: str) -> str | None:
    """The UTF-8 text of ``repo/rel``, None when it (or a folder on the way) does not exist."""
    parts = _parts(rel)
    fd = _open_parent(repo, parts, create=False)
    if fd is None:
        return None
    try:
        if _final(repo, parts, fd) is None:
            return None
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse(repo, parts, "client file") from None
            raise
        with os.fdopen(file_fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InvalidInput(f"{repo / rel} is not a regular file; nothing was changed", field="path")
            data = read_bounded(handle, MAX_CLIENT_FILE_BYTES, str(repo / rel))  # a clone's file: bounded
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{repo / rel} is not UTF-8 text; nothing was changed", field="file") from None


def exists(repo: Path, rel: str) -> bool:
    """Whether ``repo/rel`` is a regular file reached without a link (a link answers False)."""
    try:
        return read_text(repo, rel) is not None
    except (UnsafeLink, InvalidInput, OSError):
        return False


def check(repo: Path, rel: str) -> None:
    """Refuse now what ``write_text``/``remove`` would refuse later: a link (or a non-folder) on the way,
    a link or a non-file at the end. Creates nothing."""
    parts = _parts(rel)
    fd = _open_parent(repo, parts, create=False)
    if fd is not None:
        try:
            _final(repo, parts, fd)
        finally:
            os.close(fd)


def write_text(repo: Path, rel: str, text: str) -> None:
    """Replace ``repo/rel`` with ``text`` atomically (missing folders made), never through a link."""
    parts = _parts(rel)
    fd = _open_parent(repo, parts, create=True)
    try:
        _final(repo, parts, fd)
        _write_at(fd, parts[-1], text.encode("utf-8"), durable=True, shown=str(repo / rel))
    finally:
        os.close(fd)


def remove(repo: Path, rel: str) -> bool:
    """Delete ``repo/rel`` if it is there (a link on the way or at the end is refused); True if deleted."""
    parts = _parts(rel)
    fd = _open_parent(repo, parts, create=False)
    if fd is None:
        return False
    try:
        if _final(repo, parts, fd) is None:
            return False
        os.unlink(parts[-1], dir_fd=fd)
        return True
    finally:
        os.close(fd)
