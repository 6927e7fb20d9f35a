"""pathlib without urllib.parse: one of a boot's imports made lighter, the same behaviour.

``pathlib`` imports ``urllib.parse`` (which imports ``ipaddress``) for one function, ``quote_from_bytes``,
which only ``PurePath.as_uri`` calls. Those two modules cost a `brain` process about 4-5 ms of CPU on a
slow machine, and nothing a boot runs needs them. ``import_pathlib`` imports pathlib while a stand-in
module sits at ``urllib.parse`` in ``sys.modules`` (nothing there yet, pathlib not imported yet): pathlib
takes the stand-in's ``quote_from_bytes``, which imports the real one on its first call and passes the
call on (same arguments, same answer), and the stand-in is removed again, so a later ``import
urllib.parse`` anywhere is the real module. Any other name read from the stand-in while it is there (a
thread importing urllib.parse at that moment) is the real module's.
"""

from __future__ import annotations

import sys

__all__ = ["import_pathlib"]

_NAME = "urllib.parse"


def _quote_from_bytes(bs, safe="/"):
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(bs, safe)


def import_pathlib() -> None:
    """Import pathlib without urllib.parse (see the module's text); nothing when either is imported."""
    modules = sys.modules
    if "pathlib" in modules or _NAME in modules:
        return
    stand_in = type(sys)(_NAME)

    def real():
        if modules.get(_NAME) is stand_in:
            del modules[_NAME]
        import importlib

        return importlib.import_module(_NAME)

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)  # the import system's own questions (__path__, ...): a plain module
        return getattr(real(), name)

    stand_in.quote_from_bytes = _quote_from_bytes
    stand_in.__getattr__ = __getattr__
    modules[_NAME] = stand_in
    try:
        import pathlib  # noqa: F401
    finally:
        if modules.get(_NAME) is stand_in:
            del modules[_NAME]
