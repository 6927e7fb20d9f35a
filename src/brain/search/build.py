"""One pass of the code index build: per file, every row the code and function tables hold.

``index_file`` turns one file's text into those rows with one ``ast`` parse (shared by the
symbol table and the function index) and one tokenization (each line's tokens are computed
once; the file's full-text body and every definition's body are joins of them). It is pure,
so ``brain map`` runs it in the worker processes that already read each file for its card,
and the symbols the card extractor found (the tree-sitter languages) are reused instead of a
second parse. ``IndexWriter`` writes the rows in batches (``executemany``) with the ids the
one-row-at-a-time inserts gave, so the tables are the same whichever way they were built.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import fts_terms, traps
from .code import (CODE_SCHEMA, CODE_EXTENSIONS, FolderMarks, code_diff, extract, is_test_path, looks_generated, module_name_for, nested_modules,
                   parse_python, record_modules, scan_files, transaction, vendored_folders)
from .function_defs import MAX_CARD_FILE, extract_functions, from_symbols, has_extractor, python_functions
from .tokenize import token_text

__all__ = ["index_file", "index_read", "decode_source", "read_source", "text_crc", "IndexWriter", "Indexed", "FLUSH_FILES",
           "CodePlan", "plan_code", "restamp_same_text", "refresh", "paused_gc"]

FLUSH_FILES = 256  # files buffered before one executemany per table: bounds the memory of a big build
# more changed files than this (or none indexed yet): the full-text tables' terms are read once at the end of
# the build instead of cut again from each chunk's texts (search.fts_terms)
BULK_TERMS = 2000

# (doc, symbols, imports, generated mark, names tokens, body tokens, function rows or None)
Indexed = tuple


def decode_source(raw: bytes) -> str:
    """A file's bytes as the index reads its text: UTF-8 with replacement, universal newlines
    (what ``Path.read_text(encoding="utf-8", errors="replace")`` returns for the same bytes)."""
    text = raw.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_source(full: str) -> str:
    """The text of one source file (OSError when it cannot be read)."""
    with open(full, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def text_crc(text: str) -> int:
    """The checksum of the text a file's rows were made from (``code_files.crc``): a file whose stamp changed
    but whose text did not (a new worktree seeded with a sibling's index, a checkout or a tool that rewrote
    it) is restamped instead of indexed again. CRC-32 and not a cryptographic hash: it is compared only for
    one path at one size, where a changed text keeping both is a one in four billion chance, and a stale row
    costs a ranking, never data; zlib's CRC costs a few milliseconds for all of Django."""
    return zlib.crc32(text.encode("utf-8", errors="surrogatepass"))


def _card_defs(text: str, raw: bytes | None, card_facts: dict | None, card_max_bytes: int):
    """The definitions from the card extractor's symbols of the same bytes, or None to extract them anew.

    Only when the card read exactly the bytes the function index would hand its extractor (UTF-8
    without carriage returns, under both size bounds): then both runs see the same symbols."""
    if card_facts is None or raw is None or len(raw) > min(MAX_CARD_FILE, card_max_bytes) or b"\r" in raw:
        return None
    if text.encode("utf-8", errors="replace") != raw:
        return None
    try:
        return from_symbols(card_facts.get("symbols") or (), text)
    except (ValueError, RecursionError, MemoryError):
        return []


