"""Regular expressions compiled at first use instead of at import, from code kept between processes.

A CLI process imports many modules whose patterns its command never applies (a boot without a
task never parses a task, a task boot never indexes a file): compiling them all at import is
CPU every process pays before doing anything. ``lazy(pattern, flags)`` stands in for
``re.compile(pattern, flags)`` at module level: the first method call compiles the pattern
and binds the compiled pattern's methods on the instance, so later calls are ordinary attribute
reads with no indirection left.

Compiling is itself the cost a task boot pays most for its patterns (about 8 ms of CPU for the 60
it applies: ``re``'s parser and compiler are Python). ``compile`` keeps what the compiler produced
(the pattern's program, its flags and groups) in a file of the user's brain home, one per
interpreter version, and builds a later process's pattern from it (``_sre.compile``, what
``re.compile`` ends with): the same program, so the same pattern (``==`` holds: it compares the
pattern, the flags and the program). An entry is kept only when the pattern built from it equals the
one ``re.compile`` gives; anything else (another interpreter, an unreadable or damaged file, a
program the interpreter refuses) compiles as ``re.compile`` does.
"""

from __future__ import annotations

import re

__all__ = ["lazy", "LazyPattern", "compile"]

_METHODS = ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split", "scanner")

MAX_KEPT = 2000  # entries in the file (the package has a few hundred patterns)
_KEPT: dict | None = None  # (pattern, flags) -> (flags, code, groups, groupindex, indexgroup), read once
_NEW: dict = {}  # entries this process compiled, written at its exit


def _store_file():
    import os
    import sys

    import _sre

    home = os.environ.get("BRAIN_HOME") or os.path.join(os.path.expanduser("~"), ".brain")
    tag = f"{sys.implementation.cache_tag}-{_sre.MAGIC}-{sys.hexversion:x}"
    return os.path.join(home, "cache", f"patterns.{tag}.marshal")


def _kept() -> dict:
    global _KEPT
    if _KEPT is None:
        _KEPT = {}
        try:
            import marshal
            import sys

            with open(_store_file(), "rb") as f:
                data = marshal.loads(f.read())
            if isinstance(data, dict) and data.get("version") == sys.version:
                entries = data.get("patterns")
                _KEPT = entries if isinstance(entries, dict) else {}
        except (OSError, ValueError, EOFError, TypeError):
            pass
    return _KEPT


def _save() -> None:
    """Add this process's new entries to the file (merged with what other processes wrote meanwhile)."""
    if not _NEW:
        return
    try:
        import marshal
        import os
        import sys

        from .memory.private import ensure_private_dir, open_private

        path = _store_file()
        ensure_private_dir(os.path.dirname(path))
        entries = {}
        try:
            with open(path, "rb") as f:
                data = marshal.loads(f.read())
            if isinstance(data, dict) and data.get("version") == sys.version and isinstance(data.get("patterns"), dict):
                entries = data["patterns"]
        except (OSError, ValueError, EOFError, TypeError):
            pass
        entries.update(_NEW)
        data = marshal.dumps({"version": sys.version, "patterns": entries})
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        _NEW.clear()
    except Exception:  # noqa: BLE001 - a cache: not keeping it only costs the next process the compile
        pass


def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - re.compile's stand-in
    """``re.compile(pattern, flags)``, built from the kept program when there is one. For the package's fixed
    patterns: a pattern made from input (a task's words) would only grow the file (``MAX_KEPT`` entries)."""
    flags = int(flags)
    if not isinstance(pattern, (str, bytes)) or flags & (re.DEBUG | getattr(re, "T", 0)):
        return re.compile(pattern, flags)
    key = (pattern, flags)
    entry = _kept().get(key)
    if entry is not None:
        try:
            import _sre

            return _sre.compile(pattern, *entry)
        except Exception:  # noqa: BLE001 - a damaged entry: compile as re does
            pass
    compiled = re.compile(pattern, flags)
    try:
        from re import _compiler, _parser

        parsed = _parser.parse(pattern, flags)
        code = [int(op) for op in _compiler._code(parsed, flags)]  # (the opcodes are int subclasses)
        groupindex = dict(parsed.state.groupdict)
        indexgroup = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        entry = (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
        import _sre

        if len(_kept()) + len(_NEW) < MAX_KEPT and _sre.compile(pattern, *entry) == compiled:  # the same
            # program: kept for the next process
            if not _NEW:
                import atexit

                atexit.register(_save)
            _NEW[key] = entry
    except Exception:  # noqa: BLE001 - another interpreter's internals: nothing kept
        pass
    return compiled


class LazyPattern:
    """A compiled pattern's stand-in: ``pattern`` and ``flags`` as given, every method of
    ``re.Pattern`` once compiled. ``compiled()`` gives the ``re.Pattern`` itself."""

    __slots__ = ("pattern", "_flags", "_compiled") + _METHODS

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            compiled = compile(self.pattern, self._flags)
            for name in _METHODS:
                object.__setattr__(self, name, getattr(compiled, name))
            self._compiled = compiled
        return self._compiled

    @property
    def flags(self) -> int:
        return self.compiled().flags

    @property
    def groups(self) -> int:
        return self.compiled().groups

    @property
    def groupindex(self):
        return self.compiled().groupindex

    def __getattr__(self, name: str):
        # only reached for a slot not bound yet: one of the methods before the first compile
        if name in _METHODS:
            return getattr(self.compiled(), name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self._flags!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """``re.compile(pattern, flags)``, deferred to the first call of one of its methods."""
    return LazyPattern(pattern, flags)
