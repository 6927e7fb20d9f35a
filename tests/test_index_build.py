"""The code index `brain map` builds in its read pass is the index the task boot built before, row for row.

The reference here is the build as it was before the one-pass build (one file at a time: read,
``extract``, ``token_text`` of the file and of every definition's lines, one INSERT per row), written
out plainly; the tables of the one-pass build, serial and in `brain map`'s worker processes, must equal
it, ids included. After `brain map`, a task boot has nothing left to index.
"""

from __future__ import annotations

import io
import os
import sqlite3
import time
import zlib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from brain.search.code import (CODE_EXTENSIONS, CODE_SCHEMA, extract, is_test_path, looks_generated, module_name_for,
                               nested_modules, refresh_code, scan_files, vendored_folders)
from brain.search.functions import FUNCTIONS_SCHEMA, extract_functions, has_extractor, refresh_functions
from brain.search.progress import DelayedProgress
from brain.search.tokenize import token_text, tokens

TABLES = ["code_files", "code_symbols", "code_imports", "code_modules", "code_fts", "fn_files", "fn_defs", "fn_calls",
          "fn_fts"]


def reference_build(db: sqlite3.Connection, repo: Path) -> None:
    """The code and function tables as the row-by-row build wrote them (into empty tables)."""
    current = scan_files(repo)
    package_dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in current if p.endswith("__init__.py")}
    vendored = vendored_folders(repo, current)
    db.execute("INSERT INTO code_modules(folder, names) VALUES ('', '')")
    db.executemany("INSERT INTO code_modules(folder, names) VALUES (?, ?)",
                   [(f, " ".join(n)) for f, n in sorted(nested_modules(repo).items())])
    texts = {}
    for path in sorted(current):
        mtime, size = current[path]
        lang = CODE_EXTENSIONS[os.path.splitext(path)[1]]
        test = is_test_path(path)
        module = module_name_for(path, package_dirs) if lang == "python" else path.rsplit(".", 1)[0]
        facts, text = extract("", "none"), None
        if not test:
            text = texts[path] = (repo / path).read_text(encoding="utf-8", errors="replace")
            facts = extract(text, lang, module, path.endswith("__init__.py"))
        foreign = text is not None and (looks_generated(text) or any(path.startswith(f + "/") for f in vendored))
        crc = None if text is None else zlib.crc32(text.encode("utf-8"))  # the text the rows were made from
        cur = db.execute("INSERT INTO code_files(path, mtime_ns, size, module, lang, is_test, doc, generated, crc) "
                         "VALUES (?,?,?,?,?,?,?,?,?)",
                         (path, mtime, size, module, lang, int(test), facts.doc, int(foreign), crc))
        if text is None:
            continue
        names = " ".join([path, module, " ".join(sorted({s[0] for s in facts.symbols if s[1] != "inner"}))])
        db.execute("INSERT INTO code_fts(rowid, names, body) VALUES (?, ?, ?)",
                   (cur.lastrowid, token_text(names), token_text(text)))
        for n, k, q, ln in facts.symbols:
            db.execute("INSERT INTO code_symbols(path, name, lname, kind, qual, line) VALUES (?,?,?,?,?,?)",
                       (path, n, n.lower(), k, q, ln))
        for target in dict.fromkeys(facts.imports):
            db.execute("INSERT INTO code_imports(path, target) VALUES (?, ?)", (path, target))
    for path in sorted(texts):
        lang = CODE_EXTENSIONS[os.path.splitext(path)[1]]
        if not has_extractor(lang):
            continue
        text = texts[path]
        lines = text.splitlines()
        mtime, size = current[path]
        db.execute("INSERT INTO fn_files(path, mtime_ns, size) VALUES (?,?,?)", (path, mtime, size))
        for d in extract_functions(text, lang, path):
            cur = db.execute("INSERT INTO fn_defs(path, qual, name, lname, kind, start, end, body_start, exported, "
                             "signature, bases) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             (path, d.qual, d.name, d.name.lower(), d.kind, d.start, d.end, d.body_start,
                              int(d.exported), d.signature, " ".join(d.bases)))
            for c in d.calls:
                db.execute("INSERT INTO fn_calls(def_id, name, line, via) VALUES (?,?,?,?)",
                           (cur.lastrowid, c.name, c.line, c.via))
            db.execute("INSERT INTO fn_fts(rowid, body) VALUES (?, ?)",
                       (cur.lastrowid, token_text("\n".join(lines[d.start - 1: d.end]))))


