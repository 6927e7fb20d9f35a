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

__all__ = ["Kept", "MAX_ENTRIES"]

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

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: dict | None = None
        self._new: dict = {}
        self._path: str | None = None

    def path(self) -> str:
        """The file, under the brain home of this store's first question (the one written at exit)."""
        if self._path is None:
            self._path = os.path.join(_home(), "cache", f"{self.name}.{_tag()}.marshal")
        return self._path

    def _read(self) -> dict:
        try:
            fd = os.open(self.path(), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(fd)
                if st.st_uid != os.getuid() or st.st_mode & 0o022:
                    return {}  # code another user could have written is never run (as ssh treats its files)
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

    def save(self) -> None:
        if not self._new:
            return
        if os.path.dirname(os.path.dirname(self.path())) != _home():
            return  # the process moved to another brain home (`brain demo`): write nothing outside it
        try:
            from .memory.private import ensure_private_dir, open_private

            path = self.path()
            ensure_private_dir(os.path.dirname(path))
            entries = self._read()
            entries.update(self._new)
            data = marshal.dumps({"version": sys.version, "entries": entries})
            tmp = f"{path}.{os.getpid()}.tmp"
            fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
            self._new.clear()
        except Exception:  # noqa: BLE001 - a cache: not keeping it only costs the next process the compile
            pass
