"""Where a reader goes next once the files the evidence names are read: the repository files they import.

Moved out of ``rank_functions`` (which re-exports ``imported_files``): it walks the file graph, not the
function ranking.
"""

from __future__ import annotations

from .locate import CodeView

__all__ = ["imported_files"]


def _imported_by(cview: CodeView, path: str) -> list[str]:
    """The repository files one file's imports point to, in the order it imports them."""
    out: list[str] = []
    targets = cview.imports_of(path)
    if not path.endswith(".rs"):
        cview.by_module.prefetch([t for target in targets for t in (target, target.rsplit(".", 1)[0])])
    for target in targets:
        if path.endswith(".rs"):
            out.extend(cview.resolve_import(path, target))  # Rust `use crate::a::B` by the crate's modules
            continue
        # `import a.b` names a module; `from a.b import c` is stored as `a.b.c`, c a module or a name in a.b
        found = cview.by_module.get(target) or cview.by_module.get(target.rsplit(".", 1)[0])
        if found:
            out.append(found)
    return out


def imported_files(cview: CodeView, paths, *, hops: int = 2, limit: int = 10, exclude=()) -> list[str]:
    """The repository files ``paths`` import, nearest first (breadth-first, ``hops`` deep), tests left out.

    Where a reader goes next once the files the evidence names are read: the modules their
    code leans on (a report names the public entry, the fix is often a module or two below)."""
    seeds = list(dict.fromkeys(paths))
    skip = set(seeds) | set(exclude)
    out: list[str] = []
    layer = seeds
    for _ in range(hops):
        nxt: list[str] = []
        for path in layer:
            for found in _imported_by(cview, path):
                if found in skip or found in nxt or cview.is_test(found):
                    continue
                nxt.append(found)
        skip.update(nxt)
        out.extend(nxt)
        if len(out) >= limit or not nxt:
            break
        layer = nxt
    return out[:limit]
