"""How the files of a repository group into modules: `brain map`'s discovery rules (docs/cards.md).

A module is a Python package, a Node package, a Go or Java package folder, a folder holding a
manifest of a language behind the extractor interface, or a folder of brain.yml `modules:` globs;
a package whose source is too big is split into its subpackages. ``discover`` takes the files
``discovery.scan`` listed and answers the modules, sorted; ``python_names`` the dotted name of
every Python file. Pure: same files, same modules.
"""

from __future__ import annotations


from ..records import field, record
from .discovery import (GENERIC, MANIFESTS, NEVER_SPLIT, PLUMBING, ROOT_MANIFESTS, SMALL_OWN_BYTES, SOURCE_FOLDERS,
                        SPECIAL_NAMES, SPLIT_BYTES, SPLIT_MIN_BYTES, UNIT_FOLDER_EXT, UNIT_NEVER, FileInfo, Module,
                        _ancestors, _generic, _parent, _pruned, _suffix, file_language)

__all__ = ["discover", "python_names", "glob_to_regex"]


def glob_to_regex(pattern: str):
    """A folder glob of brain.yml `modules:`, compiled (brain.security.globs): ``*`` stays inside one path
    segment, ``**`` crosses segments, ``[`` is a literal; ``.match(folder)`` in time linear in the folder
    (a backtracking regex let a versioned glob of many stars cost minutes per folder)."""
    from ..security.globs import compile_glob

    return compile_glob(pattern, classes=False, below=False)


@record
class _Tree:
    """Per-folder facts computed once from the listing."""

    files: list[FileInfo]
    folders: dict[str, list[FileInfo]] = field(default_factory=dict)   # folder -> its own files
    py_packages: set[str] = field(default_factory=set)
    node_roots: set[str] = field(default_factory=set)
    lang_roots: dict[str, str] = field(default_factory=dict)   # folder with a root manifest -> its language
    gen_bytes: dict[str, int] = field(default_factory=dict)    # subtree bytes of the other languages per folder
    py_bytes: dict[str, int] = field(default_factory=dict)     # subtree bytes of Python per folder
    ts_bytes: dict[str, int] = field(default_factory=dict)     # subtree bytes of TS/JS per folder
    own_py: dict[str, int] = field(default_factory=dict)       # a folder's own Python bytes
    children: dict[str, set[str]] = field(default_factory=dict)
    _non_module: dict[str, bool] = field(default_factory=dict)

    def non_module(self, folder: str) -> bool:
        """True when a folder sits under a tests/docs-like folder that is not itself a package (decided from
        the top down, without recursion: a tree may be as deep as brain.trees allows)."""
        pending = []
        top = folder
        while top and top not in self._non_module:
            pending.append(top)
            top = _parent(top)
        result = self._non_module.get(top, False) if top else False
        for current in reversed(pending):
            name = current.rsplit("/", 1)[-1]
            own = [f.path.rpartition("/")[2] for f in self.folders.get(current, ())]
            result = result or (current not in self.py_packages and _pruned(name, own))
            self._non_module[current] = result
        return result if folder else False


def _build_tree(files: list[FileInfo]) -> _Tree:
    tree = _Tree(files)
    for f in files:
        folder, _, name = f.path.rpartition("/")
        tree.folders.setdefault(folder, []).append(f)
        if name == "__init__.py":
            tree.py_packages.add(folder)
        elif name == "package.json":
            tree.node_roots.add(folder)
        elif name in ROOT_MANIFESTS:
            tree.lang_roots.setdefault(folder, MANIFESTS[name])
    for folder, own in tree.folders.items():
        py = sum(f.size for f in own if file_language(f.path) == "python")
        ts = sum(f.size for f in own if file_language(f.path) == "node")
        gen = sum(f.size for f in own if _generic(file_language(f.path)))
        tree.own_py[folder] = py
        for anc in _ancestors(folder):
            if py:
                tree.py_bytes[anc] = tree.py_bytes.get(anc, 0) + py
            if ts:
                tree.ts_bytes[anc] = tree.ts_bytes.get(anc, 0) + ts
            if gen:
                tree.gen_bytes[anc] = tree.gen_bytes.get(anc, 0) + gen
        child = folder
        while child:
            parent = _parent(child)
            kids = tree.children.setdefault(parent, set())
            if child in kids:
                break
            kids.add(child)
            child = parent
    return tree


