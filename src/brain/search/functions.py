"""The function index: every function, method and class of the source, with its line range and calls.

The file ranking (``locate``) says which files a task is about; this index is what lets
the boot go one level down, to the definitions inside them and to the code they call.
What a definition holds and how each language's are found is ``function_defs``; test
files are left out: they are never the code a task asks to change.

Stored in index.db beside the code tables, in tables of its own (``fn_*``), and
refreshed from ``code_files``: a file is re-read when its size or modification time
differs from the stamp recorded here, so the index follows ``refresh_code`` without a
second walk of the tree. ``FunctionView`` is the ranking's read-only view of it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from collections.abc import Iterable

from ..records import field, record
from .function_defs import (KINDS, Call, FunctionDef, extract_functions, from_symbols, has_extractor,
                            python_functions, register_extractor)
from .tokenize import token_text

__all__ = ["FunctionDef", "Call", "FUNCTIONS_SCHEMA", "extract_functions", "python_functions", "from_symbols",
           "register_extractor", "refresh_functions", "FunctionView", "DefRow", "KINDS", "has_extractor"]


# -- storage ---------------------------------------------------------------------------

FN_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_./-:'"
FUNCTIONS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS fn_files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS fn_defs(id INTEGER PRIMARY KEY, path TEXT, qual TEXT, name TEXT, lname TEXT, kind TEXT,
    start INTEGER, end INTEGER, body_start INTEGER, exported INTEGER, signature TEXT, bases TEXT);
CREATE INDEX IF NOT EXISTS fn_defs_path ON fn_defs(path);
CREATE INDEX IF NOT EXISTS fn_defs_lname ON fn_defs(lname);
CREATE TABLE IF NOT EXISTS fn_calls(def_id INTEGER, name TEXT, line INTEGER, via TEXT);
CREATE INDEX IF NOT EXISTS fn_calls_def ON fn_calls(def_id);
CREATE INDEX IF NOT EXISTS fn_calls_name ON fn_calls(name);
CREATE VIRTUAL TABLE IF NOT EXISTS fn_fts USING fts5(body, tokenize = "{FN_TOKENIZE}");
"""


def _drop(db: sqlite3.Connection, path: str) -> None:
    ids = [r[0] for r in db.execute("SELECT id FROM fn_defs WHERE path = ?", (path,))]
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM fn_fts WHERE rowid IN ({marks})", chunk)
        db.execute(f"DELETE FROM fn_calls WHERE def_id IN ({marks})", chunk)
    db.execute("DELETE FROM fn_defs WHERE path = ?", (path,))
    db.execute("DELETE FROM fn_files WHERE path = ?", (path,))


def _functions_diff(db: sqlite3.Connection):
    """(wanted, known, removed, changed): the fn_* tables against ``code_files``."""
    wanted = {path: (mtime, size, lang) for path, mtime, size, lang in db.execute(
        "SELECT path, mtime_ns, size, lang FROM code_files WHERE is_test = 0") if has_extractor(lang)}
    known = {path: (mtime, size) for path, mtime, size in db.execute("SELECT path, mtime_ns, size FROM fn_files")}
    removed = [p for p in known if p not in wanted]
    changed = sorted(p for p, (mtime, size, _) in wanted.items() if known.get(p) != (mtime, size))
    return wanted, known, removed, changed


def refresh_functions(db: sqlite3.Connection, repo: Path) -> dict[str, int]:
    """Bring the fn_* tables in step with ``code_files`` (run after ``refresh_code``); return counts."""
    from .code import transaction
    from .fts_terms import add_texts

    wanted, known, removed, changed = _functions_diff(db)
    if not removed and not changed:
        return {"files": len(wanted), "changed": 0, "removed": 0}
    with transaction(db):
        wanted, known, removed, changed = _functions_diff(db)  # again under the write lock (another thread's refresh)
        for path in removed + [p for p in changed if p in known]:
            _drop(db, path)
        bodies: list[tuple[str]] = []  # their terms go to fts_terms (search.fts_terms)
        for path in changed:
            mtime, size, lang = wanted[path]
            try:
                text = (repo / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = text.splitlines()
            db.execute("INSERT INTO fn_files(path, mtime_ns, size) VALUES (?,?,?)", (path, mtime, size))
            for d in extract_functions(text, lang, path):
                cur = db.execute("INSERT INTO fn_defs(path, qual, name, lname, kind, start, end, body_start, exported, "
                                 "signature, bases) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                 (path, d.qual, d.name, d.name.lower(), d.kind, d.start, d.end, d.body_start,
                                  int(d.exported), d.signature, " ".join(d.bases)))
                db.executemany("INSERT INTO fn_calls(def_id, name, line, via) VALUES (?,?,?,?)",
                               [(cur.lastrowid, c.name, c.line, c.via) for c in d.calls])
                body = token_text("\n".join(lines[d.start - 1 : d.end]))
                db.execute("INSERT INTO fn_fts(rowid, body) VALUES (?, ?)", (cur.lastrowid, body))
                bodies.append((body,))
        add_texts(db, "fn", bodies)
    return {"files": len(wanted), "changed": len(changed), "removed": len(removed)}


