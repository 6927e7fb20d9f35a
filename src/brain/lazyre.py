"""Regular expressions compiled at first use instead of at import, from code kept between processes.

A CLI process imports many modules whose patterns its command never applies (a boot without a
task never parses a task, a task boot never indexes a file): compiling them all at import is
CPU every process pays before doing anything. ``lazy(pattern, flags)`` stands in for
``re.compile(pattern, flags)`` at module level: the first method call compiles the pattern
and binds the compiled pattern's methods on the instance, so later calls are ordinary attribute
reads with no indirection left.

Compiling is itself the cost a task boot pays most for its patterns (about 8 ms of CPU for the 60
it applies: ``re``'s parser and compiler are Python). ``compile`` keeps what the compiler produced
(the pattern's program, its flags and groups) in a file of the user's brain home (``kept``), one per
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

_KEPT = None  # kept.Kept("patterns"): (pattern, flags) -> (flags, program, groups, groupindex, indexgroup)


def _kept():
    global _KEPT
    if _KEPT is None:
        from .kept import Kept

        _KEPT = Kept("patterns")
    return _KEPT


def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - re.compile's stand-in
    """``re.compile(pattern, flags)``, built from the kept program when there is one. For the package's fixed
    patterns: a pattern made from input (a task's words) would only fill the file (``kept.MAX_ENTRIES``)."""
    flags = int(flags)
    if not isinstance(pattern, (str, bytes)) or flags & (re.DEBUG | getattr(re, "T", 0)):
        return re.compile(pattern, flags)
    key = (pattern, flags)
    kept = _kept()
    entry = kept.get(key)
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

        if _sre.compile(pattern, *entry) == compiled:  # the same program: kept for the next process
            kept.put(key, entry)
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