def _split(root: str, sizes: dict[str, int], children: dict[str, set[str]], eligible,
           limits: tuple[int, int] = (SPLIT_BYTES, SPLIT_MIN_BYTES)) -> list[str]:
    """Module folders under ``root`` by the size rule (``root`` included)."""
    found = [root]
    if sizes.get(root, 0) <= limits[0]:
        return found
    for child in sorted(children.get(root, ())):
        name = child.rsplit("/", 1)[-1]
        if name in NEVER_SPLIT or not eligible(child):
            continue
        if sizes.get(child, 0) >= limits[1]:
            found.extend(_split(child, sizes, children, eligible, limits))
    return found


def _default_roots(tree: _Tree, limits: tuple[int, int]) -> dict[str, str]:
    """Folder ("." for the root) -> kind, for the default discovery."""
    roots: dict[str, str] = {}
    packages = tree.py_packages
    # Python packages, split by size
    for pkg in sorted(packages):
        if not pkg or _parent(pkg) in packages or tree.non_module(pkg):
            continue
        split = _split(pkg, tree.py_bytes, tree.children, lambda c: c in packages, limits)
        for folder in split:
            roots[folder] = "python"
        # a split package with (almost) no code of its own is a folder of modules: each of
        # its subpackages gets a card and the folder itself none (its files go to the parent)
        for folder in split:
            if folder == pkg or tree.own_py.get(folder, 0) >= SMALL_OWN_BYTES or tree.py_bytes.get(folder, 0) <= limits[0]:
                continue
            del roots[folder]
            for child in sorted(tree.children.get(folder, ())):
                if child in packages and child not in roots and child.rsplit("/", 1)[-1] not in NEVER_SPLIT:
                    roots[child] = "python"
    # Node packages (folders with package.json), split by size over their source folders
    for node_root in sorted(tree.node_roots):
        if tree.non_module(node_root) or any(a in packages for a in _ancestors(node_root)):
            continue

        def eligible(child: str) -> bool:
            return child not in tree.node_roots and child not in packages and not tree.non_module(child)

        for folder in _split(node_root, tree.ts_bytes, tree.children, eligible, limits):
            roots.setdefault(folder or ".", "node")
    # project roots of the other languages (go.mod, Cargo.toml, pom.xml, build.gradle, the top CMakeLists.txt),
    # split by size; a split folder without code of its own (src/main/java/com) gets no card
    gen_roots = [f for f in sorted(tree.lang_roots) if not tree.non_module(f) and f not in roots and
                 not any(a in packages for a in _ancestors(f)) and
                 not (tree.lang_roots[f] == "c" and any(tree.lang_roots.get(a) == "c" for a in list(_ancestors(f))[1:]))]
    gen_root_set = set(gen_roots)

    def eligible_gen(child: str) -> bool:
        return child not in gen_root_set and child not in tree.node_roots and child not in packages and not tree.non_module(child)

    def own_code(folder: str) -> bool:
        return any(_generic(file_language(f.path)) for f in tree.folders.get(folder, ()))

    def promote(folder: str) -> None:
        """A split folder without code of its own (Go's cmd/, Java's com/) passes the card to its subfolders."""
        if own_code(folder):
            roots.setdefault(folder, GENERIC)
            return
        for child in sorted(tree.children.get(folder, ())):
            if eligible_gen(child) and tree.gen_bytes.get(child, 0) >= limits[1]:
                promote(child)

    for gen_root in gen_roots:
        unit_ext = UNIT_FOLDER_EXT.get(tree.lang_roots[gen_root])
        if unit_ext:
            roots.setdefault(gen_root or ".", GENERIC)
            for folder in _unit_folders(tree, gen_root, unit_ext, eligible_gen):
                roots.setdefault(folder, GENERIC)
            continue
        for folder in _split(gen_root, tree.gen_bytes, tree.children, eligible_gen, limits):
            if folder != gen_root and _parent(folder) == gen_root and folder.rpartition("/")[2] in SOURCE_FOLDERS:
                continue  # a crate's or library's src/ is the root's own code, not a module of its own
            if folder == gen_root:
                roots.setdefault(folder or ".", GENERIC)
            else:
                promote(folder)
    # loose files: Python and TS/JS outside packages; other languages by their top folder
    owner_cache: dict[str, str | None] = {}
    loose_gen: list[str] = []
    loose_node: list[str] = []
    for folder in sorted(tree.folders):
        if tree.non_module(folder):
            continue
        langs = {file_language(f.path) for f in tree.folders[folder]} - {None}
        if not langs:
            continue
        in_package = folder in packages
        if "python" in langs and not in_package:
            # loose files nest into a loose-files module above them (scripts/, alembic/ with versions/)
            above = _owner(_parent(folder), roots, owner_cache) if folder else None
            nested = above not in (None, ".") and roots.get(above) == "python" and above not in packages
            if not nested and any(f.path.rpartition("/")[2] not in PLUMBING for f in tree.folders[folder]
                                  if file_language(f.path) == "python"):
                roots.setdefault(folder or ".", "python")
                owner_cache.clear()
        owner = _owner(folder, roots, owner_cache)
        if owner is None and "node" in langs:
            roots[folder or "."] = "node"
            loose_node.append(folder)
            owner_cache.clear()
        elif owner is None and any(_generic(lang) for lang in langs):
            top = folder.split("/", 1)[0] if folder else "."
            if top not in roots:
                roots[top] = GENERIC
                loose_gen.append(top if top != "." else "")
            owner_cache.clear()
    # a large TS/JS source tree without package.json is split like a package
    for root in loose_node:
        def eligible_loose(child: str) -> bool:
            return child not in tree.node_roots and child not in packages and not tree.non_module(child)

        for folder in _split(root, tree.ts_bytes, tree.children, eligible_loose, limits)[1:]:
            roots.setdefault(folder, "node")
    for root in loose_gen:
        for folder in _split(root, tree.gen_bytes, tree.children, eligible_gen, limits)[1:]:
            if any(_generic(file_language(f.path)) for f in tree.folders.get(folder, ())):
                roots.setdefault(folder, GENERIC)
    return roots


