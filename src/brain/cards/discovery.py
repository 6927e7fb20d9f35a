"""Module discovery: which folders of a repository get a card, and which files each card covers.

A module is a folder; its name is the folder's repository-relative POSIX path (``"."`` for
the root), so `django/db/models` names the card `.brain/modules/django/db/models.md`.

Defaults, in order of precedence:

* Python: every top-level package (a folder with ``__init__.py`` whose parent is not a
  package) is a module; a large package is split: each subpackage whose source reaches
  ``SPLIT_MIN_BYTES`` becomes a module of its own while the parent's subtree is above
  ``SPLIT_BYTES``, recursively. Folders of loose ``.py`` files outside packages are
  modules too (scripts, flat layouts). ``migrations`` and ``tests`` subpackages stay
  inside their parent.
* TypeScript/Node: every folder with a ``package.json`` (workspaces included) is a
  module, split by the same size rule over its source folders; loose TS/JS folders
  outside any package become modules of their own.
* Languages behind the extractor interface: a folder with a root manifest (go.mod, Cargo.toml,
  pom.xml, CMakeLists.txt, configure.ac…) is a project root. Where the language names its unit
  by folder (a Go package, a Java/Kotlin package) every such folder is a module whatever its size;
  other roots are split by the size rule.
* Other languages: files are grouped by their top-level folder; they get the file list.

``modules:`` globs in brain.yml replace all of this: each folder matching a glob is a
module. In every case a file belongs to the deepest module folder that contains it.

Discovery is pure over a file listing (``FileInfo`` list), so it is tested without
a file system; ``scan`` produces that listing from disk.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..records import record
from ..trees import MAX_DEPTH, note_too_deep, too_deep_path

__all__ = [  # discover, python_names and glob_to_regex are in .grouping (still importable from here)
    "FileInfo", "Module", "scan", "file_language", "card_rel_path",
    "PY_EXT", "TS_EXT", "OTHER_EXT", "SPECIAL_NAMES", "SPLIT_BYTES", "SPLIT_MIN_BYTES",
]

PY_EXT = frozenset({".py", ".pyi"})
TS_EXT = frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"})
OTHER_EXT = frozenset({
    ".go", ".rs", ".java", ".kt", ".kts", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs",
    ".swift", ".scala", ".sh", ".sql", ".lua", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart",
    ".r", ".zig", ".vue", ".svelte",
})
# languages behind the extractor interface (src/brain/cards/languages/): extension -> language name,
# manifest file name -> language name. Kept here as literals so discovery imports no language module;
# tests/test_cards_languages.py checks they match the languages' own data.
LANG_EXT = {
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp", ".tpp": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".rake": "ruby", ".php": "php", ".scala": "scala", ".sc": "scala", ".swift": "swift",
}
MANIFESTS = {
    "go.mod": "go", "go.work": "go", "Cargo.toml": "rust", "pom.xml": "java", "build.gradle": "java",
    "build.gradle.kts": "java", "CMakeLists.txt": "c", "vcpkg.json": "c", "conanfile.txt": "c", "configure.ac": "c",
    "meson.build": "c", "Makefile.am": "c",
    "Gemfile": "ruby", "composer.json": "php", "build.sbt": "scala", "Package.swift": "swift",
}
# files that change what a card says even though they are not code
SPECIAL_NAMES = frozenset({
    "package.json", "openapi.json", "openapi.yaml", "openapi.yml", "swagger.json", "swagger.yaml",
    "swagger.yml", "alembic.ini", "tsconfig.json",
}) | frozenset(MANIFESTS)
# manifests that make their folder a module root (vcpkg/conan only add dependencies to one)
SOURCE_FOLDERS = frozenset({"src", "lib", "source", "sources"})
GENERIC = "~"  # a module root whose kind is its dominant language behind the extractor interface
ROOT_MANIFESTS = frozenset({"go.mod", "Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts", "CMakeLists.txt", "configure.ac",
                            "meson.build",
                            "Gemfile", "composer.json", "build.sbt", "Package.swift"})

# folders never scanned, wherever they are
SKIP_DIRS = frozenset({
    "node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist", "out", "coverage",
    "htmlcov", "target", "vendor", "bower_components", "egg-info",
})
# folders that are not modules unless they are packages themselves or a glob names them
NON_MODULE_DIRS = frozenset({"tests", "test", "testing", "docs", "doc", "benchmarks", "bench"})
# of those, the names a Go package of real code may carry (cobra's `doc` package generates documentation):
# such a folder with Go source of its own is a package like any other
PACKAGE_DOC_DIRS = frozenset({"docs", "doc"})
# loose files that are project plumbing, not a module
PLUMBING = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "dodo.py"})
# subpackages that always stay in their parent's card
NEVER_SPLIT = frozenset({"migrations", "tests", "test", "versions"})

# project roots whose language names its own unit by folder, so every such folder is a module whatever its
# size (a Go package is one import path; a Java package one namespace): manifest language -> source extensions
UNIT_FOLDER_EXT = {"go": frozenset({".go"}), "java": frozenset({".java", ".kt"})}
UNIT_NEVER = frozenset({"testdata", "vendor"})   # folders of a unit language that are never a unit of their own

SPLIT_BYTES = 160_000      # a package whose source is bigger than this is split...
SPLIT_MIN_BYTES = 12_000   # ...into subpackages at least this big
SMALL_OWN_BYTES = 1_000    # a split package with less code of its own folds into its parent


@record(frozen=True)
class FileInfo:
    path: str      # repository-relative POSIX path
    size: int
    mtime_ns: int


@record(frozen=True)
class Module:
    """One card's worth of code."""

    name: str                    # folder path relative to the repository, "." for the root
    kind: str                    # python | node | other
    files: tuple[str, ...]       # files read and hashed (source and special files), sorted
    other: tuple[str, ...] = ()  # other files under the folder: listed by count, names hashed
    package: str | None = None   # dotted Python name when the folder is a package

    @property
    def folder(self) -> str:
        return "" if self.name == "." else self.name

    def contains(self, path: str) -> bool:
        return self.name == "." or path == self.name or path.startswith(self.name + "/")


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def file_language(path: str) -> str | None:
    """python | node | a language behind the extractor interface (go, rust…) | other | None."""
    suffix = _suffix(path)
    if suffix in PY_EXT:
        return "python"
    if suffix in TS_EXT:
        return "node"
    lang = LANG_EXT.get(suffix)
    if lang:
        return lang
    if suffix in OTHER_EXT:
        return "other"
    return None


