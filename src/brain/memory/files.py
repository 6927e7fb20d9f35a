"""Memory files: every path confined to one root, every write atomic and checked.

A write goes to a temporary file in the same folder, is fsynced, then renamed over
the old file, so a reader (or a crash) sees the old or the new version, never a torn
one. A write may carry the hash of the version it read; if the file changed since,
the write is refused with Conflict instead of clobbering the newer version. Writers
of one brain are serialized by an advisory file lock, released by the kernel even
when a writer is killed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import time
from collections import namedtuple
from pathlib import Path, PurePosixPath
from collections.abc import Callable

from ..errors import Conflict, InvalidInput, NotFound, PathEscape, PathRefused, TooLarge
from .paths import WriteAreas, confine, is_plain_memory_name
from .private import PRIVATE_FILE_MODE, ensure_private_dir, open_private
from ..lazyre import lazy

# No memory file brain reads is larger (a write is at most limits.write_bytes, 256 KiB by default): a bigger
# one is refused by its size before it is read (TooLarge), and skipped by the walkers (index, decisions).
MAX_READ_BYTES = 64 * 1024 * 1024

__all__ = ["Document", "MemoryStore", "content_hash", "new_sha256", "atomic_write_bytes", "decode_text", "read_confined",
           "read_memory_file", "read_regular_file", "remove_stale_temps", "STALE_TEMP_SECONDS", "pid_alive", "file_lock"]


try:  # the interpreter's own SHA-256, what hashlib falls back to without OpenSSL: the same digest, and a
    # cold `brain boot` (it hashes now.md) does not load OpenSSL through hashlib (2.5 ms); memory files are small
    from _sha256 import sha256 as _sha256  # CPython 3.11
except ImportError:  # pragma: no cover - 3.12 renamed it; another interpreter may have neither
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256


def new_sha256():
    """An empty SHA-256 hash object, the interpreter's own like ``content_hash``'s: for the few small inputs
    a boot hashes (a card's staleness signature), not for a tree's files."""
    return _sha256()


def content_hash(data: bytes) -> str:
    """The SHA-256 of a memory file's bytes, hex (a Document's ``hash``, what ``--expect`` compares)."""
    return _sha256(data).hexdigest()


def decode_text(data: bytes, what: str) -> str:
    """Decode UTF-8 or fail with an error naming the offending byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            field="text",
            hint="save the file as UTF-8 text",
        ) from None
    if "\x00" in text:
        raise InvalidInput(f"{what} contains a NUL byte: memory files are text", field="text")
    return text


_TEMP_SUFFIX = ".tmp"
_TEMP_NAME_BYTES = 200  # the name part of a temporary file, so `.{name}.{pid}.{rand}.tmp` stays under 255 bytes
_TEMP_RE = lazy(r"^\..+\.([0-9]{1,10})\.([0-9a-f]{8})\.tmp$", re.S)
STALE_TEMP_SECONDS = 3600  # a temporary file this old is stale even if its pid is alive (pid reuse)


def _temp_name(name: str) -> str:
    head = name.encode("utf-8", "surrogatepass")[:_TEMP_NAME_BYTES].decode("utf-8", "ignore")
    return f".{head}.{os.getpid()}.{os.urandom(4).hex()}{_TEMP_SUFFIX}"