def _unit_folders(tree: _Tree, root: str, extensions: frozenset[str], eligible) -> list[str]:
    """Folders under a project root that hold the language's own unit: a Go package or a Java/Kotlin package
    is a folder with source files of its own that are not tests (``_test.go``, ``testdata/``)."""
    found = []
    stack = sorted(tree.children.get(root, ()), reverse=True)
    while stack:
        folder = stack.pop()
        if not eligible(folder) or folder.rpartition("/")[2] in UNIT_NEVER:
            continue
        if any(_suffix(f.path) in extensions and not f.path.endswith("_test.go") for f in tree.folders.get(folder, ())):
            found.append(folder)
        stack.extend(sorted(tree.children.get(folder, ()), reverse=True))
    return found


def _owner(folder: str, roots: dict[str, str], cache: dict[str, str | None]) -> str | None:
    """The deepest module folder containing ``folder`` ("." for the root), or None."""
    if folder in cache:
        return cache[folder]
    key = folder or "."
    if key in roots:
        found: str | None = key
    elif not folder:
        found = None
    else:
        found = _owner(_parent(folder), roots, cache)
    cache[folder] = found
    return found


def _glob_roots(tree: _Tree, globs: list[str]) -> dict[str, str]:
    folders: set[str] = set()
    for folder in tree.folders:
        for anc in _ancestors(folder):
            folders.add(anc)
    patterns = [glob_to_regex(g) for g in globs]
    roots: dict[str, str] = {}
    for folder in sorted(folders):
        if any(p.match(folder or ".") for p in patterns):
            roots[folder or "."] = ""  # kind decided by the files it gets
    return roots


