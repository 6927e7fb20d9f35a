"""One ``ast.parse`` for the whole package, serialized across threads.

CPython 3.11 keeps the state of its C-to-Python AST conversion (a recursion-depth check) where two
threads converting at once can trip over each other: a team server whose threads refresh the code
index together failed once with ``SystemError: AST constructor recursion depth mismatch``. Parsing
holds the GIL for most of its work anyway, so one lock costs the server almost nothing, and every
caller gets the tree it would get alone.
"""

from __future__ import annotations

import _thread

__all__ = ["parse"]

_LOCK = _thread.allocate_lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> "ast.Module":
    """``ast.parse(source, filename)``, one thread at a time; raises what ``ast.parse`` raises."""
    import ast  # (imported by the first parse: a task boot parses nothing)

    with _LOCK:
        return ast.parse(source, filename=filename)
