"""Regular expressions compiled at first use instead of at import.

A CLI process imports many modules whose patterns its command never applies (a boot without a
task never parses a task, a task boot never indexes a file): compiling them all at import is
CPU every process pays before doing anything. ``lazy(pattern, flags)`` stands in for
``re.compile(pattern, flags)`` at module level: the first method call compiles the pattern
and binds the compiled pattern's methods on the instance, so later calls are ordinary attribute
reads with no indirection left.
"""

from __future__ import annotations

import re

__all__ = ["lazy", "LazyPattern"]

_METHODS = ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split", "scanner")


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
            compiled = re.compile(self.pattern, self._flags)
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