def pid_alive(pid: int) -> bool:
    """Whether a process id exists on this machine (a SIGKILLed writer's does not); never true for 0 or less,
    which ``kill`` reads as a process group."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 2 ** 31  # someone else's live process (or a pid no system uses)
    return True


def remove_stale_temps(dir_fd: int, *, now: float | None = None) -> list[str]:
    """Remove the temporary files a killed writer left in one folder; return their names.

    Only names of the shape atomic writes use (`.{name}.{pid}.{8 hex}.tmp`), and only when
    their pid is not a live process on this machine or they are older than
    STALE_TEMP_SECONDS: a concurrent writer's live temporary file is never touched."""
    removed: list[str] = []
    now = time.time() if now is None else now
    try:
        entries = list(os.scandir(dir_fd))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not name.startswith(".") or not name.endswith(_TEMP_SUFFIX):
            continue
        match = _TEMP_RE.match(name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
            continue
        if pid_alive(int(match.group(1))) and now - info.st_mtime < STALE_TEMP_SECONDS:
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
            removed.append(name)
    return removed


def _write_at(dir_fd: int, name: str, data: bytes, *, durable: bool, shown: str, mode: int = 0o644) -> None:
    """Atomically replace ``name`` in the open folder ``dir_fd`` (never through a symlink)."""
    remove_stale_temps(dir_fd)
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise PathRefused(shown, "symlink", f"{shown} is a symbolic link: links are never written through")
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise PathRefused(shown, "folder", f"{shown} is a folder, not a file")
    tmp = _temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if durable:
        os.fsync(dir_fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True, private: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically, and durably unless told otherwise.

    ``durable=False`` skips the two fsyncs (file and folder): readers and a crashed
    process still see the old or the new file, but a power loss may lose the write.
    Only for files derived from another source (a handoff is refolded from its log).
    ``private`` (runtime state) creates the file 0600 and missing folders 0700 (brain.memory.private).
    For brain's own files at paths it chose; memory paths go through MemoryStore.write."""
    if private:
        ensure_private_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _write_at(dir_fd, path.name, data, durable=durable, shown=str(path),
                  mode=PRIVATE_FILE_MODE if private else 0o644)
    finally:
        os.close(dir_fd)


def _open_folder(root: Path, parts: list[str], *, create: bool, shown: str, private: bool = False) -> int | None:
    """An fd of ``root/parts...`` opened one component at a time with O_NOFOLLOW (mkdir'ing the
    missing ones when ``create``), so no symlink on the way is followed, even one swapped in
    after the path was checked. None when a folder is missing and ``create`` is false."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:  # the root is trusted (a layer not created yet): made on a write
        if not create:
            return None
        if private:
            ensure_private_dir(root)
        else:
            root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            try:
                child = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700 if private else 0o755, dir_fd=fd)
                child = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathRefused(shown, "symlink", "a folder on the way is a symbolic link or a file") from None
        raise
    return fd


def _read_at(dir_fd: int, name: str, shown: str) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathRefused(shown, "symlink", f"{shown} is a symbolic link: links are never followed") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise PathRefused(shown, "folder", f"{shown} is a folder, not a memory file")
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(shown, "special", f"{shown} is not a regular file")
        if info.st_size > MAX_READ_BYTES:  # a clone may commit a huge (well-compressed) memory file
            raise TooLarge(shown, info.st_size, MAX_READ_BYTES)
        chunks, held = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            held += len(chunk)
            if held > MAX_READ_BYTES:  # grew while read
                raise TooLarge(shown, held, MAX_READ_BYTES)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_confined(root: Path, rel: str) -> bytes | None:
    """The bytes of the normalized memory path ``rel`` under ``root``, never through a symlink;
    None when it does not exist."""
    parts = rel.split("/")
    dir_fd = _open_folder(root, parts[:-1], create=False, shown=rel)
    if dir_fd is None:
        return None
    try:
        return _read_at(dir_fd, parts[-1], rel)
    finally:
        os.close(dir_fd)


def read_memory_file(root: Path, rel: str) -> bytes | None:
    """The bytes of memory path ``rel`` under ``root`` if the path rule accepts it and it is a
    regular file reached without a link; None otherwise (for derived readers, which skip)."""
    try:
        return read_confined(root, confine(root, rel))
    except (PathEscape, TooLarge):
        return None


def read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if its last component is a regular file and not a symlink, else None.

    For the walkers (index, decisions, graph) that list folders without following links."""
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return _read_at(dir_fd, path.name, path.name)
    except (PathRefused, TooLarge):
        return None
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def file_lock(path: Path):
    """Hold an exclusive advisory lock on ``path`` (created 0600 in a 0700 folder when missing) for the block.

    The kernel releases it when the holder dies, even by SIGKILL. Not re-entrant: a flock on a
    second open of the same file waits for the first, so one lock file per purpose."""
    ensure_private_dir(path.parent)
    fd = open_private(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


class Document(namedtuple("Document", "path text hash redacted", defaults=((),))):
    """A memory file as read or written: ``path`` relative to the store root (POSIX separators), its
    ``text`` and ``hash`` (content_hash), and ``redacted``: (kind, count) of the secrets taken out,
    which equality ignores. A named tuple, not a dataclass: the cold boot imports no dataclasses
    (decision 0038)."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return self[:3] == other[:3] if isinstance(other, Document) else NotImplemented

    def __ne__(self, other) -> bool:  # tuple's own would compare ``redacted`` too
        return self[:3] != other[:3] if isinstance(other, Document) else NotImplemented

    def __hash__(self) -> int:
        return hash(self[:3])

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


class MemoryStore:
    """The markdown files under one root (a `.brain/` folder or a layer).

    Every path goes through the confinement rule (brain.memory.paths.confine) and is used
    in its normalized form; ``areas`` narrows where writes may go (a project brain's memory
    areas; None for a user-level layer, where any folder of ``.md`` files is memory)."""

    def __init__(self, root: Path, *, write_limit: int = 262144, limits: dict[str, int] | None = None,
                 lock_path: Path | None = None, redactor: Callable | None = None,
                 areas: WriteAreas | None = None, private: bool = False) -> None:
        self.root = root.resolve()
        self.private = private  # a personal layer: files 0600, folders 0700 (brain.memory.private)
        self.redactor = redactor  # brain.security.Redactor: secrets are replaced before anything touches disk
        self.write_limit = write_limit
        self.limits = dict(limits or {})  # per normalized relative path, e.g. {"now.md": 16384}
        self.areas = areas
        self._lock_path = lock_path

    # -- paths -----------------------------------------------------------------
    def confine(self, rel: str, *, write: bool = False) -> str:
        """The normalized relative path of ``rel`` if the rule lets it be read (or written)."""
        return confine(self.root, rel, write=write, areas=self.areas)

    def resolve(self, rel: str) -> Path:
        """The real path of a memory path the rule accepts (PathEscape / PathRefused otherwise)."""
        return self.root / self.confine(rel)

    def folder(self, rel: str) -> Path:
        """The real path of a memory folder the rule accepts (links and refused names raise, as for files)."""
        norm = confine(self.root, rel, folder=True)
        return self.root / norm if norm else self.root

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    # -- reading ---------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        """Whether ``rel`` is a memory file (a link or a special file is not)."""
        try:
            rel = self.confine(rel)
        except PathRefused as exc:
            if exc.reason in ("symlink", "special"):
                return False
            raise
        return (self.root / rel).is_file()

    def read(self, rel: str) -> Document:
        norm = self.confine(rel)
        data = read_confined(self.root, norm)
        if data is None:
            raise NotFound(f"memory file {norm}", hint="`brain read` takes a path relative to .brain/, e.g. now.md or notes/x.md")
        return Document(norm, decode_text(data, norm), content_hash(data))

    def read_or_none(self, rel: str) -> Document | None:
        """The document, or None when it is missing or is not a regular file (a symlink a cloned
        repository carried is as absent to the boot and the other readers; ``read`` says why)."""
        try:
            return self.read(rel)
        except NotFound:
            return None
        except PathRefused as exc:
            if exc.reason in ("symlink", "special"):
                return None
            raise

    def list(self, folder: str = "", pattern: str = "*.md") -> list[str]:
        """Relative paths of the regular files directly in ``folder`` matching ``pattern``, sorted
        (symlinks and names the rule refuses are left out)."""
        norm = confine(self.root, folder, folder=True) if folder else ""
        parts = norm.split("/") if norm else []
        dir_fd = _open_folder(self.root, parts, create=False, shown=norm)
        if dir_fd is None:
            return []
        prefix = norm + "/" if norm else ""
        try:
            with os.scandir(dir_fd) as entries:
                names = [e.name for e in entries if e.is_file(follow_symlinks=False) and is_plain_memory_name(e.name)]
        finally:
            os.close(dir_fd)
        if pattern.startswith("*") and "*" not in pattern[1:] and "?" not in pattern and "[" not in pattern:
            names = [n for n in names if n.endswith(pattern[1:])]
        else:
            import fnmatch

            names = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        return sorted(prefix + n for n in names)

    # -- writing ---------------------------------------------------------------
    def lock(self):
        return file_lock(self._lock_path or (self.root / ".write.lock"))

    def write(self, rel: str, text: str, *, expected_hash: str | None = None, durable: bool = True) -> Document:
        """Write ``text`` at ``rel`` atomically; with ``expected_hash``, only over that version.

        ``expected_hash`` may be the full sha256 or a prefix of at least 8 hex digits;
        the empty string means "the file must not exist yet". ``durable=False`` is for
        files derived from another source (see ``atomic_write_bytes``). Everything is
        checked before anything touches the disk; the folders on the way are opened
        without following links, so nothing is created outside the root.
        """
        rel = self.confine(rel, write=True)
        if not isinstance(text, str):
            raise InvalidInput("the text to write must be a string", field="text")
        redacted: tuple[tuple[str, int], ...] = ()
        if self.redactor is not None:
            result = self.redactor.redact(text)
            text, redacted = result.text, tuple(sorted(result.found.items()))
        data = text.encode("utf-8")
        decode_text(data, rel)  # refuses NUL bytes
        limit = self.limits.get(rel, self.write_limit)
        if len(data) > limit:  # the per-path limits are now.md's (limits.now_bytes)
            raise TooLarge(rel, len(data), limit, "limits.now_bytes" if rel in self.limits else "limits.write_bytes")
        if expected_hash is not None and expected_hash != "" and len(expected_hash) < 8:
            raise InvalidInput("expected hash must have at least 8 hex digits", field="expected_hash")
        parts = rel.split("/")
        with self.lock():
            dir_fd = _open_folder(self.root, parts[:-1], create=True, shown=rel, private=self.private)
            try:
                if expected_hash is not None:
                    current = _read_at(dir_fd, parts[-1], rel)
                    actual = content_hash(current) if current is not None else None
                    ok = (actual is None) if expected_hash == "" else (actual is not None and actual.startswith(expected_hash.lower()))
                    if not ok:
                        raise Conflict(rel, expected_hash or "(no file)", actual)
                _write_at(dir_fd, parts[-1], data, durable=durable, shown=rel,
                          mode=PRIVATE_FILE_MODE if self.private else 0o644)
            finally:
                os.close(dir_fd)
        return Document(rel, text, content_hash(data), redacted)

    def delete(self, rel: str, *, expected_hash: str | None = None) -> None:
        rel = self.confine(rel, write=True)
        parts = rel.split("/")
        with self.lock():
            dir_fd = _open_folder(self.root, parts[:-1], create=False, shown=rel)
            if dir_fd is None:
                raise NotFound(f"memory file {rel}")
            try:
                current = _read_at(dir_fd, parts[-1], rel)
                if current is None:
                    raise NotFound(f"memory file {rel}")
                if expected_hash is not None:
                    actual = content_hash(current)
                    if not actual.startswith(expected_hash.lower()):
                        raise Conflict(rel, expected_hash, actual)
                os.unlink(parts[-1], dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
