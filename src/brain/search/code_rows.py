"""The code view's file rows read on demand: the rows a task's evidence points at, not every row.

``CodeView`` used to read every ``code_files`` row and build four maps from them (path, module,
file name, stem) when it was made: 12 ms of CPU on a 20,000-file tree, for the few hundred files a
task boot's evidence then asks about. Here each map answers one question at a time from index.db
(memoized): a path through ``code_files``' unique index, a module through its module index, and a
file name or a stem through ``code_names``, rows derived from ``code_files`` and kept under the
code tables' key (``graph_store.graph_key``; decision 0037). When that key does not hold (an
index.db from before, or code changed since) the first name or stem question reads every row once,
answers from the maps as before, and stores the rows for the next boot. Iterating the files still
reads them all. Answers and their order are those of the maps built from every row (row order).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

__all__ = ["FileRows", "GeneratedFiles", "ModuleFiles", "NameFiles", "names_tables", "product_paths"]

NAMES_SCHEMA = """
CREATE TABLE IF NOT EXISTS code_names(id INTEGER NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL, lstem TEXT);
CREATE INDEX IF NOT EXISTS code_names_name ON code_names(name);
CREATE INDEX IF NOT EXISTS code_names_lstem ON code_names(lstem);
"""


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _lstem(path: str, is_test: bool) -> str | None:
    """The lower-case stem ``by_stem`` files a path under: product files only, never ``__init__``."""
    if is_test:
        return None
    stem = _name(path).rsplit(".", 1)[0]
    return None if stem == "__init__" else stem.lower()


class FileRows:
    """``path -> (module, is_test)`` over ``code_files``, read per path; iterating reads every row."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._memo: dict[str, tuple | None] = {}
        self._all: dict[str, tuple] | None = None  # path -> (module, is_test, generated, id), row order

    def row(self, path: str) -> tuple | None:
        if self._all is not None:
            return self._all.get(path)
        if path not in self._memo:
            r = self.db.execute("SELECT module, is_test, generated, id FROM code_files WHERE path = ?",
                                (path,)).fetchone()
            self._memo[path] = (r[0], bool(r[1]), bool(r[2]), r[3]) if r else None
        return self._memo[path]

    def prefetch(self, paths) -> None:
        """Read the rows of ``paths`` not read yet in one query per 500 (the answers ``row`` gives one by one)."""
        if self._all is not None:
            return
        wanted = [p for p in dict.fromkeys(paths) if isinstance(p, str) and p not in self._memo]
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            for path in chunk:
                self._memo[path] = None
            for path, module, test, generated, rowid in self.db.execute(
                    f"SELECT path, module, is_test, generated, id FROM code_files WHERE path IN ({','.join('?' * len(chunk))})",
                    chunk):
                self._memo[path] = (module, bool(test), bool(generated), rowid)

    @property
    def loaded(self) -> bool:
        """Whether every row has been read (then a question costs a dict look-up, not a query)."""
        return self._all is not None

    def in_folder(self, folder: str) -> list[str]:
        """The paths directly inside ``folder`` (not below it), sorted: one range query on the path index
        instead of every row (the boot's files beside a top one ask about five folders, not the tree)."""
        if self._all is not None or not folder:
            return sorted(p for p in self.every() if p.rpartition("/")[0] == folder)
        prefix = folder + "/"
        found = []
        for path, module, test, generated, rowid in self.db.execute(
                "SELECT path, module, is_test, generated, id FROM code_files WHERE path >= ? AND path < ?",
                (prefix, folder + chr(ord("/") + 1))):
            self._memo[path] = (module, bool(test), bool(generated), rowid)
            if "/" not in path[len(prefix):]:
                found.append(path)
        return sorted(found)

    def every(self) -> dict[str, tuple]:
        """Every row, in row order (read once)."""
        if self._all is None:
            self._all = {path: (module, bool(test), bool(generated), rowid) for rowid, path, module, test, generated
                         in self.db.execute("SELECT id, path, module, is_test, generated FROM code_files")}
        return self._all

    def get(self, path: str, default=None):
        r = self.row(path)
        return (r[0], r[1]) if r is not None else default

    def __getitem__(self, path: str) -> tuple[str, bool]:
        r = self.row(path)
        if r is None:
            raise KeyError(path)
        return r[0], r[1]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.row(path) is not None

    def __iter__(self):
        return iter(self.every())

    def __len__(self) -> int:
        return len(self.every())

    def items(self):
        return [(path, (r[0], r[1])) for path, r in self.every().items()]


