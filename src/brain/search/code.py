"""The code side of the derived index: source files, their symbols and imports.

Built from the repository itself (Python through ``ast``, other languages through a light
regular-expression pass), stored in ``runtime/index.db`` and refreshed incrementally: a file is re-read
only when its size or modification time changed, and removed files are dropped. Test files are listed
(so a path naming one still resolves) but never parsed: they are not what a task is about.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from pathlib import Path

from .. import pyast
from ..records import field, record
from ..trees import walk as walk_tree
from .outdirs import SKIP_DIRS, FolderFilter  # noqa: F401  (re-exported)
from . import traps
from .fts_terms import TERMS_SCHEMA
from ..lazyre import lazy

__all__ = ["transaction", "CODE_EXTENSIONS", "COMPANION_EXTENSIONS", "SKIP_DIRS", "is_test_path", "scan_files",
           "extract", "FileFacts", "CODE_SCHEMA", "refresh_code", "module_name_for", "parse_python", "record_modules",
           "code_diff", "is_nonproduct_path", "looks_generated", "vendored_folders", "FolderMarks", "copyright_holder",
           "nested_modules"]

@contextlib.contextmanager
def transaction(db: sqlite3.Connection):
    """One write transaction on an autocommit connection (BEGIN IMMEDIATE ... COMMIT or ROLLBACK)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


CODE_EXTENSIONS = {
    ".py": "python", ".pyi": "python",
    ".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js", ".ts": "ts", ".tsx": "ts", ".mts": "ts", ".cts": "ts",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".swift": "swift",
    ".scala": "scala", ".sh": "shell", ".cxx": "cpp", ".hh": "cpp", ".hxx": "cpp", ".ipp": "cpp", ".inl": "cpp", ".cu": "cpp", ".cuh": "cpp",
}
# source files of languages a project writes beside its main one: grammars (the parser's real source),
# a query language's own builtins, embedded and build scripts. Indexed like the rest (their definitions by
# `definitions.LANGUAGES`, their words in full text), so a report about `gsub` finds `builtin.jq`. Shell
# completion scripts (`.bash`, `.zsh`) are left out: they repeat every option's name and help text and won
# reports about any option (a held-out check on ripgrep's history: its `rg.zsh` in 27 of 40 top tens).
COMPANION_EXTENSIONS = {
    ".y": "yacc", ".yy": "yacc", ".l": "lex", ".ll": "lex", ".jq": "jq", ".lua": "lua", ".pl": "perl",
    ".pm": "perl", ".tcl": "tcl", ".awk": "awk", ".vim": "vim", ".el": "elisp",
}
CODE_EXTENSIONS.update(COMPANION_EXTENSIONS)
MAX_FILE_BYTES = 1_000_000
TEST_DIRS = {"tests", "test", "__tests__", "spec", "specs", "testing", "e2e", "testdata", "__mocks__", "__snapshots__",
             "__fixtures__"}
# a `test` folder is a test tree at the top of a repository or a package (`src/test/java/...`, `crate/test/`, a
# workspace's `packages/less/test/`), not deeper, where it is as often a product package (a web framework's `test` client)
_TEST_PARENTS = {"src", "lib", "source"}
# a folder named as the tests of something (`Foo.Tests`, `Foo.Specs`, `integration_tests`, `app-test`, camelCase source
# sets and .NET projects: `jvmTest`, `commonTest`, `UnitTests`) or as what tests use (`test-helpers`, `TestUtils`)
_TEST_FOLDER = lazy(r"[.\-_][Tt]ests?$|[.\-_]Specs?$|[a-z](?:Tests?|Specs)$|(?:^|[.\-_])[Tt]ests?(?:[\-_][A-Za-z]|[A-Z])")
# file-name shapes of tests in each language: test_x.py, x_test.py, x_test.go, x.test.js, x.spec.ts, XTest.java
_TEST_STEM = lazy(r"^test_|_tests?$|^tests?$|^conftest$|[a-z0-9](?:Test|Tests|IT|Spec)$")
# folders of code that ships beside the product but is rarely what a report is about
NONPRODUCT_DIRS = {"examples", "example", "docs", "doc", "benches", "benchmarks", "benchmark", "bench", "scripts",
                   "fuzz", "sandbox", "demo", "demos", "samples", "sample"}