def index_file(text: str, path: str, lang: str, module: str, is_package: bool, *,
               raw: bytes | None = None, card_facts: dict | None = None, card_max_bytes: int = MAX_CARD_FILE,
               tree=None) -> Indexed:
    """Everything the code and function tables store for one (non-test) file, computed once (pure).

    ``raw`` and ``card_facts``: the file's bytes and what the card extractor made of them, when
    `brain map` has them (their symbols are the function index's definitions for the languages the
    cards read through tree-sitter); ``tree``: the text's Python syntax tree, when the card's parse made it."""
    if lang == "python" and tree is None:
        tree = parse_python(text)
    facts = extract(text, lang, module, is_package, tree=tree)
    names = " ".join([path, module, " ".join(sorted({s[0] for s in facts.symbols if s[1] != "inner"}))])
    defs = None
    if has_extractor(lang):
        if lang == "python":
            defs = python_functions(text, tree) if tree is not None else []
        else:
            defs = None if lang in ("ts", "js") else _card_defs(text, raw, card_facts, card_max_bytes)
            if defs is None:
                defs = extract_functions(text, lang, path)
    lines = text.splitlines()
    # a token never spans a line break (tokenize.WORD): the lines are cut at every definition's first and last
    # line, each piece tokenized once, and the file's body and each definition's body are joins of pieces
    cuts = {0, len(lines)}
    for d in defs or ():
        cuts.add(min(max(d.start - 1, 0), len(lines)))
        cuts.add(min(max(d.end, 0), len(lines)))
    cuts = sorted(cuts)
    piece_at: dict[int, int] = {}
    pieces: list[str] = []
    for a, b in zip(cuts, cuts[1:]):
        piece_at[a] = len(pieces)
        pieces.append(token_text("\n".join(lines[a:b])))
    piece_at[cuts[-1]] = len(pieces)
    body = " ".join(t for t in pieces if t)
    functions = None
    if defs is not None:
        functions = []
        for d in defs:
            first, last = min(max(d.start - 1, 0), len(lines)), min(max(d.end, 0), len(lines))
            text_of = " ".join(t for t in pieces[piece_at[first]: piece_at[last]] if t) if first < last else ""
            functions.append((d.qual, d.name, d.kind, d.start, d.end, d.body_start, int(d.exported), d.signature,
                              " ".join(d.bases), [(c.name, c.line, c.via) for c in d.calls], text_of))
    return (facts.doc, facts.symbols, list(dict.fromkeys(facts.imports)), looks_generated(text),
            token_text(names), body, functions)


def index_read(raw: bytes, path: str, lang: str, module: str, is_package: bool, *, card_facts: dict | None = None,
               card_max_bytes: int = MAX_CARD_FILE, tree=None) -> tuple:
    """``index_file`` of a file's bytes as `brain map`'s workers read them, with its trap facts as an eighth
    element (those of its first ``TRAP_HEAD`` bytes, what the build would otherwise read again: ``_head``) and
    its text's ``text_crc`` as a ninth."""
    text = decode_source(raw)
    item = index_file(text, path, lang, module, is_package, raw=raw, card_facts=card_facts,
                      card_max_bytes=card_max_bytes, tree=tree)
    return (*item, traps.read_facts(path, text if len(raw) <= TRAP_HEAD else decode_source(raw[:TRAP_HEAD])),
            text_crc(text))


class IndexWriter:
    """Buffered inserts into the code and function tables, inside the caller's transaction.

    Ids are given explicitly, from the largest in use: what SQLite assigns a row inserted without
    one, so a batched build and the old row-by-row one agree row for row."""

    def __init__(self, db, terms: bool = True) -> None:
        self.db = db
        self.terms = terms  # the written texts' terms added to fts_terms (a build of many reads them at its end)
        self.next_file = (db.execute("SELECT max(id) FROM code_files").fetchone()[0] or 0) + 1
        self.next_def = (db.execute("SELECT max(id) FROM fn_defs").fetchone()[0] or 0) + 1
        self.pending = 0
        self.functions = 0  # files written to the function index
        self._lists: dict[str, list] = {name: [] for name in _INSERTS}

    def add(self, path: str, stamp: tuple[int, int], module: str, lang: str, test: bool,
            item: Indexed | None, foreign: bool, crc: int | None = None) -> None:
        """One file: ``item`` is its ``index_file`` (None for a test file, listed but not read); ``crc`` the
        ``text_crc`` of the text it was made from."""
        rows = self._lists
        file_id = self.next_file
        self.next_file += 1
        mtime, size = stamp
        doc = item[0] if item is not None else ""
        rows["files"].append((file_id, path, mtime, size, module, lang, int(test), doc, int(foreign), crc))
        if item is not None:
            _doc, symbols, imports, _generated, names, body, functions = item
            rows["fts"].append((file_id, names, body))
            rows["symbols"].extend((path, n, n.lower(), k, q, ln) for n, k, q, ln in symbols)
            rows["imports"].extend((path, t) for t in imports)
            if functions is not None:
                self.functions += 1
                rows["fn_files"].append((path, mtime, size))
                for qual, name, kind, start, end, body_start, exported, signature, bases, calls, text in functions:
                    def_id = self.next_def
                    self.next_def += 1
                    rows["defs"].append((def_id, path, qual, name, name.lower(), kind, start, end, body_start, exported,
                                         signature, bases))
                    rows["calls"].extend((def_id, c_name, c_line, c_via) for c_name, c_line, c_via in calls)
                    rows["fn_fts"].append((def_id, text))
        self.pending += 1
        if self.pending >= FLUSH_FILES:
            self.flush()

    def flush(self) -> None:
        if self.terms:
            fts_terms.add_texts(self.db, "code", [(names, body) for _id, names, body in self._lists["fts"]])
            fts_terms.add_texts(self.db, "fn", [(text,) for _id, text in self._lists["fn_fts"]])
        for name, sql in _INSERTS.items():
            rows = self._lists[name]
            if rows:
                self.db.executemany(sql, rows)
                rows.clear()
        self.pending = 0