class _Parent:
    """``DefRow.parent``, worked out on a row's first read of it and kept in the row (the rankings read it
    some 10,000 times a task boot, 3,000-odd rows). Not a field: a non-data descriptor, so the kept value
    is a plain instance attribute, and equality, hashing and repr see the fields only (a row's qual is
    never changed after it is read)."""

    def __get__(self, row, owner=None):
        if row is None:
            return self
        qual = row.qual
        parent = row.__dict__["parent"] = qual.rsplit(".", 1)[0] if "." in qual else ""
        return parent


@record
class DefRow:
    """One stored definition, as the ranking reads it."""

    id: int
    path: str
    qual: str
    name: str
    kind: str
    start: int
    end: int
    body_start: int
    exported: bool
    signature: str
    bases: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.path}::{self.qual}"

    parent = _Parent()  # str: the enclosing class's (or function's) qualified name, "" at top level


_DEF_COLUMNS = "id, path, qual, name, kind, start, end, body_start, exported, signature, bases"


def _row(r) -> DefRow:
    return DefRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9], tuple((r[10] or "").split()))


@record
class FunctionView:
    """Read-only lookups over the fn_* tables (one per ranking)."""

    db: sqlite3.Connection
    _by_path: dict[str, list[DefRow]] = field(default_factory=dict)
    _by_id: dict[int, DefRow] = field(default_factory=dict)  # every row read (the same values each time)

    @property
    def empty(self) -> bool:
        return self.db.execute("SELECT 1 FROM fn_defs LIMIT 1").fetchone() is None

    def in_file(self, path: str) -> list[DefRow]:
        if path not in self._by_path:
            rows = self._by_path[path] = [_row(r) for r in self.db.execute(
                f"SELECT {_DEF_COLUMNS} FROM fn_defs WHERE path = ? ORDER BY start, qual", (path,))]
            for row in rows:
                self._by_id.setdefault(row.id, row)
        return self._by_path[path]

    def named(self, names: Iterable[str]) -> dict[str, list[DefRow]]:
        """lowercased name -> definitions with that name (exact, case-insensitive)."""
        names = sorted({n.lower() for n in names})
        found: dict[str, list[DefRow]] = {}
        for i in range(0, len(names), 500):
            chunk = names[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(f"SELECT {_DEF_COLUMNS}, lname FROM fn_defs WHERE lname IN ({marks})", chunk):
                found.setdefault(r[11], []).append(_row(r))
        return found

    def count_named(self, lname: str) -> int:
        return self.db.execute("SELECT count(*) FROM fn_defs WHERE lname = ?", (lname,)).fetchone()[0]

    def by_ids(self, ids: Iterable[int]) -> dict[int, DefRow]:
        ids = sorted(set(ids))
        known = self._by_id
        out: dict[int, DefRow] = {}
        missing = [i for i in ids if i not in known]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(f"SELECT {_DEF_COLUMNS} FROM fn_defs WHERE id IN ({marks})", chunk):
                known[r[0]] = _row(r)
        for i in ids:
            row = known.get(i)
            if row is not None:
                out[i] = row
        return out

    def calls_of(self, def_ids: Iterable[int]) -> dict[int, list[Call]]:
        ids = sorted(set(def_ids))
        out: dict[int, list[Call]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for def_id, name, line, via in self.db.execute(
                    f"SELECT def_id, name, line, via FROM fn_calls WHERE def_id IN ({marks}) ORDER BY def_id, line, name",
                    chunk):
                out.setdefault(def_id, []).append(Call(name, line, via))
        return out

    def callers_of(self, names: Iterable[str]) -> dict[str, list[tuple[int, Call]]]:
        """The call sites naming each of ``names``: ``name -> [(calling definition's id, call)]``."""
        wanted = sorted(set(names))
        out: dict[str, list[tuple[int, Call]]] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for def_id, name, line, via in self.db.execute(
                    f"SELECT def_id, name, line, via FROM fn_calls WHERE name IN ({marks}) ORDER BY name, def_id, line",
                    chunk):
                out.setdefault(name, []).append((def_id, Call(name, line, via)))
        return out

    def bm25(self, terms: list[str], limit: int = 200) -> list[tuple[int, float]]:
        """Definition ids ranked by BM25 over their bodies (identifier-aware tokens), best first."""
        from .fts_terms import absent, snapshot

        terms = [t for t in dict.fromkeys(terms) if len(t) > 1][:200]
        if not terms:
            return []
        try:
            with snapshot(self.db):
                # a word no body holds adds 0.0 to every score and matches nothing: left out (search.fts_terms)
                gone = absent(self.db, "fn", terms)
                query = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms if t not in gone)
                if not query:
                    return []
                rows = self.db.execute("SELECT rowid, bm25(fn_fts) AS s FROM fn_fts WHERE fn_fts MATCH ? ORDER BY s "
                                       "LIMIT ?", (query, limit)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [(rowid, -score) for rowid, score in rows]
