"""The resolved import graph kept in index.db as indexed rows, read back one file at a time.

A task boot asks the graph about a handful of files (the best-ranked ones and their neighbours),
but the graph used to be kept as one JSON value (``meta`` row ``import_graph``) that every boot
parsed whole and turned into two maps: 9 ms of CPU on a 20,000-file tree, growing with the
repository. Kept as rows of ``code_graph(src, dst)`` with an index on each column, a boot reads
only the edges of the files it asks about. The rows hold while ``meta`` row ``code_graph`` equals
the key of the code tables they were resolved from (see ``graph_key``; ``code_rows`` keeps its
file-name rows under the same key); a stale or missing key
means the caller resolves the graph again and stores it here (decision 0037). Older brains keep
their own JSON row and never read these rows: both can use one index.db.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

__all__ = ["graph_key", "stored_graph", "store_graph", "replace_rows", "StoredEdges"]

GRAPH_ROWS_SCHEMA = """
CREATE TABLE IF NOT EXISTS code_graph(src TEXT NOT NULL, dst TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS code_graph_src ON code_graph(src);
CREATE INDEX IF NOT EXISTS code_graph_dst ON code_graph(dst);
"""
_RULES_HASH: str | None = None  # of the resolution code: a change of its rules is a change of the graph


def _rules_hash() -> str:
    global _RULES_HASH
    if _RULES_HASH is None:
        # the interpreter's SHA-256 (decision 0038): the same digest without OpenSSL's import, on a boot
        from ..memory.files import content_hash

        rules = b"".join(Path(__file__).with_name(name).read_bytes() for name in ("codeview.py", "graph_store.py", "code_rows.py"))
        _RULES_HASH = content_hash(rules)[:16]
    return _RULES_HASH


def graph_key(db: sqlite3.Connection) -> str | None:
    """What the resolved graph depends on: every file row's stamp and module, the inner modules, and
    the resolution code itself; None when the tables cannot be read."""
    try:
        files = db.execute("SELECT COUNT(*), MAX(id), SUM(mtime_ns % 4294967296), SUM(size), "
                           "SUM(LENGTH(module) + is_test + 2 * generated) FROM code_files").fetchone()
        try:
            modules = db.execute("SELECT COUNT(*), GROUP_CONCAT(folder || ':' || names, '|') "
                                 "FROM code_modules").fetchone()
        except sqlite3.OperationalError:
            modules = None
    except sqlite3.Error:
        return None
    return json.dumps([list(files), list(modules) if modules else None, _rules_hash()])


class StoredEdges:
    """``path -> set of paths`` along one direction of the stored graph, read per path on first ask.

    Answers as the ``defaultdict(set)`` the graph is resolved into: ``get`` gives ``default`` for a
    file without edges, ``[]`` an empty set; ``items`` reads every row (tests, not boots)."""

    def __init__(self, db: sqlite3.Connection, by: str, other: str) -> None:
        self._db, self._by, self._other = db, by, other
        self._memo: dict[str, set[str]] = {}

    def get(self, path: str, default=None):
        found = self._memo.get(path)
        if found is None:
            found = self._memo[path] = {r[0] for r in self._db.execute(
                f"SELECT {self._other} FROM code_graph WHERE {self._by} = ?", (path,))}
        return found if found else default

    def __getitem__(self, path: str) -> set[str]:
        return self.get(path, set())

    def __contains__(self, path: str) -> bool:
        return self.get(path) is not None

    def items(self):
        whole: dict[str, set[str]] = {}
        for key, value in self._db.execute(f"SELECT {self._by}, {self._other} FROM code_graph"):
            whole.setdefault(key, set()).add(value)
        return whole.items()


def stored_graph(db: sqlite3.Connection, key: str | None) -> tuple[StoredEdges, StoredEdges] | None:
    """(forward, backward) over the stored rows when they were resolved under ``key``, else None."""
    if key is None:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'code_graph'").fetchone()
        if row is None or row[0] != key:
            return None
        db.execute("SELECT 1 FROM code_graph LIMIT 1").fetchall()  # the table is there (a damaged file is not)
    except sqlite3.Error:
        return None
    return StoredEdges(db, "src", "dst"), StoredEdges(db, "dst", "src")


def store_graph(db: sqlite3.Connection, key: str | None, forward: dict[str, set[str]]) -> None:
    """Keep the graph for the next boot (``replace_rows``)."""
    if key is not None:
        rows = [(src, dst) for src, hits in sorted(forward.items()) for dst in sorted(hits)]
        replace_rows(db, GRAPH_ROWS_SCHEMA, "code_graph", "src, dst", rows, key)


def replace_rows(db: sqlite3.Connection, schema: str, table: str, columns: str, rows: list[tuple], key: str) -> None:
    """Replace every row of derived ``table`` and note ``key`` (``meta`` row named after the table), in
    one transaction; a busy or read-only index keeps nothing (a boot never waits for a writer)."""
    marks = ", ".join("?" * len(columns.split(",")))
    try:
        db.execute("PRAGMA busy_timeout = 0")
        try:
            db.executescript(schema)
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(f"DELETE FROM {table}")
                db.executemany(f"INSERT INTO {table}({columns}) VALUES ({marks})", rows)
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (table, key))
                db.execute("COMMIT")
            except sqlite3.Error:
                db.execute("ROLLBACK")
                raise
        finally:
            db.execute("PRAGMA busy_timeout = 30000")  # the connection's own (SearchIndex._open)
    except sqlite3.Error:
        pass