_INSERTS = {
    "files": "INSERT INTO code_files(id, path, mtime_ns, size, module, lang, is_test, doc, generated, crc) "
             "VALUES (?,?,?,?,?,?,?,?,?,?)",
    "fts": "INSERT INTO code_fts(rowid, names, body) VALUES (?, ?, ?)",
    "symbols": "INSERT INTO code_symbols(path, name, lname, kind, qual, line) VALUES (?,?,?,?,?,?)",
    "imports": "INSERT INTO code_imports(path, target) VALUES (?, ?)",
    "fn_files": "INSERT INTO fn_files(path, mtime_ns, size) VALUES (?,?,?)",
    "defs": "INSERT INTO fn_defs(id, path, qual, name, lname, kind, start, end, body_start, exported, signature, bases) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "calls": "INSERT INTO fn_calls(def_id, name, line, via) VALUES (?,?,?,?)",
    "fn_fts": "INSERT INTO fn_fts(rowid, body) VALUES (?, ?)",
}


@dataclass
class CodePlan:
    """What a refresh of the code tables has to do, worked out from the files' stamps before any is read."""

    repo: Path
    current: dict[str, tuple[int, int]]  # every source file -> (mtime_ns, size)
    removed: list[str]
    changed: list[str]  # sorted: the order the rows are written in
    package_dirs: set[str]
    marks: FolderMarks | None = None  # the walk's notes for vendored_folders
    described: dict = field(default_factory=dict, repr=False)  # path -> describe(path), worked out once

    @property
    def noop(self) -> bool:
        return not self.removed and not self.changed

    def describe(self, path: str) -> tuple[str, bool, str]:
        """(language, is a test, module name) of one source file (the read pass and the build both ask)."""
        got = self.described.get(path)
        if got is None:
            lang = CODE_EXTENSIONS[os.path.splitext(path)[1]]
            module = module_name_for(path, self.package_dirs) if lang == "python" else path.rsplit(".", 1)[0]
            got = self.described[path] = (lang, is_test_path(path), module)
        return got

    def reads(self) -> list[str]:
        """The changed files the build reads (test files are listed, never read)."""
        return [p for p in self.changed if not self.describe(p)[1]]


def plan_code(db: sqlite3.Connection, repo: Path) -> CodePlan:
    """The files that changed since the code tables were written: one walk of the tree, then a read of only
    the files whose stamp changed at the same size, to restamp those whose text did not (``restamp_same_text``)."""
    marks = FolderMarks()
    current = scan_files(repo, marks)
    known, removed, changed = code_diff(db, current)
    if known and changed:
        changed = restamp_same_text(db, repo, current, changed, known)
    package_dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in current if p.endswith("/__init__.py") or p == "__init__.py"}
    return CodePlan(repo, current, removed, changed, package_dirs, marks)


def restamp_same_text(db: sqlite3.Connection, repo: Path, current: dict[str, tuple[int, int]], changed: list[str],
                      known: dict[str, tuple[int, int]]) -> list[str]:
    """``changed`` without the files whose text is the one their rows were made from (same size, same
    ``text_crc``) and the test files (listed, never read): those get their new stamp in the code and function
    tables and are not indexed again.
    What makes many such files: a new worktree whose index was copied from a sibling's (every file is new
    to the file system, almost none to the index), a `git checkout` there and back, a formatter run."""
    again = [p for p in changed if p in known]
    if not again:
        return changed
    same, compare = [], []
    for i in range(0, len(again), 500):
        chunk = again[i: i + 500]
        for path, crc, test in db.execute(f"SELECT path, crc, is_test FROM code_files WHERE path IN "
                                          f"({','.join('?' * len(chunk))})", chunk):
            if test:
                same.append(path)  # a test file's row holds nothing read from it: its path decides it all
            elif crc is not None and known[path][1] == current[path][1]:
                compare.append((path, crc))
    for path, crc in compare:
        try:
            text = read_source(str(repo / path))
        except OSError:
            continue
        if text_crc(text) == crc:
            same.append(path)
    if not same:
        return changed
    with transaction(db):  # each only where the row still has the stamp compared (another refresh may have run)
        for table in ("code_files", "fn_files"):
            db.executemany(f"UPDATE {table} SET mtime_ns = ?, size = ? WHERE path = ? AND mtime_ns = ? AND size = ?",
                           [(*current[p], p, *known[p]) for p in same])
    done = set(same)
    return [p for p in changed if p not in done]


