"""What a process compiled, kept for the next one: a marshal file per interpreter in the user's brain home.

Two things every task boot used to compile again, in Python: its regular expressions (``lazyre``) and
its records' ``__init__`` (``records``): about 8 and 6 ms of CPU. A ``Kept`` store holds what was made
from a fixed source (a pattern's program, a code object) under that source, in
``<brain home>/cache/<name>.<interpreter>.marshal`` (0700 folder, 0600 file), one file per interpreter
(cache tag, ``_sre.MAGIC``, ``sys.hexversion``, and the full ``sys.version`` checked inside). A process
reads the file once, at its first question, and writes what it added at exit (merged with what other
processes wrote meanwhile, at most ``MAX_ENTRIES``). No file, an unreadable or foreign one: nothing
kept, the caller compiles as before. The home is the user's own, as ``__pycache__`` is (decision 0060).
"""

from __future__ import annotations

import marshal
import os
import sys

__all__ = ["Kept", "KeptBlobs", "MAX_ENTRIES"]

MAX_ENTRIES = 2000  # a file's entries (the package has a few hundred patterns and records)


def _home() -> str:
    """The brain home as ``settings.brain_home`` reads it (``~`` expanded), without importing the settings."""
    raw = os.environ.get("BRAIN_HOME")
    return os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".brain")


def _tag() -> str:
    import _sre

    return f"{sys.implementation.cache_tag}-{_sre.MAGIC}-{sys.hexversion:x}"


class Kept:
    """``get(key)``/``put(key, value)`` over the file ``name`` (marshal-able keys and values)."""

    suffix = "marshal"

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: dict | None = None
        self._new: dict = {}
        self._path: str | None = None

    def path(self) -> str:
        """The file, under the brain home of this store's first question (the one written at exit)."""
        if self._path is None:
            self._path = os.path.join(_home(), "cache", f"{self.name}.{_tag()}.{self.suffix}")
        return self._path

    def _open(self) -> int | None:
        """A read-only descriptor of the file when it is the user's own and nobody else can write it, else None."""
        try:
            fd = os.open(self.path(), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if st.st_uid == os.getuid() and not st.st_mode & 0o022:
                return fd
        except OSError:
            pass
        os.close(fd)  # code another user could have written is never run (as ssh treats its files)
        return None

    def _read(self) -> dict:
        fd = self._open()
        if fd is None:
            return {}
        try:
            with os.fdopen(fd, "rb") as f:
                data = marshal.loads(f.read())
            if isinstance(data, dict) and data.get("version") == sys.version and isinstance(data.get("entries"), dict):
                return data["entries"]
        except (OSError, ValueError, EOFError, TypeError):
            pass
        return {}

    def entries(self) -> dict:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def get(self, key):
        return self.entries().get(key)

    def put(self, key, value) -> None:
        """Keep ``value`` for the next process (written at this one's exit), while the file has room."""
        if len(self.entries()) + len(self._new) >= MAX_ENTRIES:
            return
        if not self._new:
            import atexit

            atexit.register(self.save)
        self._new[key] = value

    def _all(self) -> dict:
        """Every entry the file holds now (another process may have written it since this one read it)."""
        return self._read()

    def _dumps(self, entries: dict) -> bytes:
        return marshal.dumps({"version": sys.version, "entries": entries})

    def save(self) -> None:
        if not self._new:
            return
        if os.path.dirname(os.path.dirname(self.path())) != _home():
            return  # the process moved to another brain home (`brain demo`): write nothing outside it
        try:
            from .memory.private import ensure_private_dir, open_private

            path = self.path()
            ensure_private_dir(os.path.dirname(path))
            entries = self._all()
            entries.update(self._new)
            data = self._dumps(entries)
            tmp = f"{path}.{os.getpid()}.tmp"
            fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
            self._new.clear()
        except Exception:  # noqa: BLE001 - a cache: not keeping it only costs the next process the compile
            pass


if hasattr(os, "pread"):
    _pread = os.pread
else:  # Windows: a seek and a read, one thread at a time (imports on two threads may ask at once)
    import _thread

    _SEEK_LOCK = _thread.allocate_lock()

    def _pread(fd: int, length: int, offset: int) -> bytes:
        with _SEEK_LOCK:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, length)


class KeptBlobs(Kept):
    """A ``Kept`` store whose values are tuples ending in a large ``bytes`` (a module's marshalled code), of
    which a process reads only those it asks for.

    The plain store reads its whole file and unmarshals every value at the first question; the modules'
    file holds the code of every brain module any command of any checkout of the package ran (3 MB for two
    checkouts' boot modules), of which a task boot needs about 110 modules' (1.5 MB). This file is an index
    (``marshal``: key -> the value without its bytes, and where they are) and then the bytes, one after
    another: a process reads the index at its first question and, per ``get``, its one value's bytes
    (``os.pread`` on the descriptor opened and checked then: the same file, even when another process
    replaces it meanwhile). Layout: 8 bytes (little-endian: the index's length), the index
    (``{"version": sys.version, "entries": {key: (*value[:-1], offset, length)}}``, the offset counted from
    the end of the index), the bytes. Anything unexpected (no file, a short, damaged or foreign one, a
    length past its end) reads as nothing kept."""

    suffix = "blobs"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._fd: int | None = None
        self._base = 0

    def _read_index(self) -> tuple[int | None, int, dict]:
        """(descriptor, where the bytes start, the index's entries), or (None, 0, {})."""
        fd = self._open()
        if fd is None:
            return None, 0, {}
        try:
            size = os.fstat(fd).st_size
            length = int.from_bytes(_pread(fd, 8, 0), "little")
            if 8 + length <= size:
                data = marshal.loads(_pread(fd, length, 8))
                if (isinstance(data, dict) and data.get("version") == sys.version
                        and isinstance(data.get("entries"), dict)):
                    return fd, 8 + length, data["entries"]
        except (OSError, ValueError, EOFError, TypeError):
            pass
        os.close(fd)
        return None, 0, {}

    def _read(self) -> dict:
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._base, entries = self._read_index()
        return entries

    def get(self, key):
        entry = self.entries().get(key)
        if not isinstance(entry, tuple) or len(entry) < 2 or self._fd is None:
            return None
        offset, length = entry[-2], entry[-1]
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length < 0:
            return None
        try:
            blob = _pread(self._fd, length, self._base + offset)
        except OSError:
            return None
        return (*entry[:-2], blob) if len(blob) == length else None

    def _all(self) -> dict:
        fd, base, index = self._read_index()
        entries = {}
        if fd is None:
            return entries
        try:
            for key, entry in index.items():
                if isinstance(entry, tuple) and len(entry) >= 2:
                    blob = _pread(fd, entry[-1], base + entry[-2])
                    if len(blob) == entry[-1]:
                        entries[key] = (*entry[:-2], blob)
        except (OSError, TypeError, ValueError):
            return {}
        finally:
            os.close(fd)
        return entries

    def _dumps(self, entries: dict) -> bytes:
        index, blobs, offset = {}, [], 0
        for key, value in entries.items():
            blob = value[-1]
            index[key] = (*value[:-1], offset, len(blob))
            blobs.append(blob)
            offset += len(blob)
        head = marshal.dumps({"version": sys.version, "entries": index})
        return len(head).to_bytes(8, "little") + head + b"".join(blobs)
