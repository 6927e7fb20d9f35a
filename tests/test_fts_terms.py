"""The kept terms of the code and function full-text tables (``search.fts_terms``): a query leaves out the words no
row holds, and answers exactly as the whole query would, before and after any refresh."""

from __future__ import annotations

import os
import sqlite3

from brain.search import fts_terms
from brain.search.code import CODE_SCHEMA, refresh_code
from brain.search.functions import FUNCTIONS_SCHEMA, FunctionView, refresh_functions
from test_index_build import make_project, write


def _vocab(db: sqlite3.Connection, table: str) -> set[str]:
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table} USING fts5vocab(main, {table}, 'row')")
    return {r[0] for r in db.execute(f"SELECT term FROM temp.v_{table}")}


def _kept(db: sqlite3.Connection, tbl: str) -> set[str]:
    return {r[0] for r in db.execute("SELECT term FROM fts_terms WHERE tbl = ?", (tbl,))}


WORDS = [
    ["order", "total", "price", "nowhere_in_the_code", "line", "retry", "place_order", "zzzz"],
    ["add", "cache", "main", "helper", "absentword", "get", "fetch", "client"],
    ["Order", "a.b", "caf\xe9", "x-y", "price", "unit_price", "qty", "nothing_here", "windows", "orders"],
    ["priced", "ordering", "caches", "helpers", "fetched", "missing_words", "lines"],
    ["only_absent_one", "another_absent"],
]


def _answers(index) -> list:
    view = index.code_view()
    fview = FunctionView(index.db)
    out = []
    for words in WORDS:
        out.append(fview.bm25(words, 300))
        for stems in (False, True, "absent", "only-absent"):
            out.append(view.bm25(words, 60, stems=stems))
            out.append(view.bm25(words, 60, stems=stems, body_only=True))
        out.append([view._has_term(w) for w in words])
    return out


def test_a_map_keeps_every_term_of_both_tables_and_marks_them_complete(brain):
    make_project(brain.repo, copies=2)
    brain.map()
    db = brain.index.db
    assert fts_terms.complete(db)
    for tbl, table in (("fn", "fn_fts"), ("code", "code_fts")):
        vocab = _vocab(db, table)
        assert vocab and vocab <= _kept(db, tbl)


def test_trimmed_queries_answer_as_the_whole_queries(brain):
    """With the terms marked complete the absent words are left out; unmarked, every word is asked: the same rows,
    scores and order either way (an absent phrase adds 0.0 to every score and matches nothing)."""
    make_project(brain.repo, copies=3)
    brain.map()
    db = brain.index.db
    assert fts_terms.complete(db)
    assert fts_terms.absent(db, "fn", ["order", "nowhere_in_the_code", "Order", "caf\xe9"]) == {"nowhere_in_the_code"}
    trimmed = _answers(brain.index)
    assert any(trimmed[0]) and any(trimmed[1])
    db.execute("BEGIN IMMEDIATE")
    fts_terms.unmark(db)
    db.execute("COMMIT")
    assert not fts_terms.complete(db) and fts_terms.absent(db, "fn", ["nowhere_in_the_code"]) == set()
    assert _answers(brain.index) == trimmed


def test_a_word_a_later_refresh_adds_is_found(brain):
    make_project(brain.repo)
    brain.map()
    db = brain.index.db
    assert fts_terms.absent(db, "fn", ["quuxified_total"]) == {"quuxified_total"}
    assert FunctionView(db).bm25(["quuxified_total"]) == []
    write(brain.repo, "app0/later.py", "def later(order):\n    quuxified_total = order.total\n    return quuxified_total\n")
    write(brain.repo, "app0/util.py", "def price(line):\n    return line.qty * line.zorbly_rate\n")
    os.utime(brain.repo / "app0/util.py", ns=(1, 1))
    brain.index.refresh_code()  # as a task boot brings the index up to date: a write of a few files
    assert fts_terms.complete(db)
    assert fts_terms.absent(db, "fn", ["quuxified_total", "zorbly_rate"]) == set()
    ids = [i for i, _ in FunctionView(db).bm25(["quuxified_total", "nowhere_else"])]
    assert [r[0] for r in db.execute(f"SELECT qual FROM fn_defs WHERE id IN ({','.join(map(str, ids))})")] == ["later"]
    assert [p for p, _ in brain.index.code_view().bm25(["zorbly_rate"])] == ["app0/util.py"]
    assert _vocab(db, "fn_fts") <= _kept(db, "fn") and _vocab(db, "code_fts") <= _kept(db, "code")


def test_a_build_of_many_files_unmarks_then_marks_and_a_map_heals_an_unfinished_one(brain, monkeypatch):
    from brain.search import build

    make_project(brain.repo, copies=2)
    monkeypatch.setattr(build, "BULK_TERMS", 3)  # the second refresh below changes more files than this
    brain.map()
    db = brain.index.db
    assert fts_terms.complete(db)
    for n in range(2):
        write(brain.repo, f"app{n}/util.py", f"def price(line):\n    return line.qty * line.glimmer_{n}\n")
        write(brain.repo, f"app{n}/more.py", f"def more_{n}():\n    return 'flarp'\n")
    brain.index.refresh_code()
    assert fts_terms.complete(db) and fts_terms.absent(db, "fn", ["glimmer_0", "glimmer_1", "more_1"]) == set()
    db.execute("BEGIN IMMEDIATE")
    fts_terms.unmark(db)  # as a build stopped before its end leaves it
    db.execute("COMMIT")
    assert [p for p, _ in brain.index.code_view().bm25(["glimmer_1"])] == ["app1/util.py"]
    brain.map()
    assert fts_terms.complete(db)


def test_the_function_index_catching_up_adds_its_terms():
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(CODE_SCHEMA + FUNCTIONS_SCHEMA)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        make_project(repo)
        refresh_code(db, repo)
        assert fts_terms.complete(db)
        db.execute("DELETE FROM fts_terms WHERE tbl = 'fn'")
        db.execute("DELETE FROM fn_files")  # the function tables behind the code tables: refresh_functions reads again
        refresh_functions(db, repo)
        assert _vocab(db, "fn_fts") <= _kept(db, "fn")