def _dotted(folder: str, packages: set[str]) -> str | None:
    """Dotted Python name of a package folder (its chain of packages from the top one)."""
    if folder not in packages:
        return None
    parts = []
    cur = folder
    while cur in packages and cur:
        parts.append(cur.rsplit("/", 1)[-1])
        cur = _parent(cur)
    return ".".join(reversed(parts))


def discover(files: list[FileInfo], globs: list[str] | None = None, *, split_bytes: int = SPLIT_BYTES,
             split_min_bytes: int = SPLIT_MIN_BYTES) -> list[Module]:
    """The modules of a repository from its file listing (sorted by name)."""
    tree = _build_tree(files)
    roots = _glob_roots(tree, globs) if globs else _default_roots(tree, (split_bytes, split_min_bytes))
    if not roots:
        return []
    own: dict[str, list[str]] = {name: [] for name in roots}
    other: dict[str, list[str]] = {name: [] for name in roots}
    langs: dict[str, set[str]] = {name: set() for name in roots}
    gen_sizes: dict[str, dict[str, int]] = {}
    owner_cache: dict[str, str | None] = {}
    for folder in sorted(tree.folders):
        owner = _owner(folder, roots, owner_cache)
        if owner is None or (not globs and tree.non_module(folder)):
            continue
        kind = roots[owner]
        for f in tree.folders[folder]:
            lang = file_language(f.path)
            name = f.path.rpartition("/")[2]
            readable = lang is not None and (not kind or lang == kind or (kind in ("other", GENERIC) and _generic(lang)))
            if name in SPECIAL_NAMES and (kind != "python" or name not in ("package.json", "tsconfig.json")):
                readable = True
            if readable:
                own[owner].append(f.path)
                if lang:
                    langs[owner].add(lang)
                    if _generic(lang):
                        gen_sizes.setdefault(owner, {})
                        gen_sizes[owner][lang] = gen_sizes[owner].get(lang, 0) + f.size
            else:
                other[owner].append(f.path)
    modules = []
    for name in sorted(roots):
        if not own[name]:
            continue
        kind = roots[name]
        if kind == GENERIC:
            kind = _dominant(gen_sizes.get(name), own[name])
        if not kind:
            found = langs[name]
            kind = "python" if "python" in found else "node" if ("node" in found or any(p.endswith("package.json") for p in own[name])) else \
                _dominant(gen_sizes.get(name), own[name])
        folder = "" if name == "." else name
        modules.append(Module(name, kind, tuple(sorted(own[name])), tuple(sorted(other[name])), _dotted(folder, tree.py_packages)))
    return modules


def _dominant(sizes: dict[str, int] | None, files: list[str]) -> str:
    """The module kind of a folder of other languages: the registered language with the most bytes
    (C++ when C++ files sit beside C ones), else its manifest's language, else "other"."""
    sizes = {k: v for k, v in (sizes or {}).items() if k != "other"}
    if sizes:
        if "cpp" in sizes and "c" in sizes:
            return "cpp"
        return max(sorted(sizes), key=lambda k: sizes[k])
    for path in files:
        lang = MANIFESTS.get(path.rpartition("/")[2])
        if lang:
            return lang
    return "other"


def python_names(files: list[FileInfo] | list[str]) -> dict[str, str]:
    """Dotted module name of every Python file: its chain of packages, or its stem when loose."""
    paths = [f if isinstance(f, str) else f.path for f in files]
    packages = {p.rpartition("/")[0] for p in paths if p.rpartition("/")[2] == "__init__.py"}
    cache: dict[str, str | None] = {}
    names: dict[str, str] = {}
    for path in paths:
        if file_language(path) != "python":
            continue
        folder, _, name = path.rpartition("/")
        if folder not in cache:
            cache[folder] = _dotted(folder, packages)
        pkg = cache[folder]
        stem = name.rsplit(".", 1)[0]
        if not stem.isidentifier():
            continue
        if stem == "__init__":
            if pkg:
                names[path] = pkg
        else:
            names[path] = f"{pkg}.{stem}" if pkg else stem
    return names
