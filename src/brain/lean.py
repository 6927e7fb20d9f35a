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

import os
import sys

__all__ = ["KeptModules", "import_pathlib", "keep_modules"]

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


# -- brain's own modules, from code a process before kept ------------------------------------------------


def keep_modules(package_path: list[str]) -> None:
    """Import brain's modules (``brain.*`` under ``package_path``) through ``KeptModules`` (see there)."""
    import importlib.machinery

    if sys.flags.optimize or any(isinstance(f, KeptModules) for f in sys.meta_path):
        return  # -O: code without asserts, kept elsewhere by Python's own opt- files; never twice
    from . import kept  # noqa: F401 - imported the usual way: the finder's own store

    meta = sys.meta_path
    at = meta.index(importlib.machinery.PathFinder) if importlib.machinery.PathFinder in meta else len(meta)
    meta.insert(at, KeptModules(package_path))  # after any import hook installed before it


class KeptModules:
    """A meta path finder for brain's own submodules that serves their code objects from one file kept in
    the brain home (``brain.kept.KeptBlobs``: ``modules.<interpreter>.blobs``, of which a process reads
    the index and the code of the modules it imports) instead of a ``__pycache__`` file
    each, found through the path finder.

    A task boot imports some 110 of brain's modules; finding each (the path finder's folder checks) and
    reading its ``.pyc`` through importlib's Python code (the stat, the open, the read, the header
    checks) cost about 11 ms of a Django task boot's CPU on a slow machine, beyond the unmarshalling.

    Per module the file keeps, under (name, folder): the file the path finder found in that folder
    (``x.py`` or ``x/__init__.py``), the folder's mtime then, the source's mtime and size, and the code
    object (marshalled). A module is served from it only when its parent's ``__path__`` is that one
    folder, the folder's mtime is the same (no file added, removed or renamed in it since: the path
    finder would find the same file) and the source has the same mtime (to the nanosecond) and size
    (Python's own ``.pyc`` check is the mtime in seconds and the size). The spec is the one the path
    finder makes (``spec_from_file_location``, the same origin, package folder and cached path); its
    loader is a ``SourceFileLoader`` (sources, resources and ``.pyc`` paths as usual) that returns the
    kept code, or, when the source's stat no longer matches, loads as Python does. Anything else
    (another folder, a module the path finder finds as something other than a ``.py`` source, no entry)
    is found by the path finder as before, and a source module found that way is kept at exit for the
    next process. ``-O`` processes do not use it (their code has no asserts).
    """

    def __init__(self, package_path: list[str]) -> None:
        self.folders = {os.path.abspath(p) for p in package_path}
        self._kept = None

    def kept(self):
        if self._kept is None:
            from .kept import KeptBlobs

            self._kept = KeptBlobs("modules")
        return self._kept

    def find_spec(self, name: str, path=None, target=None):
        if not name.startswith("brain.") or path is None or len(path) != 1:
            return None
        folder = path[0]
        if not isinstance(folder, str) or not self._ours(folder):
            return None
        try:
            folder_mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return None
        entry = self.kept().get((name, folder))
        if isinstance(entry, tuple) and len(entry) == 5 and entry[1] == folder_mtime:
            filename, _folder_mtime, mtime, size, code = entry
            return self._spec(name, folder, filename, (mtime, size, code), folder_mtime)
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if (spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader
                or not isinstance(spec.origin, str) or not spec.origin.endswith(".py")):
            return spec
        filename = os.path.relpath(spec.origin, folder)
        if filename not in (name.rpartition(".")[2] + ".py", os.path.join(name.rpartition(".")[2], "__init__.py")):
            return spec
        return self._spec(name, folder, filename, None, folder_mtime)

    def _ours(self, folder: str) -> bool:
        for top in self.folders:
            if folder == top or folder.startswith(top + os.sep):
                return True
        return False

    def _spec(self, name, folder, filename, kept, folder_mtime):
        from importlib.util import spec_from_file_location

        origin = os.path.join(folder, filename)
        package = filename.endswith("__init__.py")
        loader = _KeptLoader(name, origin)
        loader.kept, loader.store, loader.key, loader.folder_mtime = kept, self, (name, folder), folder_mtime
        return spec_from_file_location(name, origin, loader=loader,
                                       submodule_search_locations=[os.path.dirname(origin)] if package else None)


def _source_loader():
    import importlib.machinery

    return importlib.machinery.SourceFileLoader


class _KeptLoader(_source_loader()):
    """A ``SourceFileLoader`` whose ``get_code`` is the kept code while the source's stat matches it, and
    keeps the code it loads otherwise (see ``KeptModules``)."""

    kept = store = key = folder_mtime = None

    def get_code(self, fullname):
        import marshal

        try:
            st = os.stat(self.path)
        except OSError:
            return super().get_code(fullname)
        kept = self.kept
        if kept is not None and kept[0] == st.st_mtime_ns and kept[1] == st.st_size:
            try:
                return marshal.loads(kept[2])
            except (ValueError, EOFError, TypeError):
                pass  # a damaged entry: load as Python does
        code = super().get_code(fullname)
        if self.folder_mtime is not None and code is not None:
            try:
                after = os.stat(self.path)
            except OSError:
                return code
            if (after.st_mtime_ns, after.st_size) == (st.st_mtime_ns, st.st_size):
                filename = os.path.relpath(self.path, self.key[1])
                self.store.kept().put(self.key, (filename, self.folder_mtime, st.st_mtime_ns, st.st_size,
                                                 marshal.dumps(code)))
        return code
