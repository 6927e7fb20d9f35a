"""The state of one boot call: what its steps compute once and later steps reuse.

A team server answers many ``brain_boot`` calls at once from one ``Brain`` object, so
nothing a boot computes for itself (the file ranking, the ranked definitions, the code
view, which definitions it showed) may live on that object: two boots would read each
other's ranking, or one would clear the other's memo mid-way. ``Brain.boot`` opens one
``BootCall`` per boot; the slots and ``locate`` find it through a context variable,
which each thread (and each asyncio task) sees on its own, because the slot functions
and ``Brain.locate`` are public and take no such argument.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from collections.abc import Iterator

__all__ = ["BootCall", "boot_call", "current_call", "current_memo"]


class BootCall:
    """One boot's memo: lives from module inference to the packed result, then goes. (A plain class:
    this module is on the cold boot's path, which imports no dataclasses, decision 0038.)"""

    __slots__ = ("memo", "located")

    def __init__(self, memo: dict | None = None, located: dict | None = None):
        self.memo = {} if memo is None else memo  # ranking, functions, code_view, code_shown, code_within (slots)
        self.located = {} if located is None else located  # (task, module, session, limit) -> Localization (search.locate)


_CURRENT: ContextVar[BootCall | None] = ContextVar("brain_boot_call", default=None)


def current_call() -> BootCall | None:
    """The boot call this thread or task is inside, or None (a plain `brain.locate`, a search)."""
    return _CURRENT.get()


def current_memo() -> dict | None:
    """The slots' memo of the current boot, or None outside a boot: then nothing is kept."""
    call = _CURRENT.get()
    return call.memo if call is not None else None


@contextlib.contextmanager
def boot_call() -> Iterator[BootCall]:
    """The current boot call; a new one unless a caller already opened it (``Brain.boot`` does, so
    module inference and the slots share one ranking)."""
    call = _CURRENT.get()
    if call is not None:
        yield call
        return
    call = BootCall()
    token = _CURRENT.set(call)
    try:
        yield call
    finally:
        _CURRENT.reset(token)
