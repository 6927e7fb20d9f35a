"""Which folders the code index walks past: dependency and output folders, decided by content where a name is ambiguous.

Most skipped names are never source (`node_modules`, `__pycache__`, `site-packages`). Two are ambiguous:
`build` and `env` are build output and virtual environments in most projects, but product source in
some: a CLI parser's `src/build/` package, a Java `io/build/` package, a crate's `env/` sub-crate, a test
runner's `integrations/env/` module, a JavaScript project's tracked `build/` scripts. On a sample of the
corpus's history, 57 of its 6,771 tasks had a fixed file under such a folder, out of the index and so never
ranked. Those two names are skipped only when the folder looks like output: it holds a marker a tool
writes there (a virtualenv's `pyvenv.cfg`, CMake's `CMakeCache.txt`, Ninja's `build.ninja`, a
`config.status`, setuptools' `bdist.*` / `lib.*` folders, a conda `conda-meta`), object files, or the
repository's ignore file names it (a line `build/`, `/env`, `**/build`). Only plain ignore lines are read
(no negations, no nested ignore files beyond the folder's parent): what they miss stays indexed, as any
tracked source.
"""

from __future__ import annotations

import fnmatch
import os

__all__ = ["SKIP_DIRS", "AMBIGUOUS_DIRS", "FolderFilter"]

# never source, wherever they are
SKIP_DIRS = {"node_modules", "__pycache__", "dist", "venv", "site-packages", "target",
             "vendor", "bower_components", "coverage", "htmlcov"}
# output or a virtual environment in most projects, source in some: decided by what the folder holds
AMBIGUOUS_DIRS = {"build", "env"}
_MARKERS = {"pyvenv.cfg", "CMakeCache.txt", "CMakeFiles", "build.ninja", ".ninja_log", "config.status",
            "conda-meta", "compile_commands.json", "pip-selfcheck.json"}
_MARKER_PREFIXES = ("bdist.", "lib.", "temp.", "scripts-")  # setuptools' build/ subfolders
_OBJECT_EXTENSIONS = (".o", ".obj", ".a", ".so", ".dylib", ".dll", ".lib", ".class", ".whl", ".exe")
_MAX_LISTING = 2000  # a folder with more entries than this is judged by its first ones
_MAX_IGNORE_LINES = 2000
_MAX_IGNORE_BYTES = 200_000


class FolderFilter:
    """Decides, during one walk of ``root``, which subfolders to descend (the ignore files read once)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._ignores: dict[str, list[str]] = {}

    def keep(self, folder: str, name: str) -> bool:
        """Whether the walk descends into ``folder``/``name`` (``folder`` absolute, inside ``root``)."""
        if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info"):
            return False
        if name not in AMBIGUOUS_DIRS:
            return True
        return not self.is_output(folder, name)

    def is_output(self, folder: str, name: str) -> bool:
        """An ambiguous folder holding a tool's marker or object files, or that an ignore file names."""
        path = os.path.join(folder, name)
        try:
            with os.scandir(path) as entries:
                for count, entry in enumerate(entries):
                    if count >= _MAX_LISTING:
                        break
                    item = entry.name
                    if item in _MARKERS or item.startswith(_MARKER_PREFIXES) or item.endswith(_OBJECT_EXTENSIONS):
                        return True
        except OSError:
            return True  # unreadable: nothing to index there anyway
        if name == "env" and os.path.isfile(os.path.join(path, "bin", "activate")):
            return True
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        return self._ignored(rel, folder)

    def _ignored(self, rel: str, folder: str) -> bool:
        parent = os.path.relpath(folder, self.root).replace(os.sep, "/")
        name = rel.rsplit("/", 1)[-1]
        for base in dict.fromkeys(("", "" if parent == "." else parent)):
            for pattern in self._patterns(base):
                anchored = pattern.startswith("/") or "/" in pattern.rstrip("/").lstrip("/")
                bare = pattern.strip("/")
                if bare.startswith("**/"):
                    bare, anchored = bare[3:], "/" in bare[3:]
                target = rel[len(base) + 1:] if base else rel
                if anchored:
                    if fnmatch.fnmatchcase(target, bare):
                        return True
                elif fnmatch.fnmatchcase(name, bare):
                    return True
        return False

    def _patterns(self, base: str) -> list[str]:
        """The plain lines of ``base``'s `.gitignore` (comments, negations and blank lines dropped)."""
        if base not in self._ignores:
            lines: list[str] = []
            try:
                with open(os.path.join(self.root, base, ".gitignore"), encoding="utf-8", errors="replace") as handle:
                    text = handle.read(_MAX_IGNORE_BYTES)
            except OSError:
                text = ""
            for line in text.splitlines()[:_MAX_IGNORE_LINES]:
                line = line.strip()
                if line and not line.startswith(("#", "!")) and line.strip("/*"):
                    lines.append(line)
            self._ignores[base] = lines
        return self._ignores[base]