class GeneratedFiles:
    """The files written by a tool or copied from another project, as a set asked per path."""

    def __init__(self, rows: FileRows) -> None:
        self._rows = rows

    def __contains__(self, path: object) -> bool:
        r = self._rows.row(path) if isinstance(path, str) else None
        return bool(r and r[2])

    def __iter__(self):
        return iter([path for path, r in self._rows.every().items() if r[2]])


class ModuleFiles:
    """``module -> its first product file`` in row order (a test file never stands for a module)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._memo: dict = {}

    def get(self, module, default=None):
        if module not in self._memo:
            r = self.db.execute("SELECT path FROM code_files WHERE module IS ? AND NOT COALESCE(is_test, 0) "
                                "ORDER BY id LIMIT 1", (module,)).fetchone()
            self._memo[module] = r[0] if r else None
        found = self._memo[module]
        return default if found is None else found

    def prefetch(self, modules) -> None:
        """Answer ``modules`` not asked yet in one query per 500 (the first product file of each, in row order)."""
        wanted = [m for m in dict.fromkeys(modules) if isinstance(m, str) and m not in self._memo]
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            found: dict[str, str] = {}
            for module, path in self.db.execute(
                    f"SELECT module, path FROM code_files WHERE module IN ({','.join('?' * len(chunk))}) "
                    "AND NOT COALESCE(is_test, 0) ORDER BY id", chunk):
                found.setdefault(module, path)
            for module in chunk:
                self._memo[module] = found.get(module)


class NameFiles:
    """``file name -> its files`` (``column="name"``) or ``lower-case stem -> product files``
    (``"lstem"``), in row order, from ``code_names`` while its rows hold (``names_tables``)."""

    def __init__(self, view, column: str) -> None:
        self._view, self._column = view, column
        self._memo: dict[str, list[str]] = {}

    def get(self, key: str, default=None):
        if key not in self._memo:
            maps = self._view._name_maps()
            if maps is not None:
                found = maps[self._column].get(key, [])
            else:
                found = [r[0] for r in self._view.db.execute(
                    f"SELECT path FROM code_names WHERE {self._column} = ? ORDER BY id", (key,))]
            self._memo[key] = found
        return self._memo[key] or default

    def __getitem__(self, key: str) -> list[str]:
        return self.get(key, [])

    def prefetch(self, keys) -> None:
        """Answer ``keys`` not asked yet in one query per 500 (each one's files in row order, as ``get``)."""
        wanted = [k for k in dict.fromkeys(keys) if isinstance(k, str) and k not in self._memo]
        if not wanted or self._view._name_maps() is not None:
            return
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            found: dict[str, list[str]] = {k: [] for k in chunk}
            for key, path in self._view.db.execute(
                    f"SELECT {self._column}, path FROM code_names WHERE {self._column} IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY id", chunk):
                found[key].append(path)
            self._memo.update(found)


def names_tables(db: sqlite3.Connection, rows: FileRows, key: str | None) -> dict[str, dict] | None:
    """None when ``code_names`` holds for ``key`` (ask it); else the maps built from every row, which
    are then stored for the next view (a busy or read-only index keeps nothing)."""
    if key is not None:
        try:
            got = db.execute("SELECT value FROM meta WHERE key = 'code_names'").fetchone()
            if got is not None and got[0] == key:
                db.execute("SELECT 1 FROM code_names LIMIT 1").fetchall()
                return None
        except sqlite3.Error:
            pass
    maps: dict[str, dict] = {"name": defaultdict(list), "lstem": defaultdict(list)}
    stored = []
    for path, (_, test, _, rowid) in rows.every().items():
        name, lstem = _name(path), _lstem(path, test)
        maps["name"][name].append(path)
        if lstem is not None:
            maps["lstem"][lstem].append(path)
        stored.append((rowid, path, name, lstem))
    if key is not None:
        from .graph_store import replace_rows

        replace_rows(db, NAMES_SCHEMA, "code_names", "id, path, name, lstem", stored, key)
    return maps


def product_paths(db: sqlite3.Connection, glob: str | None = None, *, python: bool = True) -> list[str]:
    """Product (not test) file paths in row order, optionally matching ``glob`` (case-sensitive) and
    without Python files (``python=False``): what ``module_keys`` and ``rust_crates`` walk."""
    sql = "SELECT path FROM code_files WHERE NOT COALESCE(is_test, 0)"
    args: list = []
    if glob is not None:
        sql += " AND path GLOB ?"
        args.append(glob)
    if not python:
        sql += " AND path NOT GLOB '*.py' AND path NOT GLOB '*.pyi'"
    return [r[0] for r in db.execute(sql + " ORDER BY id", args)]

