"""brain: local-first memory and coordination for AI coding-agent sessions.

    import brain
    b = brain.open(".")          # the brain of the repository holding "."
    print(b.boot(task="fix the login redirect").text)
    b.write("now.md", "# Now\\n...")
"""

from __future__ import annotations

from .lean import import_pathlib, keep_modules

import_pathlib()  # before anything imports pathlib: see brain.lean
keep_modules(__path__)  # brain's modules from the code a process before kept: see brain.lean.KeptModules

from .errors import BrainError  # noqa: E402
from .workspace import Brain, init_brain, open_brain  # noqa: E402

__all__ = ["Brain", "BrainError", "open", "init", "__version__"]

__version__ = "0.1.0"


def open(path=None, *, env=None) -> Brain:  # noqa: A001 - the library's front door
    """Open the brain of the repository containing ``path``."""
    return open_brain(path, env=env)


def init(path=None, *, env=None) -> Brain:
    """Create (or complete) `.brain/` in ``path`` and return the opened brain."""
    return init_brain(path, env=env)[0]