_CONFIG_FILE = lazy(r"\w\.(?:config|conf)\.[cm]?[jt]s$|^(?:gruntfile|gulpfile|jakefile)\.[cm]?js$", re.I)
_BUNDLED = lazy(r"[.\-]min\.[cm]?js$|\.bundle\.[cm]?js$")


def is_test_path(path: str) -> bool:
    """True for test files of any language: `tests/` folders, a top-level, `src/test/` or `packages/x/test/`, test_*.py,
    *_test.go, *.test.js, *.spec.ts, FooTest.java, `__tests__/`, `testdata/`."""
    parts = path.split("/")
    name = parts[-1]
    stem = name.split(".", 1)[0]
    folders = parts[:-1]
    if any(p in TEST_DIRS and p != "test" or _TEST_FOLDER.search(p) for p in folders):
        return True
    if folders and (folders[0] == "test" or any(p == "test" and i > 0 and (folders[i - 1] in _TEST_PARENTS or
                                                                       i > 1 and folders[i - 2] == "packages")
                                                for i, p in enumerate(folders))):
        return True
    if _TEST_STEM.search(stem):
        return True
    return ".test." in name or ".spec." in name or name.endswith(("_test.go", "_spec.rb"))


def is_nonproduct_path(path: str) -> bool:
    """Examples, docs, benchmarks, scripts and tool configuration: shipped beside the product, rarely the fix."""
    parts = path.split("/")
    return any(p.lower() in NONPRODUCT_DIRS for p in parts[:-1]) or bool(_CONFIG_FILE.search(parts[-1]))


# third-party code by folder name; `bundled`: a library copied into the product's tree (decision 0047)
VENDORED_DIRS = {"third_party", "thirdparty", "3rdparty", "third-party", "3rd-party", "3rd_party", "external",
                 "extern", "deps", "bundled"}
_GENERATED_MARK = lazy(r"code generated|generated (?:by|from)|do not edit|made by gnu bison", re.I)
_COMMENT_START = ("//", "#", "/*", "*", "--", "<!--", ";")


_LICENSE_FILE = lazy(r"licen[cs]e|copying|notice", re.I)
VENDORED_SHARE = 0.6  # this share of a folder's source files name the foreign holder


@record
class FolderMarks:
    """What a walk of the tree notes of its folders for ``vendored_folders``, so the index's one walk
    (``scan_files``) serves both: folders named as third-party code, and folders with a license of their own."""

    named: set[str] = field(default_factory=set)
    licensed: set[str] = field(default_factory=set)

    def note(self, rel: str, names: list[str]) -> None:
        if not rel:
            return
        if rel.rsplit("/", 1)[-1].lower() in VENDORED_DIRS:
            self.named.add(rel)
        elif any(_LICENSE_FILE.search(n) and os.path.splitext(n)[1] not in CODE_EXTENSIONS for n in names):
            self.licensed.add(rel)


def _below(rel: str, folders: set[str]) -> bool:
    """Whether a folder lies inside one of ``folders`` (a walk that stops there never sees it)."""
    cut = rel.find("/")
    while cut != -1:
        if rel[:cut] in folders:
            return True
        cut = rel.find("/", cut + 1)
    return False


def vendored_folders(repo: Path, files: dict[str, object] | None = None, marks: FolderMarks | None = None) -> set[str]:
    """Folders of third-party code copied in.

    By the names projects give them (``third_party``, ``deps``), and by what a copied-in library
    carries: a license file of its own beside source files most of which open with the copyright
    notice of a holder that is not the project's: neither the holder the root license names first
    nor the one named most often by the repository's other files. A license file alone is no sign: projects keep attribution licenses beside
    code of their own (whose files then carry no notice, or the project's)."""
    # ``marks``: what ``scan_files`` noted of the folders in its walk (else the tree is walked here)
    if marks is None:
        marks = FolderMarks()
        keep = FolderFilter(str(repo)).keep
        for folder, dirs, names in walk_tree(str(repo)):
            dirs[:] = sorted(d for d in dirs if keep(folder, d))
            marks.note(folder[len(str(repo)) + 1:].replace(os.sep, "/"), names)
    found = {rel for rel in marks.named if not _below(rel, marks.named)}
    licensed = {rel for rel in marks.licensed if rel not in marks.named and not _below(rel, marks.named)}
    if licensed:
        found |= _foreign_folders(repo, licensed, files if files is not None else scan_files(repo), found)
    return found