def _generic(lang: str | None) -> bool:
    """A language read by the extractor interface, or another source language (not Python, not Node)."""
    return lang is not None and lang not in ("python", "node")


def card_rel_path(module: str) -> str:
    """The card's path relative to `.brain/`: modules/<module>.md (the root is modules/_root.md)."""
    return "modules/_root.md" if module in (".", "") else f"modules/{module}.md"


# -- scanning --------------------------------------------------------------------------


def _skip_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info")


def _git_listing(repo: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files, when ``repo`` is itself a git work tree's top."""
    from ..gitsafe import project_repo

    git = project_repo(repo, here_only=True)
    out = git.output("ls-files", "-z", "--cached", "--others", "--exclude-standard") if git is not None else None
    if out is None:
        return None
    names = out.split("\0")
    return sorted({n for n in names if n})


def _is_go_source(name: str) -> bool:
    return name.endswith(".go") and not name.endswith("_test.go")


def _pruned(name: str, folder_files) -> bool:
    """A tests/docs-like folder that default discovery never makes modules in; ``folder_files`` lists the
    names of its own files (a Python package's ``__init__.py`` or a Go package's source keep it)."""
    if name not in NON_MODULE_DIRS:
        return False
    names = set(folder_files)
    if "__init__.py" in names:
        return False
    return not (name in PACKAGE_DOC_DIRS and any(_is_go_source(n) for n in names))


def _wanted(name: str) -> bool:
    """Files whose size and mtime matter (they are read); the others are only named."""
    suffix = _suffix(name)
    return suffix in PY_EXT or suffix in TS_EXT or suffix in OTHER_EXT or suffix in LANG_EXT or name in SPECIAL_NAMES


def scan(repo: Path, *, prune: bool = True, folders: dict[str, int] | None = None) -> list[FileInfo]:
    """List the repository's files, skipping hidden, vendored and build folders.

    Only files that can be read into a card are stat'ed (size, mtime); the rest are
    named with zeros. With ``prune``, tests/docs-like folders that are not Python
    packages are not descended into (default discovery never makes modules there).
    When ``folders`` is given it receives the mtime of every folder looked at, so a
    later run can tell, from folder mtimes alone, that no file was added or removed.
    """
    repo = Path(repo)
    infos: list[FileInfo] = []
    listing = _git_listing(repo)
    if listing is not None:
        skip_cache: dict[str, bool] = {}
        own_files: dict[str, list[str]] = {}
        for rel in listing:
            head, _, tail = rel.rpartition("/")
            own_files.setdefault(head, []).append(tail)
        for rel in listing:
            folder, _, name = rel.rpartition("/")
            if too_deep_path(rel, root=str(repo)):
                continue  # deeper than any tree brain reads (brain.trees): named once on stderr
            skipped = skip_cache.get(folder)
            if skipped is None:
                parts = folder.split("/") if folder else []
                hidden = any(_skip_dir(p) for p in parts)
                skipped = hidden or (
                    prune and any(_pruned(p, own_files.get("/".join(parts[: i + 1]), ())) for i, p in enumerate(parts)))
                skip_cache[folder] = skipped
                # hidden and vendored folders never change the layout: their mtimes are not recorded (writing a
                # card into .brain/modules/x must not make the next run rescan the tree)
                if folders is not None and not hidden:
                    for anc in _ancestors(folder):
                        if anc not in folders:
                            try:
                                folders[anc] = os.stat(repo / anc if anc else repo).st_mtime_ns
                            except OSError:
                                folders[anc] = 0
            if skipped:
                continue
            if _wanted(name):
                try:
                    st = os.lstat(repo / rel)
                except OSError:
                    continue  # deleted but still in the index
                if not _is_regular(st.st_mode):
                    continue
                infos.append(FileInfo(rel, st.st_size, st.st_mtime_ns))
            else:
                infos.append(FileInfo(rel, 0, 0))
        if folders is not None:
            try:  # git's own view changes with the index (new tracked files, .gitignore edits)
                folders[".git/index"] = os.stat(repo / ".git" / "index").st_mtime_ns
            except OSError:
                folders[".git/index"] = 0
        return infos

    def walk(path: str, prefix: str, mtime: int, depth: int, stack: list) -> None:
        """List one folder; its subfolders go on ``stack`` (no recursion: trees may be 1,200 levels deep)."""
        if folders is not None:
            folders[prefix[:-1]] = mtime
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        noted = False
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if _skip_dir(name):
                    continue
                try:
                    sub_mtime = entry.stat(follow_symlinks=False).st_mtime_ns if folders is not None else 0
                except OSError:
                    continue
                if prune and name in NON_MODULE_DIRS and _pruned(name, _own_names(entry.path)):
                    if folders is not None:
                        folders[prefix + name] = sub_mtime  # a new __init__.py there changes the layout
                    continue
                if depth >= MAX_DEPTH:
                    if not noted:
                        note_too_deep(path)
                        noted = True
                    continue
                stack.append((entry.path, prefix + name + "/", sub_mtime, depth + 1))
            elif _wanted(name):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if _is_regular(st.st_mode):
                    infos.append(FileInfo(prefix + name, st.st_size, st.st_mtime_ns))
            elif entry.is_file(follow_symlinks=False):
                infos.append(FileInfo(prefix + name, 0, 0))

    try:
        root_mtime = os.stat(repo).st_mtime_ns
    except OSError:
        return []
    stack = [(str(repo), "", root_mtime, 0)]
    while stack:
        walk(*stack.pop(), stack)
    infos.sort(key=lambda f: f.path)
    return infos


def _own_names(folder: str) -> list[str]:
    try:
        return [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


# -- folders ---------------------------------------------------------------------------


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _ancestors(folder: str):
    """``a/b/c`` -> ``a/b/c``, ``a/b``, ``a``, ``""``."""
    while True:
        yield folder
        if not folder:
            return
        folder = _parent(folder)


def __getattr__(name: str):
    """The grouping of files into modules moved to ``grouping``; its names stay importable from here."""
    if name in ("discover", "python_names", "glob_to_regex"):
        from . import grouping

        return getattr(grouping, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