def _drop_rows(db: sqlite3.Connection, paths: list[str], functions: bool) -> None:
    """Delete every row of ``paths`` from the code tables (and the function tables), in chunks."""
    for i in range(0, len(paths), 500):
        chunk = paths[i: i + 500]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM code_fts WHERE rowid IN (SELECT id FROM code_files WHERE path IN ({marks}))", chunk)
        for table in ("code_files", "code_symbols", "code_imports"):
            db.execute(f"DELETE FROM {table} WHERE path IN ({marks})", chunk)
        if functions:
            ids = "SELECT id FROM fn_defs WHERE path IN ({})".format(marks)
            db.execute(f"DELETE FROM fn_fts WHERE rowid IN ({ids})", chunk)
            db.execute(f"DELETE FROM fn_calls WHERE def_id IN ({ids})", chunk)
            db.execute(f"DELETE FROM fn_defs WHERE path IN ({marks})", chunk)
            db.execute(f"DELETE FROM fn_files WHERE path IN ({marks})", chunk)


_UNREAD = ("", None)


def refresh(db: sqlite3.Connection, repo: Path, *, progress=None, indexed=None,
            plan: CodePlan | None = None) -> dict[str, int]:
    """Bring the code tables (and the function tables with them) up to date with the files under ``repo``;
    return counts.

    Each changed file is read once and indexed by ``build.index_file``. ``indexed``, when given, is an
    iterator of ``(path, rows)`` in path order that already holds the rows of some changed files (`brain
    map` computes them in its workers, from the same read as the card); the other files are read here.
    ``progress(done, total, what)`` is told how far the build is; ``plan`` is this ``plan_code``'s
    answer when the caller worked it out already."""
    if plan is None:
        plan = plan_code(db, repo)
    current = plan.current
    if plan.noop:
        if (repo / "go.mod").is_file() and db.execute("SELECT 1 FROM code_modules LIMIT 1").fetchone() is None:
            with transaction(db):  # an index built before inner modules were recorded
                record_modules(db, nested_modules(repo))
        return {"files": len(current), "changed": 0, "removed": 0}
    vendored = vendored_folders(repo, current, plan.marks)
    nested = nested_modules(repo)
    functions = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'fn_defs'").fetchone() is not None
    source = iter(indexed) if indexed is not None else iter(())
    with transaction(db):
        known, removed, changed = code_diff(db, current)  # again under the write lock: another thread or
        record_modules(db, nested)                        # process may have indexed these files meanwhile
        _drop_rows(db, removed + [p for p in changed if p in known], functions)
        bulk = not known or len(changed) > BULK_TERMS
        if bulk:
            fts_terms.unmark(db)  # its rows are written without their terms, which are read at the end
        # a build from nothing writes its rows first and sorts them into the secondary indexes once at the end
        # (cheaper than growing each B-tree row by row); any connection opening index.db meanwhile or after a
        # crash creates them again (the schema's IF NOT EXISTS)
        deferred = _secondary_indexes(functions) if not known and len(changed) >= FLUSH_FILES else []
        for name, _sql in deferred:
            db.execute(f"DROP INDEX IF EXISTS {name}")
    try:
        with paused_gc():
            written, read, trap_facts = _write_changed(db, repo, plan, changed, source, functions, vendored, progress,
                                                       not bulk)
    finally:
        if deferred:
            with transaction(db):
                for _name, sql in deferred:
                    db.execute(sql)
    if bulk:
        with transaction(db):
            fts_terms.fill(db)
    with transaction(db):
        traps.record(db, trap_facts, removed + changed, repo)  # copies and tool scripts: judged on the whole index
    if progress is not None:
        progress(len(changed), len(changed), "indexing the code")
    for _rest in source:  # what the caller computed beyond the last changed file (its side effects are its own)
        pass
    return {"files": len(current), "changed": len(changed), "removed": len(removed), "read": read, "functions": written}