def fresh_db(path: Path | str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(str(path), isolation_level=None)
    db.executescript(CODE_SCHEMA + FUNCTIONS_SCHEMA)
    return db


def dump(db: sqlite3.Connection) -> dict[str, list]:
    return {table: db.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall() for table in TABLES}


def write(repo: Path, rel: str, text: str | bytes) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def make_project(repo: Path, copies: int = 1) -> None:
    """A small multi-language project: Python packages with classes, nested and decorated functions, Go,
    Rust, C, TypeScript, JavaScript, a shell script, tests, a generated file, vendored code, CRLF line ends,
    a latin-1 file, a file that does not parse."""
    for n in range(copies):
        top = f"app{n}"
        write(repo, f"{top}/__init__.py", '"""The app."""\nfrom .models import Order\n')
        write(repo, f"{top}/models.py", (
            '"""Orders and their lines."""\nimport json\nfrom . import util\n\n\n'
            "def cached(fn):\n    return fn\n\n\n"
            "class Order(Base):\n    '''An order.'''\n    total = 0\n\n    @cached\n"
            "    def add(self, line):\n        self.lines.append(line)\n        return util.price(line) + self.total\n\n"
            "    def _helper(self):\n        def inner():\n            return json.dumps(self.total)\n"
            "        return inner()\n\n\n"
            "def place_order(items, *, retry=3):\n    order = Order()\n    for item in items:\n"
            "        order.add(item)\n    return order\n"))
        write(repo, f"{top}/util.py", "def price(line):\n    return line.qty * line.unit_price  # parseHTTPResponse\n")
        write(repo, f"{top}/crlf.py", b"def windows(a):\r\n    return a.strip()\r\n\r\nclass Crlf:\r\n    pass\r\n")
        write(repo, f"{top}/latin.py", "# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n".encode("latin-1"))
        write(repo, f"{top}/broken.py", "def broken(:\n    pass\nclass Still: pass\n")
        write(repo, f"{top}/gen.py", "# Code generated by protoc. DO NOT EDIT.\nX = 1\n")
        write(repo, f"tests/test_{top}.py", "def test_order():\n    assert True\n")
        write(repo, f"svc{n}/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(helper(1))\n}\n\n"
                                       "func helper(x int) int {\n\treturn x + 1\n}\n")
        write(repo, f"svc{n}/lib.rs", "pub struct Cache { size: usize }\n\nimpl Cache {\n    pub fn get(&self) -> usize {\n"
                                      "        self.size\n    }\n}\n")
        write(repo, f"native{n}/buf.c", "#include \"buf.h\"\n\nint buf_len(struct buf *b) {\n    return b->len;\n}\n")
        write(repo, f"native{n}/buf.h", "struct buf { int len; };\nint buf_len(struct buf *b);\n")
        write(repo, f"web{n}/api.ts", "export class Client {\n  fetch(url: string): string {\n    return get(url);\n  }\n}\n"
                                      "export const get = (u: string) => u.trim();\n")
        write(repo, f"web{n}/legacy.js", "function old(a) {\n  return a.map(x => x * 2);\n}\nmodule.exports = { old };\n")
        write(repo, f"web{n}/app.test.js", "test('x', () => {});\n")
        write(repo, f"scripts/run{n}.sh", "#!/bin/sh\nrun_all() {\n  echo go\n}\n")
    write(repo, "third_party/lib/vend.py", "def vendored():\n    return 1\n")


@pytest.fixture
def project(brain):
    make_project(brain.repo, copies=1)
    return brain


def test_one_pass_build_equals_the_row_by_row_build(project, tmp_path):
    reference = fresh_db()
    reference_build(reference, project.repo)
    built = fresh_db()
    stats = refresh_code(built, project.repo)
    assert stats["changed"] == len(scan_files(project.repo)) and stats["functions"] > 5
    expected = dump(reference)
    assert expected["fn_defs"] and expected["code_fts"], "the project indexes nothing: the comparison would be empty"
    assert dump(built) == expected
    assert refresh_functions(built, project.repo)["changed"] == 0  # the function tables followed in the same pass


def test_a_new_stamp_on_the_same_text_restamps_and_reads_nothing_to_index(project):
    """What a worktree seeded with a sibling's index meets: every file new to the file system, none to the index."""
    db = fresh_db()
    refresh_code(db, project.repo)
    files = scan_files(project.repo)
    later = time.time_ns() + 10**10
    for path in files:
        os.utime(project.repo / path, ns=(later, later))
    stats = refresh_code(db, project.repo)
    assert stats["changed"] == 0 and stats["removed"] == 0  # restamped: nothing indexed again
    fresh = fresh_db()
    refresh_code(fresh, project.repo)
    assert dump(db) == dump(fresh)  # the restamped rows equal a build from nothing of the same files

    edited = sorted(p for p in files if p.endswith("models.py"))[0]
    text = (project.repo / edited).read_text()
    same_size = text.replace("class ", "klass ", 1)
    assert same_size != text and len(same_size) == len(text)
    (project.repo / edited).write_text(same_size)
    os.utime(project.repo / edited, ns=(later + 10**9, later + 10**9))
    stats = refresh_code(db, project.repo)
    assert stats["changed"] == 1 and stats["read"] == 1  # a new text at the same size is indexed again
    assert refresh_code(db, project.repo)["changed"] == 0


def test_brain_map_workers_build_the_same_index(brain, monkeypatch):
    from brain.cards import mapper

    make_project(brain.repo, copies=12)  # about 200 source files: the parallel read pass runs
    monkeypatch.setattr(mapper, "PARALLEL_MIN_FILES", 20)
    report = brain.map()
    assert report.index is not None and report.index["changed"] == len(scan_files(brain.repo))
    assert report.index["graph"] in ("full", "links")
    reference = fresh_db()
    reference_build(reference, brain.repo)
    assert dump(brain.index.db) == dump(reference)
    again = brain.map()  # nothing changed: nothing indexed
    assert again.index["changed"] == 0 and again.index["removed"] == 0 and again.index["graph"] == "none"


def test_map_json_says_what_was_indexed_and_the_task_boot_has_nothing_left(project):
    env = {**os.environ}
    run = lambda *a: subprocess.run([sys.executable, "-m", "brain", *a], cwd=project.repo, capture_output=True,
                                    text=True, env=env)
    import json

    out = run("map", "--json")
    assert out.returncode == 0, out.stderr
    index = json.loads(out.stdout)["index"]
    assert index["files"] == index["changed"] == len(scan_files(project.repo)) and index["functions"] >= 10
    from brain.search.build import plan_code

    assert plan_code(project.index.db, project.repo).noop
    boot = run("boot", "--task", "place_order retries Order.add", "--json")
    assert boot.returncode == 0 and "code index" not in boot.stderr
    assert "app0/models.py" in json.loads(boot.stdout)["text"]
    assert run("map", "--check", "--json").returncode == 0


def test_incremental_refresh_equals_a_fresh_build(project):
    db = fresh_db()
    refresh_code(db, project.repo)
    repo = project.repo
    write(repo, "app0/util.py", "def price(line, tax=0):\n    return round(line.qty * (1 + tax))\n")
    os.utime(repo / "app0/util.py", ns=(1, 1))  # a new stamp even within the clock's resolution
    (repo / "web0/legacy.js").unlink()
    write(repo, "app0/extra.py", "class Extra:\n    def more(self):\n        return self.less()\n")
    stats = refresh_code(db, repo)
    assert stats["changed"] == 2 and stats["removed"] == 1
    fresh = fresh_db()
    refresh_code(fresh, repo)
    by_path = "SELECT path, {} FROM {} ORDER BY path, {}"
    for table, columns in (("code_files", "mtime_ns, size, module, lang, is_test, doc, generated"),
                           ("code_symbols", "name, kind, qual, line"), ("code_imports", "target"),
                           ("fn_defs", "qual, kind, start, end, signature"), ("fn_files", "mtime_ns, size")):
        query = by_path.format(columns, table, columns)
        assert db.execute(query).fetchall() == fresh.execute(query).fetchall(), table
    bodies = ("SELECT d.path, d.qual, f.body FROM fn_defs d JOIN fn_fts f ON f.rowid = d.id ORDER BY d.path, d.qual, "
              "d.start")
    assert db.execute(bodies).fetchall() == fresh.execute(bodies).fetchall()
    assert db.execute("SELECT count(*) FROM fn_calls WHERE def_id NOT IN (SELECT id FROM fn_defs)").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM code_fts").fetchone() == fresh.execute("SELECT count(*) FROM code_fts").fetchone()


def test_progress_is_silent_when_quick_and_says_how_far_when_not():
    quiet = io.StringIO()
    progress = DelayedProgress("updating the code index", quiet, delay=3600)
    for done in range(0, 101, 10):
        progress(done, 100, "indexing the code")
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    progress = DelayedProgress("updating the code index", loud, delay=0, every=0)
    progress(10, 100, "indexing the code")
    progress(100, 100, "indexing the code")
    lines = loud.getvalue().splitlines()
    assert lines[0].startswith("brain: updating the code index: 10/100 files") and "100 files in" in lines[-1]


def test_refresh_reports_progress_to_the_end(project):
    seen = []
    refresh_code(fresh_db(), project.repo, progress=lambda done, total, what: seen.append((done, total)))
    total = len(scan_files(project.repo))
    assert seen[0] == (0, total) and seen[-1] == (total, total)


def test_a_refresh_meanwhile_is_kept_and_nothing_is_written_twice(project, tmp_path):
    """The build commits chunk by chunk (never holding the write lock for long): files another process indexed
    between two chunks stay as it wrote them."""
    path = tmp_path / "index.db"
    ours, theirs = fresh_db(path), sqlite3.connect(str(path), isolation_level=None, timeout=30)

    def meanwhile():
        refresh_code(theirs, project.repo)  # runs after our first transaction, before our first chunk
        yield from ()

    refresh_code(ours, project.repo, indexed=meanwhile())
    reference = fresh_db()
    reference_build(reference, project.repo)
    assert dump(ours) == dump(reference)


def test_a_damaged_index_never_costs_the_map_its_cards(project):
    assert project.map().index["changed"] > 0
    for path in project.runtime.glob("index.db*"):
        path.unlink()
    (project.runtime / "index.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)  # a header over garbage
    project._index = None
    report = project.map(force=True)
    assert report.written and not report.errors
    assert "damaged" in report.index["error"] and "next search or task boot" in report.index["error"]
    found = project.locate("place_order retries Order.add")  # the next task boot heals the index
    assert any(f.path == "app0/models.py" for f in found.files)


@given(st.lists(st.sampled_from(list("aZ9_./-:\u00e9 \t\n(),'\"#@") + ["self.", "__init__", "getHTTPResponse"]),
                max_size=40).map("".join))
@example("a._b a..b -x_ __ _ x.__init__.y 1.5e-3 é_x")
@example("café = getHTTPResponse(x)\n\nself.__init__.y = a.b_c\n  naïve.x_y é\n")  # ASCII lines beside others
@settings(max_examples=400, deadline=None)
def test_token_text_is_the_join_of_the_tokens(text):
    """The index's fast path for ASCII text (runs of word bytes, cached; a text with other characters takes it
    for its ASCII lines) stores exactly what the tokens say."""
    assert token_text(text) == " ".join(tokens(text))
    assert token_text(text) == token_text(text)  # cached the second time: the same


def test_map_leaves_the_memory_and_code_text_in_one_segment_and_every_answer_the_same(brain, monkeypatch):
    """FTS5 writes a segment per transaction; `brain map` merges the memory and code-file tables into one (a
    task boot's queries read every segment): the rows and BM25 scores of any query are the same."""
    from brain.search.index import MERGED_TABLES, SearchIndex

    make_project(brain.repo, copies=6)
    for i in range(6):
        brain.write(f"notes/n{i}.md", f"# Note {i}\n\nThe order total and the price of line {i}, retry place_order.\n")
    monkeypatch.setattr(SearchIndex, "merge_segments", lambda self: None)
    brain.map()
    db = brain.index.db

    def segments(table):
        return db.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]

    assert segments("docs_fts") > 1  # the notes and cards, each indexed in its own transaction
    terms = ["order", "total", "price", "line", "retry", "place_order", "add", "cache", "note", "main", "nothing"]
    queries = [(f"SELECT rowid, bm25({t}) FROM {t} WHERE {t} MATCH ? ORDER BY 2, 1", q)
               for t in (*MERGED_TABLES, "fn_fts") for q in [*(f'"{w}"' for w in terms), " OR ".join(f'"{w}"' for w in terms),
                                                             '"order" AND "total"', '"pri"*']]
    before = [db.execute(sql, (q,)).fetchall() for sql, q in queries]
    assert any(before)
    monkeypatch.undo()
    brain.index.merge_segments()
    assert [segments(t) for t in MERGED_TABLES] == [1, 1]
    assert [db.execute(sql, (q,)).fetchall() for sql, q in queries] == before
    changes = db.total_changes
    brain.index.merge_segments()  # already one segment each: nothing written, no write lock taken
    assert db.total_changes == changes
    brain.write("notes/later.md", "# Later\n\norder\n")  # a write after it adds its own segment, as before
    brain.map()  # and the next map merges again
    assert [segments(t) for t in MERGED_TABLES] == [1, 1]
