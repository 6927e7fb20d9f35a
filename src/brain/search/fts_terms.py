"""The words the code and function full-text tables hold, kept beside them, so a query leaves out those no row holds.

A task boot's BM25 queries (``FunctionView.bm25``, ``CodeView.bm25``) are one phrase per word of the task,
OR-ed, and FTS5's cost grows with the phrases of the query, absent ones included: for every matching row
it looks at every phrase for each instance of each (its instance list is sorted by scanning all phrases).
On Django 4.2 about one phrase in eight names a word no function body holds. Such a phrase matches no row
and adds exactly 0.0 to every row's score (its frequency is 0 in every row; the other phrases' IDF, the row
count and the average length are the table's), so leaving it out changes no row, no score and no order.

``fts_terms(tbl, term)`` holds every term FTS5 cut from the texts written to ``code_fts`` (``tbl`` "code")
and ``fn_fts`` ("fn"), cut by a temporary FTS5 table with the same tokenizer (the same cut, not a copy of
it in Python). It is a superset: a deleted row's terms stay, so only "not in the table" is used ("this word
is absent"), never "in the table". Its row ``("*", "")`` says the table is complete; a query leaves words
out only then. A write of a few files adds their terms in its own transaction; a build of many clears the
mark first and, at its end, reads every term of both tables (``fts5vocab``) and sets it again (`brain map`
sets it too when it is missing, as after an interrupted build).
"""

from __future__ import annotations

import contextlib
import sqlite3

__all__ = ["TERMS_SCHEMA", "add_texts", "fill", "unmark", "absent", "plain", "complete", "snapshot"]

TERMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS fts_terms(tbl TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY (tbl, term)) WITHOUT ROWID;
"""
_COMPLETE = ("*", "")  # the row saying every term of both tables is in fts_terms
_TABLES = {"code": ("code_fts", ("names", "body")), "fn": ("fn_fts", ("body",))}
# both tables cut with "unicode61 remove_diacritics 0 tokenchars '_./-:'": a word of only these characters
# is one token, itself (lower-case ASCII letters and digits are token characters and are not folded)
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_./-:")


def plain(word: str) -> bool:
    """Whether FTS5 reads the phrase ``"word"`` as the one term ``word`` (so the table can say it is absent)."""
    return bool(word) and word.isascii() and _PLAIN.issuperset(word)


def _tokenize(tbl: str) -> str:
    from .code import CODE_TOKENIZE
    from .functions import FN_TOKENIZE

    return {"code": CODE_TOKENIZE, "fn": FN_TOKENIZE}[tbl]


def add_texts(db: sqlite3.Connection, tbl: str, rows: list[tuple[str, ...]]) -> None:
    """Add the terms of ``rows`` (the column values written to table ``tbl``), inside the writer's transaction."""
    if not rows or not _kept(db):
        return
    columns = _TABLES[tbl][1]
    scratch = f"fts_terms_{tbl}"
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{scratch} USING fts5({', '.join(columns)}, "
               f"tokenize = \"{_tokenize(tbl)}\", content = '', detail = none)")
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{scratch}_vocab USING fts5vocab(temp, {scratch}, 'row')")
    db.executemany(f"INSERT INTO temp.{scratch}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)
    db.execute(f"INSERT OR IGNORE INTO fts_terms(tbl, term) SELECT ?, term FROM temp.{scratch}_vocab", (tbl,))
    db.execute(f"INSERT INTO temp.{scratch}({scratch}) VALUES ('delete-all')")


def _kept(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'fts_terms'").fetchone() is not None


@contextlib.contextmanager
def snapshot(db: sqlite3.Connection):
    """One read transaction around a query and the terms it was trimmed by (unless one is open already): a
    refresh committing between them could add rows holding a word the terms read before did not have."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        if db.in_transaction:
            db.execute("COMMIT")


def unmark(db: sqlite3.Connection) -> None:
    """The table no longer says it is complete (a big build writes rows without their terms)."""
    if _kept(db):
        db.execute("DELETE FROM fts_terms WHERE tbl = ? AND term = ?", _COMPLETE)


def fill(db: sqlite3.Connection) -> None:
    """Every term of both tables added (``fts5vocab``: 0.1 s for Django's), then the table marked complete."""
    if not _kept(db):
        return
    for tbl, (table, _columns) in _TABLES.items():
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None:
            continue
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms_{tbl}_all USING fts5vocab(main, {table}, 'row')")
        db.execute(f"INSERT OR IGNORE INTO fts_terms(tbl, term) SELECT ?, term FROM temp.fts_terms_{tbl}_all", (tbl,))
    db.execute("INSERT OR IGNORE INTO fts_terms(tbl, term) VALUES (?, ?)", _COMPLETE)


def complete(db: sqlite3.Connection) -> bool:
    try:
        return db.execute("SELECT 1 FROM fts_terms WHERE tbl = ? AND term = ?", _COMPLETE).fetchone() is not None
    except sqlite3.OperationalError:
        return False


def absent(db: sqlite3.Connection, tbl: str, words: list[str]) -> set[str]:
    """The plain ``words`` no row of table ``tbl`` holds, as the kept terms say (nothing when they are not
    complete). Read in the caller's snapshot: call it inside the read transaction of the query it trims."""
    asked = sorted({w for w in words if plain(w)})
    if not asked:
        return set()
    try:
        rows = db.execute(f"SELECT term FROM fts_terms WHERE tbl = ? AND term IN ({','.join('?' * len(asked))}) "
                          "UNION ALL SELECT NULL FROM fts_terms WHERE tbl = ? AND term = ?",
                          (tbl, *asked, *_COMPLETE)).fetchall()
    except sqlite3.OperationalError:
        return set()
    held = {r[0] for r in rows}
    if None not in held:
        return set()  # not complete: nothing can be said absent
    return set(asked) - held
