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
import fcntl
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from ..errors import Conflict, InvalidInput, NotFound, PathEscape, TooLarge

__all__ = ["Document", "MemoryStore", "content_hash", "atomic_write_bytes", "decode_text"]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, and durably unless told otherwise.

    ``durable=False`` skips the two fsyncs (file and folder): readers and a crashed
    process still see the old or the new file, but a power loss may lose the write.
    Only for files derived from another source (a handoff is refolded from its log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if not durable:
        return
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@dataclass(frozen=True)
class Document:
    path: str  # relative to the store root, POSIX separators
    text: str
    hash: str
    redacted: tuple[tuple[str, int], ...] = field(default=(), compare=False)  # (kind, count) of secrets taken out

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


class MemoryStore:
    """The markdown files under one root (a `.brain/` folder or a layer)."""

    def __init__(self, root: Path, *, write_limit: int = 262144, limits: dict[str, int] | None = None,
                 lock_path: Path | None = None, redactor: Callable | None = None) -> None:
        self.root = root.resolve()
        self.redactor = redactor  # brain.security.Redactor: secrets are replaced before anything touches disk
        self.write_limit = write_limit
        self.limits = dict(limits or {})  # per relative path, e.g. {"now.md": 16384}
        self._lock_path = lock_path

    # -- paths -----------------------------------------------------------------
    def resolve(self, rel: str) -> Path:
        """Map a relative memory path to a real path, refusing anything that leaves the root."""
        if not isinstance(rel, str) or not rel.strip():
            raise InvalidInput("a memory path is required", field="path")
        if "\x00" in rel or "\\" in rel:
            raise PathEscape(rel)
        pure = PurePosixPath(rel)
        if pure.is_absolute() or rel.startswith("~") or any(part == ".." for part in pure.parts):
            raise PathEscape(rel)
        target = (self.root / pure).resolve()
        if target != self.root and self.root not in target.parents:
            raise PathEscape(rel)  # a symlink pointing out of the brain
        return target

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    # -- reading ---------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        return self.resolve(rel).is_file()

    def read(self, rel: str) -> Document:
        path = self.resolve(rel)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise NotFound(f"memory file {rel}", hint="`brain read` takes a path relative to .brain/, e.g. now.md or notes/x.md") from None
        except IsADirectoryError:
            raise InvalidInput(f"{rel} is a folder, not a memory file", field="path") from None
        return Document(rel, decode_text(data, rel), content_hash(data))

    def read_or_none(self, rel: str) -> Document | None:
        try:
            return self.read(rel)
        except NotFound:
            return None

    def list(self, folder: str = "", pattern: str = "*.md") -> list[str]:
        """Relative paths of the files directly in ``folder`` matching ``pattern``, sorted."""
        base = self.resolve(folder) if folder else self.root
        prefix = "" if base == self.root else self.relative(base) + "/"
        try:
            with os.scandir(base) as entries:
                names = [e.name for e in entries if not e.name.startswith(".") and e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            return []
        if pattern.startswith("*") and "*" not in pattern[1:] and "?" not in pattern and "[" not in pattern:
            names = [n for n in names if n.endswith(pattern[1:])]
        else:
            import fnmatch

            names = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        return sorted(prefix + n for n in names)

    # -- writing ---------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self):
        lock_path = self._lock_path or (self.root / ".write.lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def write(self, rel: str, text: str, *, expected_hash: str | None = None, durable: bool = True) -> Document:
        """Write ``text`` at ``rel`` atomically; with ``expected_hash``, only over that version.

        ``expected_hash`` may be the full sha256 or a prefix of at least 8 hex digits;
        the empty string means "the file must not exist yet". ``durable=False`` is for
        files derived from another source (see ``atomic_write_bytes``).
        """
        path = self.resolve(rel)
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
        with self.lock():
            if expected_hash is not None:
                actual = content_hash(path.read_bytes()) if path.is_file() else None
                ok = (actual is None) if expected_hash == "" else (actual is not None and actual.startswith(expected_hash.lower()))
                if not ok:
                    raise Conflict(rel, expected_hash or "(no file)", actual)
            atomic_write_bytes(path, data, durable=durable)
        return Document(rel, text, content_hash(data), redacted)

    def delete(self, rel: str, *, expected_hash: str | None = None) -> None:
        path = self.resolve(rel)
        with self.lock():
            if not path.is_file():
                raise NotFound(f"memory file {rel}")
            if expected_hash is not None:
                actual = content_hash(path.read_bytes())
                if not actual.startswith(expected_hash.lower()):
                    raise Conflict(rel, expected_hash, actual)
            path.unlink()