def _write_changed(db: sqlite3.Connection, repo: Path, plan: CodePlan, changed: list[str], source, functions: bool,
                   vendored: set[str], progress, terms: bool = True) -> tuple[int, int, dict]:
    """Index and write the ``changed`` files, a chunk at a time: (files in the function index, files read,
    their trap facts)."""
    current = plan.current
    ahead: tuple | None = _UNREAD  # the source is first read when the first file is wanted (its pool starts then)
    total = len(changed)
    written = read = 0
    trap_facts: dict[str, list[tuple[str, str]]] = {}  # files read now -> their trap facts (banner, forward declarations)
    # one short write transaction per chunk of files: a big build never holds the write lock for long, so a
    # boot or a write meanwhile waits for one chunk, not for the whole build
    for start in range(0, total, FLUSH_FILES):
        if progress is not None:
            progress(start, total, "indexing the code")
        chunk = []
        for path in changed[start: start + FLUSH_FILES]:
            lang, test, module = plan.describe(path)
            item = text = facts = crc = None
            if not test:
                while ahead is _UNREAD or ahead is not None and ahead[0] < path:
                    ahead = next(source, None)
                if ahead is not None and ahead[0] == path:
                    item, facts = ahead[1], None
                    if len(item) > 7:  # the worker read the trap facts and the checksum from the same bytes
                        item, facts, crc = item[:7], item[7], item[8] if len(item) > 8 else None
                else:
                    try:
                        text = read_source(str(repo / path))
                    except OSError:
                        continue
                    item = index_file(text, path, lang, module, path.endswith("__init__.py"))
                    crc = text_crc(text)
                if not functions:
                    item = (*item[:6], None)
            foreign = item is not None and (item[3] or any(path.startswith(folder + "/") for folder in vendored))
            if item is not None:
                trap_facts[path] = (facts if facts is not None else
                                    traps.read_facts(path, text if text is not None else _head(repo, path)))
            read += item is not None
            chunk.append((path, module, lang, test, item, foreign, crc))
        with transaction(db):
            written += _write_chunk(db, chunk, current, functions, terms)
    return written, read, trap_facts


_INDEX_SQL = re.compile(r"CREATE INDEX IF NOT EXISTS (\w+) ON [^;]+;")


def _secondary_indexes(functions: bool) -> list[tuple[str, str]]:
    """(name, CREATE statement) of the code tables' secondary indexes (and the function tables', with ``functions``),
    as the schema spells them."""
    from .functions import FUNCTIONS_SCHEMA

    return [(m.group(1), m.group(0)) for m in _INDEX_SQL.finditer(CODE_SCHEMA + (FUNCTIONS_SCHEMA if functions else ""))]


@contextlib.contextmanager
def paused_gc():
    """The cyclic garbage collector paused for a bulk step: index rows are tens of thousands of young tuples
    and strings in no cycle, and each collection they trigger walks them, and the older heap, again
    (a worker's heap is its parent's, inherited). Nothing is left uncollected: it runs again after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _head(repo: Path, path: str) -> str:
    """The first TRAP_HEAD bytes of a file `brain map`'s workers indexed (they keep no text): enough for a
    generated banner and a forward-declaration header's declarations."""
    try:
        with open(repo / path, "rb") as handle:
            return decode_source(handle.read(TRAP_HEAD))
    except OSError:
        return ""


TRAP_HEAD = 256 * 1024


def _write_chunk(db: sqlite3.Connection, chunk: list, current: dict, functions: bool, terms: bool = True) -> int:
    """Write one chunk of indexed files (inside a transaction); files another refresh indexed meanwhile at
    their current stamp are left as it wrote them, older rows of the others dropped first."""
    paths = [row[0] for row in chunk]
    marks = ",".join("?" * len(paths))
    stamps = {path: (mtime, size) for path, mtime, size in
              db.execute(f"SELECT path, mtime_ns, size FROM code_files WHERE path IN ({marks})", paths)} if paths else {}
    _drop_rows(db, [p for p, stamp in stamps.items() if stamp != current[p]], functions)
    writer = IndexWriter(db, terms)
    for path, module, lang, test, item, foreign, crc in chunk:
        if stamps.get(path) == current[path]:
            continue
        writer.add(path, current[path], module, lang, test, item, foreign, crc)
    writer.flush()
    return writer.functions