def copyright_holder(head: str, lines: int = 40) -> frozenset[str]:
    """``copyright.copyright_holder`` (imported by a refresh that looks for vendored folders, not by a boot)."""
    from .copyright import copyright_holder as holder

    return holder(head, lines)


def _foreign_folders(repo: Path, licensed: set[str], files, skip: set[str]) -> set[str]:
    """Which of the ``licensed`` folders hold code whose copyright holder is not the project's."""
    under: dict[str, list[str]] = {folder: [] for folder in licensed}
    sources: list[str] = []
    for path in files:
        parts = path.split("/")[:-1]
        folders = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if is_test_path(path) or any(f in skip for f in folders):
            continue
        sources.append(path)
        for folder in folders:
            if folder in under:
                under[folder].append(path)
    from .copyright import copyright_holder, read_head as _read_head

    holders: dict[str, frozenset[str]] = {}

    def holder(path: str) -> frozenset[str]:
        if path not in holders:
            holders[path] = copyright_holder(_read_head(os.path.join(str(repo), path)))
        return holders[path]

    def tally(paths) -> dict[frozenset[str], int]:
        counts: dict[frozenset[str], int] = {}
        for path in paths:
            counts[holder(path)] = counts.get(holder(path), 0) + 1
        return counts

    own: list[frozenset[str]] | None = None
    total: dict[frozenset[str], int] = {}
    found: set[str] = set()
    for folder in sorted(licensed, key=lambda f: (f.count("/"), f)):
        inside = under[folder]
        if len(inside) < 2 or any(folder.startswith(f + "/") for f in found):
            continue
        counts = tally(inside)
        common, count = max(counts.items(), key=lambda kv: (kv[1], sorted(kv[0])))
        if not common or count < VENDORED_SHARE * len(inside):
            continue
        if own is None:  # the root license's first holder, and the holders of all files (read once)
            own = [first for name in sorted(os.listdir(repo)) if _LICENSE_FILE.search(name) and (repo / name).is_file()
                   for first in [copyright_holder(_read_head(str(repo / name)), lines=20)] if first]
            total = tally(sources)
        outside = {h: n - counts.get(h, 0) for h, n in total.items() if h and n > counts.get(h, 0)}
        mine = max(outside.items(), key=lambda kv: (kv[1], sorted(kv[0])))[0] if outside else frozenset()
        if any(common & other for other in (*own, mine)):
            continue  # the project's own holder
        found.add(folder)
    return found


_GO_MODULE = lazy(r"^\s*module\s+\"?([^\s\"]+)", re.M)


def nested_modules(repo: Path) -> dict[str, list[str]]:
    """Go modules inside the repository's own: folder -> the names a text would call it by.

    A folder with its own ``go.mod`` below a root ``go.mod`` is a separate module (the root module's
    packages stop at it; it is versioned and released on its own): a tool, a contrib package or an
    example shipped beside the product. Its names are its folder's name and its module path's last
    element (``github.com/org/app/tools/ctl`` -> ``ctl``; a ``/v2`` suffix is skipped)."""
    root = str(repo)
    if not os.path.isfile(os.path.join(root, "go.mod")):
        return {}
    found: dict[str, list[str]] = {}
    cut, keep = len(root) + 1, FolderFilter(root).keep
    for folder, dirs, files in walk_tree(root):
        dirs[:] = sorted(d for d in dirs if d not in TEST_DIRS and keep(folder, d))
        rel = folder[cut:].replace(os.sep, "/")
        if not rel or "go.mod" not in files:
            continue
        names = [rel.rsplit("/", 1)[-1].lower()]
        try:
            with open(os.path.join(folder, "go.mod"), encoding="utf-8", errors="replace") as handle:
                match = _GO_MODULE.search(handle.read(4000))
        except OSError:
            match = None
        if match:
            elements = [e for e in match.group(1).lower().split("/") if e]
            if len(elements) > 1 and re.fullmatch(r"v\d+", elements[-1]):
                elements.pop()
            if elements and elements[-1] not in names:
                names.append(elements[-1])
        found[rel] = names
    return found


