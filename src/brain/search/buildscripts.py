"""The build script of a file's package: reached as a neighbour of the product files it builds, not by its words.

A fix that changes what a package ships (a new module, a new dependency, a renamed entry point, a new
output format) often touches the package's build script too: a Python package's ``setup.py``, a JavaScript
package's task-runner file (``Gruntfile.js``, ``gulpfile.js``, ``Jakefile.js``) or bundler configuration
(``rollup.config.js``, ``webpack.config.js``, ``vite.config.ts``, ``tsdx.config.js``, ``tsup.config.ts``,
``esbuild.config.mjs``). The task's text rarely names it, and its words (a list of modules, plugins and
paths) match any task a little, so full text ranks it anywhere from 6th to 30th. Here it is reached from
the files it serves: the nearest folder, from a file's own up to the repository root, that holds such a
script in the file's language family; ``ranking.combine`` lends it a share of that file's score when the
file is one of the best few, after the demotions (``lending.lend_to_served``; share ``package_build``).
The Rust crate's ``build.rs`` is found by ``traps.served_by`` (share ``build``). Other configuration
(test runners, linters, formatters) builds nothing and is not reached.
"""

from __future__ import annotations

import posixpath
import re

from ..lazyre import lazy

__all__ = ["is_build_script", "package_build_scripts", "MAX_SCRIPTS"]

MAX_SCRIPTS = 3  # a folder holding more build scripts than this lends to its first ones (by name)

_PY_SOURCES = (".py", ".pyx", ".pyi")
_JS_SOURCES = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte")
_PY_SCRIPT = lazy(r"^setup\.py$")
_JS_SCRIPT = lazy(r"^(?:gruntfile|gulpfile|jakefile)\.[cm]?[jt]s$"
                  r"|^(?:rollup|webpack|vite|tsdx|tsup|esbuild|build)\.config\.[cm]?[jt]s$", re.I)


def _family(path: str):
    """The build-script pattern for a source file's language family, or None (no such scripts reached)."""
    if path.endswith(_PY_SOURCES):
        return _PY_SCRIPT
    if path.endswith(_JS_SOURCES):
        return _JS_SCRIPT
    return None


def is_build_script(path: str) -> bool:
    """Whether ``path`` is named as a package build script this module reaches (``setup.py``, ``Gruntfile.js``,
    ``rollup.config.js``, ...)."""
    name = posixpath.basename(path)
    return bool(_PY_SCRIPT.search(name) or _JS_SCRIPT.search(name))


def _scripts_by_folder(view) -> dict[str, list[str]]:
    """folder -> the build scripts it holds (indexed, not tests), read once per view by one query (the boot
    never reads every file row)."""
    found = getattr(view, "_build_scripts_cache", None)
    if found is None:
        found = {}
        rows = view.db.execute("SELECT path, is_test FROM code_files WHERE path LIKE '%setup.py' "
                               "OR path LIKE '%.config.%' OR path LIKE '%file.%'")  # LIKE ignores ASCII case
        for path, test in sorted(rows):
            if not test and is_build_script(path):
                found.setdefault(posixpath.dirname(path), []).append(path)
        view._build_scripts_cache = found
    return found


def package_build_scripts(view, seed: str) -> list[str]:
    """The build scripts of ``seed``'s package: those of its language family in the nearest folder holding
    any, from ``seed``'s own folder up to the root; none for a test, a build script, or another language."""
    pattern = _family(seed)
    if pattern is None or is_build_script(seed) or view.is_test(seed):
        return []
    by_folder = _scripts_by_folder(view)
    if not by_folder:
        return []
    folder = posixpath.dirname(seed)
    for _ in range(64):
        here = [p for p in by_folder.get(folder, ()) if pattern.search(posixpath.basename(p))]
        if here:
            return here[:MAX_SCRIPTS]
        if not folder:
            return []
        folder = posixpath.dirname(folder)
    return []
