"""Evidence of place: the files beside a best file, which a fix touching it often touches too.

Read on the corpus (issue 23): when the top five hold one file a commit changed but not all of them,
the missing ones most often sit in the same folder as the best one (a Go package's files, a Rust
module's siblings, nginx's `src/http/modules/*`), or are the same file name in a sibling folder (one
`Platform.c` per operating system, one `mod.rs` per backend). Import links miss them: siblings need
not import each other. So the best few files lend a share to (a) the product files of their own folder
that already have evidence of their own (the text points at them too), when the folder is small enough
to be one unit, and (b) the files of the same name in the sibling folders, when there are few of them
and the name is not a generic one every folder has. ``neighbours.collect_links`` records both lists
in each candidate's ``Links``; ``ranking.combine`` lends, so the weights stay separate from the reading.
"""

from __future__ import annotations

import posixpath
import weakref
from collections import defaultdict

from ..code import is_nonproduct_path

__all__ = ["folder_mates", "namesakes", "GENERIC_NAMES"]

# file names every folder of a language may have: sharing one says nothing about a fix
GENERIC_NAMES = frozenset({
    "mod.rs", "lib.rs", "main.rs", "build.rs", "index.js", "index.ts", "index.tsx", "index.jsx", "index.mjs",
    "__init__.py", "main.go", "doc.go", "main.c", "main.cpp", "main.cc", "types.go", "types.ts", "utils.go",
    "util.go", "errors.go", "options.go", "config.go", "cmakelists.txt", "makefile", "readme.md", "package.json",
    "cargo.toml", "go.mod", "build.gradle", "pom.xml", "setup.py",
})

_FOLDERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _by_folder(view) -> dict[str, list[str]]:
    """folder -> its product files (not tests, examples, docs), built once per view."""
    found = _FOLDERS.get(view)
    if found is None:
        found = defaultdict(list)
        for path in view.files:
            if not view.is_test(path) and not is_nonproduct_path(path):
                found[posixpath.dirname(path)].append(path)
        for paths in found.values():
            paths.sort()
        _FOLDERS[view] = found
    return found


def _product_files_in(view, folder: str) -> list[str]:
    """``folder``'s product files, sorted: read from that folder's rows alone while the view has not read every
    row (a task boot), else from the map of every folder built once per view."""
    rows = view.files
    if folder and not getattr(rows, "loaded", True):
        return [p for p in rows.in_folder(folder) if not view.is_test(p) and not is_nonproduct_path(p)]
    return _by_folder(view).get(folder, [])


def _ext(path: str) -> str:
    return posixpath.splitext(path)[1].lower()


def folder_mates(view, seed: str, most: int, family: tuple[str, ...] = ()) -> list[str]:
    """The product files of ``seed``'s folder in its language (same extension, or the same C family),
    empty when the folder holds more than ``most`` of them (a big folder is not one unit)."""
    ext = _ext(seed)
    if not ext:
        return []
    same = family if ext in family else (ext,)
    mates = [q for q in _product_files_in(view, posixpath.dirname(seed)) if q != seed and _ext(q) in same]
    return mates if len(mates) <= most else []


def namesakes(view, seed: str, most: int) -> list[str]:
    """The product files named as ``seed`` in sibling folders (`linux/Platform.c` beside `pcp/Platform.c`,
    `a/x/conn.rs` beside `a/y/conn.rs`), when there are at most ``most`` and the name is not generic."""
    name = posixpath.basename(seed)
    if name.lower() in GENERIC_NAMES:
        return []
    folder = posixpath.dirname(seed)
    if not folder:
        return []  # a top-level file has no sibling folders
    parent = posixpath.dirname(folder)
    out = [q for q in view.by_name.get(name, ()) if q != seed and posixpath.dirname(q) != folder
           and posixpath.dirname(posixpath.dirname(q)) == parent and not view.is_test(q)
           and not is_nonproduct_path(q)]
    return sorted(out) if len(out) <= most else []