def looks_generated(text: str) -> bool:
    """A file a tool wrote (`// Code generated ... DO NOT EDIT.`, Bison/flex output): a comment in its
    first lines says so, or it opens with a `#line` directive. (``traps.generated_banner`` reads more
    banners, further down; what it adds is stored and weighed by ``traps``.)"""
    for line in text[:2000].split("\n")[:6]:
        line = line.strip()
        if line.startswith("#line ") or (line.startswith(_COMMENT_START) and _GENERATED_MARK.search(line)):
            return True
    return False


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scan_files(repo: Path, marks: FolderMarks | None = None) -> dict[str, tuple[int, int]]:
    """Every source file under ``repo`` -> (mtime_ns, size), skipping hidden and build folders; with
    ``marks``, the walk's folders are noted there too (``vendored_folders`` then needs no walk of its own)."""
    found: dict[str, tuple[int, int]] = {}
    root = str(repo)
    cut, keep = len(root) + 1, FolderFilter(root).keep  # dependency and output folders (`build`, `env` by content)
    for folder, dirs, files in walk_tree(root):
        dirs[:] = sorted(d for d in dirs if keep(folder, d))
        rel_folder = folder[cut:]
        if marks is not None:
            marks.note(rel_folder.replace(os.sep, "/"), files)
        for name in files:
            dot = name.rfind(".")  # os.path.splitext's suffix (dot files are skipped anyway)
            if dot <= 0 or name[dot:] not in CODE_EXTENSIONS or name.startswith(".") or _BUNDLED.search(name):
                continue  # minified and bundled files are build output, not source
            full = os.path.join(folder, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            if st.st_size > MAX_FILE_BYTES:
                continue
            rel = f"{rel_folder}/{name}".replace(os.sep, "/") if rel_folder else name
            if not rel.isascii() and not _storable(rel):
                continue  # a name that is not UTF-8 (a surrogate escape) cannot be a row of index.db
            found[rel] = (st.st_mtime_ns, st.st_size)
    return found


def module_name_for(path: str, package_dirs: set[str]) -> str:
    """Dotted module of a Python file: climb while the folder is a package (has __init__.py)."""
    parts = path[: path.rfind(".")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    # the folders of this file from the deepest up; stop below the first non-package folder
    folders = path.split("/")[:-1]
    start = len(folders)
    while start > 0 and "/".join(folders[:start]) in package_dirs:
        start -= 1
    return ".".join(parts[start:]) if parts[start:] else path


@record
class FileFacts:
    """What one source file defines and imports."""

    symbols: list[tuple[str, str, str, int]] = field(default_factory=list)  # (name, kind, qualname, line)
    imports: list[str] = field(default_factory=list)  # dotted targets, absolute
    doc: str = ""


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
    return ".".join([*base, target] if target else base)


def parse_python(text: str) -> ast.Module | None:
    """``ast.parse`` of a source text, None when it does not parse (the index then reads it by regex)."""
    try:
        return pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _python_facts(text: str, module: str, is_package: bool, tree: ast.Module | None = None) -> FileFacts:
    import ast  # (imported where a Python file is read: a task boot reads none)

    facts = FileFacts()
    if tree is None:
        tree = parse_python(text)
    if tree is None:
        return _regex_facts(text, "python")
    facts.doc = (ast.get_docstring(tree) or "").strip().split("\n\n")[0][:300]

    def visit(body, prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{node.name}"
                facts.symbols.append((node.name, "method" if in_class else "function", qual, node.lineno))
                if not in_class:
                    # nested helpers are part of the file's vocabulary, but not its API
                    for inner in node.body:
                        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                            facts.symbols.append((inner.name, "inner", f"{qual}.{inner.name}", inner.lineno))
            elif isinstance(node, ast.ClassDef):
                qual = f"{prefix}{node.name}"
                facts.symbols.append((node.name, "class", qual, node.lineno))
                visit(node.body, qual + ".", True)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        facts.symbols.append((t.id, "attr" if in_class else "var", f"{prefix}{t.id}", node.lineno))
            elif isinstance(node, ast.Import) and not in_class:
                facts.imports.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not in_class:
                target = node.module if not node.level else _resolve_relative(module, is_package, node.level, node.module)
                if target:
                    facts.imports.append(target)
                    facts.imports.extend(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
            elif isinstance(node, (ast.If, ast.Try)) and not in_class:
                visit(node.body, prefix, in_class)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, prefix, in_class)
                visit(node.orelse, prefix, in_class)

    visit(tree.body, "", False)
    return facts


_REGEX_DEFS = lazy(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:abstract\s+)?"
    r"(?:(class|interface|struct|enum|trait|type|def|function\*?|func|fn|module)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=)",
    re.MULTILINE,
)


def _regex_facts(text: str, lang: str) -> FileFacts:
    from .definitions import LANGUAGES, scan_definitions  # its ~60 patterns: only an indexing run compiles them

    if lang in LANGUAGES:
        scan = scan_definitions(text, lang)
        return FileFacts(symbols=scan.symbols, imports=scan.imports)
    facts = FileFacts()
    for match in _REGEX_DEFS.finditer(text):
        kind, name, const = match.group(1), match.group(2), match.group(3)
        line = text.count("\n", 0, match.start()) + 1
        if name:
            facts.symbols.append((name, "class" if kind in ("class", "interface", "struct", "enum", "trait", "type") else "function", name, line))
        elif const:
            facts.symbols.append((const, "var", const, line))
    for match in re.finditer(r"""(?:import\s[^'"]*?from\s+|require\(\s*|import\s+)['"]([^'"]+)['"]""", text):
        facts.imports.append(match.group(1))
    return facts


def extract(text: str, lang: str, module: str = "", is_package: bool = False, *,
            tree: ast.Module | None = None) -> FileFacts:
    """Symbols and imports of one file's text (pure); ``tree``: its ``parse_python``, when already parsed."""
    if lang == "python":
        return _python_facts(text, module, is_package, tree)
    return _regex_facts(text, lang)


# source files are fed pre-split tokens (see tokenize.tokens): whole identifiers, dotted paths and their parts
CODE_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_./-:'"
CODE_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS code_files(id INTEGER PRIMARY KEY, path TEXT UNIQUE, mtime_ns INTEGER, size INTEGER,
    module TEXT, lang TEXT, is_test INTEGER, doc TEXT, generated INTEGER NOT NULL DEFAULT 0, crc INTEGER);
CREATE INDEX IF NOT EXISTS code_files_module ON code_files(module);
CREATE TABLE IF NOT EXISTS code_symbols(path TEXT, name TEXT, lname TEXT, kind TEXT, qual TEXT, line INTEGER);
CREATE INDEX IF NOT EXISTS code_symbols_lname ON code_symbols(lname);
CREATE INDEX IF NOT EXISTS code_symbols_path ON code_symbols(path);
CREATE TABLE IF NOT EXISTS code_imports(path TEXT, target TEXT);
CREATE INDEX IF NOT EXISTS code_imports_path ON code_imports(path);
CREATE INDEX IF NOT EXISTS code_imports_target ON code_imports(target);
CREATE TABLE IF NOT EXISTS code_modules(folder TEXT PRIMARY KEY, names TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS code_fts USING fts5(names, body, tokenize = "{CODE_TOKENIZE}");
{traps.TRAPS_SCHEMA}
{TERMS_SCHEMA}
"""


def record_modules(db: sqlite3.Connection, nested: dict[str, list[str]]) -> None:
    """The inner modules of the repository, after a row for the root that marks them as looked for."""
    db.execute("DELETE FROM code_modules")
    db.executemany("INSERT INTO code_modules(folder, names) VALUES (?, ?)",
                   [("", ""), *((folder, " ".join(names)) for folder, names in sorted(nested.items()))])


def code_diff(db: sqlite3.Connection, current: dict[str, tuple[int, int]]):
    """(known stamps, removed paths, changed paths) of the code tables against the files on disk."""
    known = {row[0]: (row[1], row[2]) for row in db.execute("SELECT path, mtime_ns, size FROM code_files")}
    removed = [p for p in known if p not in current]
    changed = sorted(p for p, stamp in current.items() if known.get(p) != stamp)
    return known, removed, changed


def refresh_code(db: sqlite3.Connection, repo: Path, *, progress=None, indexed=None, plan=None) -> dict[str, int]:
    """Bring the code tables (and the function tables with them) up to date with the files under ``repo``;
    return counts. A changed file is read once (see ``build.refresh``, which this is)."""
    from .build import refresh

    return refresh(db, repo, progress=progress, indexed=indexed, plan=plan)
