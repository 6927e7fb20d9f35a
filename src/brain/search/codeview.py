"""Read-only lookups over the code tables of index.db, for the ranking: files, modules, imports, symbols.

``CodeView`` answers what the evidence modules ask of the repository: which files a written
path or an import points to (Python modules, JavaScript specifiers, C includes, Java and Go
packages, Rust ``use`` paths), which files define a name, BM25 over the files' identifier
tokens and phrase look-ups. Loaded once per use; everything is derived from the index.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections import defaultdict

from .code import is_nonproduct_path

__all__ = ["CodeView"]

_JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
# TypeScript's ES modules import a source by the name it compiles to (`./x.js` is `x.ts` or `x.tsx`)
_COMPILED_FROM = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_C_FAMILY = (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh")
# folders that hold sources without naming a module: `src/main/java/com/x/Y.java` is module com.x.Y,
# `tokio/src/sync/mpsc/mod.rs` is tokio::sync::mpsc, `include/fmt/core.h` is fmt/core
_SOURCE_ROOTS = frozenset({"src", "source", "sources", "lib", "main", "java", "kotlin", "scala", "include", "pkg"})
# file names that stand for their folder's module
_FOLDER_FILES = frozenset({"mod", "lib", "index", "__init__", "main", "package-info"})


_SUFFIXES = ("izations", "ization", "ations", "ation", "izing", "ized", "izes", "ize", "ings", "ing", "ed", "es", "s")


def _stem(word: str) -> str | None:
    """A crude English stem for prefix search, or None: only plain words of 5+ letters."""
    if not word.isalpha() or len(word) < 5:
        return None
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return None


_RUST_MODULE_FILES = ("mod.rs", "lib.rs", "main.rs")


def _rust_declares(module_file: str, path: str) -> bool:
    """Whether Rust file ``module_file`` is the module file of a folder holding ``path`` (``a/mod.rs``,
    ``a/lib.rs`` or ``a.rs`` above ``a/...``): it declares (``mod x;``) and re-exports (``pub use
    x::Y``) the files below it. That is structure, not use: a link along it would lend every
    top-ranked file's score to its ``mod.rs`` and to the crate's ``lib.rs``."""
    if not module_file.endswith(".rs"):
        return False
    name = posixpath.basename(module_file)
    folder = posixpath.dirname(module_file) if name in _RUST_MODULE_FILES else module_file[:-3]
    return not folder or path.startswith(folder + "/")


class CodeView:
    """Read-only lookups over the code tables of index.db, loaded once per use."""

    def __init__(self, db: sqlite3.Connection) -> None:
        from .code_rows import FileRows, GeneratedFiles, ModuleFiles, NameFiles

        self.db = db
        # read per path, module, file name or stem on first ask, not every row (see code_rows)
        self.files = FileRows(db)  # path -> (module, is_test)
        self.generated = GeneratedFiles(self.files)  # written by a tool or copied from another project
        self.by_module = ModuleFiles(db)
        self.by_name = NameFiles(self, "name")  # file name -> its files, in row order
        self.by_stem = NameFiles(self, "lstem")  # lower-case stem -> product files (no __init__)
        self._names: tuple[dict | None] | None = None
        self._key: tuple[str | None] | None = None
        # separate modules inside the repository's own (a Go folder with its own go.mod): folder -> names
        try:
            self.nested: dict[str, list[str]] = {folder: names.split() for folder, names in
                                                 db.execute("SELECT folder, names FROM code_modules") if folder}
        except sqlite3.OperationalError:
            self.nested = {}
        self._segments: tuple[dict, dict] | None = None
        self._imports: tuple[dict, dict] | None = None
        self._entries: list[str] | None = None
        self._rust_crates: dict[str, str] | None = None  # crate name -> its source folder
        self._rust_definers: dict[str, list[str]] = {}
        self._rust_roots: dict[str, str | None] = {}  # folder -> source folder of its crate
        self._imports_of: dict[str, list[str]] = {}

    def entry_points(self) -> list[str]:
        """The program's entry files: product files (not tests, examples, generated or copied-in code)
        that define a top-level `main` (C, C++, Go, Rust). Python's entry points take other shapes."""
        if self._entries is None:
            self._entries = sorted({
                path for (path,) in self.db.execute(
                    "SELECT path FROM code_symbols WHERE lname = 'main' AND kind = 'function'")
                if path in self.files and not self.is_test(path) and path not in self.generated
                and not path.endswith((".py", ".pyi")) and not is_nonproduct_path(path)})
        return self._entries

    def module_keys(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(module -> files, folder -> files) keyed by every lower-case tail of the path's module words.

        A module's words are its folders without source roots plus its file stem (a folder file
        such as ``mod.rs`` or ``index.js`` stands for its folder): what ``a.b.C``, ``a::b::C`` and
        ``a/b`` name in Java, Rust, Go, C++ and JavaScript texts. Built on first use.
        """
        if self._segments is None:
            modules: dict[str, list[str]] = defaultdict(list)
            folders: dict[str, list[str]] = defaultdict(list)
            from .code_rows import product_paths

            for path in product_paths(self.db, python=False):  # Python modules resolve exactly through `by_module`
                parts = path.lower().split("/")
                dirs = [d for d in parts[:-1] if d not in _SOURCE_ROOTS]
                stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]
                # a Go qualifier names a package, the folder: `json.Unmarshal` is not `jsonx/json.go`
                words = dirs if stem in _FOLDER_FILES or path.endswith(".go") else [*dirs, stem]
                for i in range(len(words)):
                    modules["/".join(words[i:])].append(path)
                for i in range(len(dirs)):
                    folders["/".join(dirs[i:])].append(path)
            self._segments = (modules, folders)
        return self._segments

    def suffix_files(self, suffix: str) -> list[str]:
        """The files whose path is ``suffix`` or ends with ``/suffix`` (whole path components), in row order.

        Found through the file name: a map of every path's every tail cost a task boot 35 ms of CPU
        to build on a 20,000-file tree, for the handful of paths a task writes."""
        name = suffix.rsplit("/", 1)[-1]
        tail = "/" + suffix
        return [p for p in self.by_name.get(name, ()) if p == suffix or p.endswith(tail)]

    def is_test(self, path: str) -> bool:
        return self.files.get(path, ("", False))[1]

    def code_key(self) -> str | None:
        """The code tables' key (``graph_store.graph_key``), read once per view."""
        if self._key is None:
            from .graph_store import graph_key

            self._key = (graph_key(self.db),)
        return self._key[0]

    def _name_maps(self) -> dict | None:
        """None while ``code_names`` holds (``by_name`` and ``by_stem`` ask it), else the maps from every row."""
        if self._names is None:
            from .code_rows import names_tables

            self._names = (names_tables(self.db, self.files, self.code_key()),)
        return self._names[0]

    def resolve_path(self, written: str) -> list[str]:
        """Repository files a written path (absolute, relative, or a tail) points to."""
        parts = [p for p in written.split("/") if p not in ("", ".")]
        for i in range(len(parts)):
            hits = self.suffix_files("/".join(parts[i:]))
            if hits:
                if len(parts) - i > 1:
                    return hits
                # only the file name matches: trust it when the text wrote a bare name, not someone else's path
                return hits if len(parts) == 1 and len(hits) <= 3 else []
        return []

    def definitions(self, names: list[str]) -> dict[str, list[tuple[str, str, str]]]:
        """name -> [(path, kind, qualname)] for exact (case-sensitive) names, test files excluded."""
        found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        names = list(dict.fromkeys(names))
        for i in range(0, len(names), 500):
            chunk = names[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for path, name, kind, qual in self.db.execute(
                f"SELECT path, name, kind, qual FROM code_symbols WHERE lname IN ({marks})", [n.lower() for n in chunk]
            ):
                found[name].append((path, kind, qual))
        return found

    def imports_of(self, path: str) -> list[str]:
        """The import targets ``path`` writes (memoized: the lending passes ask for the same files again)."""
        found = self._imports_of.get(path)
        if found is None:
            found = self._imports_of[path] = [r[0] for r in self.db.execute(
                "SELECT target FROM code_imports WHERE path = ?", (path,))]
        return list(found)

    def resolve_import(self, path: str, target: str) -> list[str]:
        """Repository files an import line of ``path`` points to (none for outside packages).

        Python ``pkg.mod`` (or ``pkg.mod.Name``) by module; JavaScript relative specifiers
        (``../lib/x`` -> ``lib/x.js`` or ``lib/x/index.js``; TypeScript's ``./x.js`` -> ``x.ts``); C/C++ ``"x.h"`` next to the file or
        by its tail; Java ``com.x.Y`` and Go ``github.com/org/app/pkg`` by their path words
        (a Go import names a folder: its files).
        """
        target = target.strip()
        if not target:
            return []
        if path.endswith((".py", ".pyi")):
            found = self.by_module.get(target) or self.by_module.get(target.rsplit(".", 1)[0])
            return [found] if found and found != path else []
        if target.startswith("."):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            stem, ext = posixpath.splitext(base)
            for candidate in (base, *(base + e for e in _JS_EXTS), *(base + "/index" + e for e in _JS_EXTS),
                              base + ".d.ts", base + "/index.d.ts",  # a type import of a declaration file
                              *(stem + e for e in _COMPILED_FROM.get(ext, ()))):  # `./x.js` of `x.ts`
                if candidate in self.files and candidate != path:
                    return [candidate]
            return []
        if path.endswith(_C_FAMILY):
            near = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if near in self.files:
                return [near]
            hits = self.suffix_files(target)
            return list(hits) if len(hits) <= 2 and ("/" in target or len(hits) == 1) else []
        if path.endswith(".rs"):
            return self._resolve_rust(path, target)
        modules, folders = self.module_keys()
        words = [w for w in re.split(r"[./]", target.lower()) if w]
        if path.endswith(".go"):
            for i in range(max(0, len(words) - 4), len(words) - 1):  # at least two words of the import path
                files = folders.get("/".join(words[i:]))
                if files:
                    return [f for f in files if posixpath.dirname(f) == posixpath.dirname(files[0])
                            and f.endswith(".go")]
            return []
        if path.endswith((".java", ".kt")) and len(words) >= 3:
            return list(modules.get("/".join(words), []))[:1]
        if path.endswith(".java") and re.fullmatch(r"[A-Z]\w*", target):
            return self._type_file(path, target)
        return []

    def _type_file(self, path: str, name: str) -> list[str]:
        """The file of type ``name`` as a class header of ``path`` names it (``extends JsonParser``):
        the same package's ``JsonParser.java``, else the one file of that name in the repository."""
        ext = posixpath.splitext(path)[1]
        near = posixpath.join(posixpath.dirname(path), name + ext)
        if near in self.files:
            return [near] if near != path else []
        hits = [p for p in self.by_stem.get(name.lower(), []) if p.endswith("/" + name + ext) or p == name + ext]
        return hits if len(hits) == 1 and hits[0] != path else []

    # -- Rust modules: `crate::a::b::Item`, `self::x`, `super::x`, `other_crate::x` --------------------

    def _rust_root(self, path: str) -> str | None:
        """The source folder of the crate ``path`` belongs to: the deepest folder above it holding a
        ``lib.rs`` or ``main.rs``."""
        start = folder = posixpath.dirname(path)
        if start in self._rust_roots:
            return self._rust_roots[start]
        found = None
        for _ in range(64):
            if f"{folder}/lib.rs" in self.files or f"{folder}/main.rs" in self.files or (
                    not folder and ("lib.rs" in self.files or "main.rs" in self.files)):
                found = folder
                break
            if not folder:
                break
            folder = posixpath.dirname(folder)
        self._rust_roots[start] = found
        return found

    def rust_crates(self) -> dict[str, str]:
        """Crate name (``tokio_util``) -> source folder (``tokio-util/src``) for each library crate of the
        repository, named after the folder holding its ``src`` (a crate at the top is not named)."""
        if self._rust_crates is None:
            crates: dict[str, str] = {}
            from .code_rows import product_paths

            for path in product_paths(self.db, "*/lib.rs"):
                root = posixpath.dirname(path)
                base = posixpath.dirname(root) if posixpath.basename(root) == "src" else root
                if base:
                    crates.setdefault(posixpath.basename(base).replace("-", "_"), root)
            self._rust_crates = crates
        return self._rust_crates

    def _rust_module_file(self, folder: str, root: str | None) -> str | None:
        """The file of the module at ``folder`` (``x.rs`` or ``x/mod.rs``; a crate root's ``lib.rs``)."""
        if folder == root:
            for name in ("lib.rs", "main.rs"):
                candidate = f"{folder}/{name}" if folder else name
                if candidate in self.files:
                    return candidate
            return None
        for candidate in (folder + ".rs", folder + "/mod.rs"):
            if candidate in self.files:
                return candidate
        return None

    def _rust_walk(self, start: str, words: list[str], root: str | None) -> tuple[str, int]:
        """(module folder reached, words used) walking ``words`` down the modules from ``start``."""
        cur, walked = start, 0
        for word in words:
            folder = f"{cur}/{word}" if cur else word
            if self._rust_module_file(folder, root) is None:
                break
            cur, walked = folder, walked + 1
        return cur, walked

    def _rust_item_files(self, folder: str, name: str) -> list[str]:
        """Files under ``folder`` defining the type, function or macro ``name`` (a re-exported item)."""
        if name not in self._rust_definers:
            rows = self.db.execute("SELECT DISTINCT path, name FROM code_symbols WHERE lname = ? AND kind IN "
                                   "('class', 'function', 'macro')", (name.lower(),)).fetchall()
            self._rust_definers[name] = [p for p, n in rows if n == name and p.endswith(".rs")]
        prefix = folder + "/" if folder else ""
        return [p for p in self._rust_definers[name] if p.startswith(prefix) and not self.is_test(p)]

    def _resolve_rust(self, path: str, target: str) -> list[str]:
        """The file a Rust `use` path of ``path`` points to: the module the path walks to, or the file
        under it defining the item it ends with (a re-exported item is where the module keeps it).
        A module file and the files below it are not linked (see ``_rust_declares``)."""
        words = [w for w in target.replace("$crate", "crate").split("::") if w]
        root = self._rust_root(path)
        if not words:
            return []
        stem = posixpath.splitext(posixpath.basename(path))[0]
        here = posixpath.dirname(path)
        if not (root is not None and here == root and stem in ("lib", "main")) and stem != "mod":
            here = posixpath.splitext(path)[0]  # `a/b.rs` is module a::b, its children live in `a/b/`
        head, rest = words[0], words[1:]
        if head == "crate":
            if root is None:
                return []
            start = root
        elif head == "self":
            start = here
        elif head == "super":
            start = here
            while True:
                if start == root or not start:
                    return []
                start = posixpath.dirname(start)
                if not rest or rest[0] != "super":
                    break
                rest = rest[1:]
        elif head in self.rust_crates():
            start = self.rust_crates()[head]
            root = start
        else:  # a path relative to this module (`pub use child::Item`), or another crate's
            start, rest = here, words
        cur, walked = self._rust_walk(start, rest, root)
        if head not in ("crate", "self", "super") and head not in self.rust_crates() and not walked:
            if root is None or here == root:
                return []  # an outside crate (`std`, `bytes`)
            cur, walked = self._rust_walk(root, rest, root)  # 2015 edition: `use a::b` from the crate root
            if not walked:
                return []
        left = rest[walked:]
        found: list[str] = []
        if left and left[0] not in ("self", "*"):
            found = self._rust_item_files(cur, left[0])
            found = found if len(found) <= 2 else []
        if not found:
            own = self._rust_module_file(cur, root)
            found = [own] if own else []
        return [f for f in found if f != path and not _rust_declares(path, f) and not _rust_declares(f, path)]

    def import_graph(self):
        """(file -> files it imports, file -> files importing it) within the repository, built on first use.

        Resolving every import line is the largest part of a task boot's ranking on a big tree (60 ms
        of CPU at 20,000 files), and its answer only changes with the code tables: it is kept in
        index.db as rows (``graph_store``) under a key of those tables and of this module's code, and
        read back per file asked about while the key holds (mappings with ``get``, as the dicts are)."""
        if self._imports is None:
            from . import graph_store

            key = self.code_key()
            cached = self._cached_graph(key)
            if cached is not None:
                self._imports = cached
                return cached
            forward: dict[str, set[str]] = defaultdict(set)
            backward: dict[str, set[str]] = defaultdict(set)
            for path, target in self.db.execute("SELECT path, target FROM code_imports"):
                if self.is_test(path):
                    continue
                for hit in self.resolve_import(path, target):
                    if hit != path and not self.is_test(hit):
                        forward[path].add(hit)
                        backward[hit].add(path)
            self._store_graph(key, forward)
            self._imports = (forward, backward)
        return self._imports

    def _cached_graph(self, key: str | None):
        from .graph_store import stored_graph

        return stored_graph(self.db, key)

    def _store_graph(self, key: str | None, forward: dict[str, set[str]]) -> None:
        from .graph_store import store_graph

        store_graph(self.db, key, forward)

    def _has_term(self, term: str, absent: set[str] = frozenset()) -> bool:
        """Whether any indexed file has the word as written (``absent``: words known to be held by none)."""
        if term in absent:
            return False
        try:
            return self.db.execute("SELECT 1 FROM code_fts WHERE code_fts MATCH ? LIMIT 1",
                                   ('"' + term.replace('"', '""') + '"',)).fetchone() is not None
        except sqlite3.OperationalError:
            return False
    def files_writing(self, word: str, limit: int) -> list[str]:
        """Up to ``limit`` files whose code writes the identifier ``word`` (test files are not indexed)."""
        try:
            rows = self.db.execute("SELECT code_files.path FROM code_fts JOIN code_files ON code_files.id = code_fts.rowid "
                                   "WHERE code_fts MATCH ? LIMIT ?", ('body:"' + word.lower().replace('"', '') + '"', limit))
            return [r[0] for r in rows]
        except sqlite3.OperationalError:
            return []

    def bm25(self, words: list[str], limit: int = 50, *, body_only: bool = False,
             stems: bool | str = False, names_weight: float | None = None) -> list[tuple[str, float]]:
        """Files ranked by BM25 over their identifier tokens (``tokenize.tokens``; test files are not in the table).

        ``stems`` also matches each inflected query word's stem as a prefix (`colorized` finds `color`);
        ``stems="absent"`` only for the words that no file writes as they are, ``"only-absent"`` queries
        those stems alone (no word as written)."""
        from .fts_terms import absent, snapshot

        terms = [w for w in dict.fromkeys(words) if len(w) > 1][:200]
        if not terms:
            return []
        if names_weight is None:
            from .weights import shipped_weights

            names_weight = shipped_weights().params["names_weight"]
        weights = "0.0, 1.0" if body_only else f"{float(names_weight)}, 1.0"
        try:
            with snapshot(self.db):
                # a word no file holds adds 0.0 to every score and matches nothing: left out (search.fts_terms)
                gone = absent(self.db, "code", terms)
                quoted = ['"' + t.replace('"', '""') + '"' for t in terms if t not in gone]
                stems_only = stems == "only-absent"
                if stems:
                    # English inflections reach their stem: `colorized`, `coloring` -> color*, `panics` -> panic*
                    inflected = [t for t in terms if stems not in ("absent", "only-absent") or not self._has_term(t, gone)]
                    stems = {_stem(t) for t in inflected} - set(terms) - {None}
                    if stems_only:
                        quoted = []
                    quoted += ['"' + s.replace('"', '""') + '"*' for s in sorted(stems)]
                if not quoted:
                    return []
                rows = self.db.execute(f"SELECT code_files.path, bm25(code_fts, {weights}) AS s FROM code_fts "
                                       f"JOIN code_files ON code_files.id = code_fts.rowid WHERE code_fts MATCH ? "
                                       f"ORDER BY s LIMIT ?", (" OR ".join(quoted), limit)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [(path, -score) for path, score in rows]

    def phrase_files(self, phrase: list[str], limit: int) -> list[str]:
        """Files whose body holds these tokens in this order (an FTS5 phrase), at most ``limit``."""
        if not phrase:
            return []
        query = 'body: "' + " ".join(phrase).replace('"', '""') + '"'
        try:
            rows = self.db.execute("SELECT code_files.path FROM code_fts JOIN code_files "
                                   "ON code_files.id = code_fts.rowid WHERE code_fts MATCH ? LIMIT ?",
                                   (query, limit)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [r[0] for r in rows]
