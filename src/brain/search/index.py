"""The derived search index: ``runtime/index.db``, rebuildable from the files at any time.

One SQLite database holds three derived things: the memory documents (every
markdown store under ``.brain/`` and the decision records) in an FTS5 table, the
code tables (files, symbols, imports, and their FTS5 table; see ``code``), and the
graph (see ``graph``). Nothing in it is canonical: deleting ``runtime/`` loses
nothing, ``refresh`` brings it up to date incrementally (memory by content hash,
code by size and modification time) and ``rebuild`` starts from an empty file.
Tokens are computed in Python (``tokenize``) because this SQLite cannot load a
custom tokenizer; the FTS5 tables only split on spaces.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import sqlite3
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..backends.sqlite import is_corruption, sqlite_file_problem
from ..memory.files import pid_alive, read_memory_file, read_regular_file
from ..trees import walk as walk_tree
from ..memory.paths import has_link_between, is_plain_memory_name
from ..memory.private import ensure_private_dir, precreate_private
from .code import CODE_SCHEMA, refresh_code
from .tokenize import FTS_TOKENIZE, index_extra, query_terms, tokens

__all__ = ["SearchIndex", "SearchHit", "kind_of", "MEMORY_KINDS", "INDEX_FILE", "snippet", "is_corruption",
           "sqlite_file_problem"]  # the last two re-exported from brain.backends.sqlite

INDEX_FILE = "index.db"
SCHEMA_VERSION = "12"  # bump when tokens or tables change: an older index is rebuilt
MEMORY_KINDS = ("now", "focus", "note", "workflow", "card", "decision", "handoff", "contract", "profile", "memory")
SNIPPET_CHARS = 240

DOCS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY, path TEXT UNIQUE, kind TEXT, title TEXT, hash TEXT);
CREATE TABLE IF NOT EXISTS doc_stamps(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(title, body, extra, tokenize = "{FTS_TOKENIZE}");
-- title: the title and path; body: the raw text; extra: the same with identifiers split (tokenize.index_extra)
"""


# per-term document counts of the FTS tables, so a query can start from its rarest words
VOCAB_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS code_vocab USING fts5vocab(code_fts, 'row');
"""
UNION_DOCS = 3000  # a fallback union ranks at most about this many documents
# a query ranks at most this many matches, the most recently indexed (highest rowid: a rewritten note is
# re-inserted, so it counts as new): FTS5 computes BM25 for every match before LIMIT, so a common word made
# a search's cost grow with the number of notes (docs/search.md, "Ranking a bounded candidate set")
CANDIDATES = UNION_DOCS


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of the main file: changed by a checkpoint, a rebuild or an outside write.

    Writes go to the WAL, so this moves rarely. A connection whose file moved under it is reopened
    before the next operation: its page cache could otherwise keep answering from a file that was
    overwritten, and the damage would never be found (nor healed)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class _Held:
    """One thread's connection, closed under the shared index lock when the last holder lets go.

    Closing the last connection to a file that is still in place checkpoints it and deletes its
    WAL and shared memory *by name*. Were that to happen just after a swap (``_swap_in``) and after
    another thread opened the new file, it would delete the new file's WAL and shared memory, and
    the next connection would read frames that are not there (SQLITE_IOERR_SHORT_READ). So the
    close is explicit (a connection's statement cache is a reference cycle: dropping it would close
    it at some later collection) and locked. A ``CodeView`` of an earlier call holds the holder too,
    so a thread that reopens (the file moved: often this process's own checkpoint) never closes a
    connection under a reader's feet."""

    __slots__ = ("db", "_lock")

    def __init__(self, db: sqlite3.Connection, lock) -> None:
        self.db = db
        self._lock = lock

    def __del__(self) -> None:
        db, self.db = self.db, None
        if db is None:
            return
        try:
            with self._lock(exclusive=False):
                db.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown, runtime/ removed: close without the lock
            with contextlib.suppress(Exception):
                db.close()


def _inode(path: Path) -> int | None:
    stamp = _stamp(path)
    return stamp[0] if stamp else None


def kind_of(path: str) -> str:
    """The memory kind of a path relative to .brain/ (decision records may live elsewhere)."""
    top = path.split("/", 1)[0]
    return {
        "now.md": "now", "focus.md": "focus", "notes": "note", "workflows": "workflow", "modules": "card",
        "decisions": "decision", "decisions.md": "decision", "handoffs": "handoff", "contracts": "contract",
        "agents": "profile", "@decisions": "decision",
    }.get(top, "memory")


def _title(path: str, text: str) -> str:
    """The first markdown heading within the first 20 lines, else the path."""
    if text.startswith("#"):
        line = text.split("\n", 1)[0]
        return line.lstrip("#").strip()[:120] or path
    for line in text.split("\n", 20)[:20]:
        if line.startswith("#"):
            return line.lstrip("#").strip()[:120]
    return path


def snippet(text: str, query: set[str], width: int = SNIPPET_CHARS) -> str:
    """The most query-dense line of ``text`` with what follows, at most ``width`` characters."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    best, best_score = 0, 0
    for i, line in enumerate(lines[:2000]):
        low = line.lower()
        got = sum(1 for q in query if q in low)  # substring test: cheap, and good enough to pick a line
        if got > best_score:
            best, best_score = i, got
    out = lines[best]
    j = best + 1
    while len(out) < width and j < len(lines):
        out += " / " + lines[j]
        j += 1
    out = re.sub(r"\s+", " ", out)
    return out if len(out) <= width else out[: width - 1].rstrip() + "…"


@dataclass(frozen=True)
class SearchHit:
    path: str
    kind: str
    title: str
    snippet: str
    score: float

    def to_dict(self) -> dict:
        return {"path": self.path, "kind": self.kind, "title": self.title, "snippet": self.snippet,
                "score": round(self.score, 4)}


class SearchIndex:
    """The index of one brain. Opened lazily; every method is safe on a missing file."""

    def __init__(self, brain_dir: Path, repo: Path, runtime: Path, decisions_dir: str | None = None) -> None:
        self.brain_dir = brain_dir
        self.repo = repo
        self.path = runtime / INDEX_FILE
        self.decisions_dir = decisions_dir
        self._local = threading.local()  # one connection per thread (the web UI searches from a pool)
        self._generation = 0  # bumped when a heal replaces a damaged file: every thread then reopens
        self._heal_lock = threading.Lock()
        self._lock_path = self.path.with_name(INDEX_FILE + ".lock")

    # -- connection ----------------------------------------------------------------
    @property
    def exists(self) -> bool:
        return self.path.is_file()

    @property
    def _db(self) -> sqlite3.Connection | None:
        held = getattr(self._local, "held", None)
        return held.db if held is not None else None

    @_db.setter
    def _db(self, value: sqlite3.Connection | None) -> None:
        self._local.held = _Held(value, self._file_lock) if value is not None else None  # the old one closes
        self._local.generation = self._generation

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            ensure_private_dir(self.path.parent)
            if os.path.lexists(self.path) and not os.path.isfile(self.path) or os.path.islink(self.path):
                from ..errors import DamagedStore

                raise DamagedStore(str(self.path), "search index", "not a regular file",
                                   f"remove it (`rm -r {self.path}`), then `brain index --rebuild` (it is derived: "
                                   "nothing is lost)")
            for _attempt in (1, 2):
                with self._file_lock(exclusive=False):  # no swap (see _swap_in) between opening and stamping
                    db = self._open()
                    if db is not None:
                        self._db = db
                        self._local.stamp = _stamp(self.path)
                        self._local.inode = self._local.stamp[0] if self._local.stamp else None
                        return db
                self._swap_in(None)  # an index of another schema version: start from an empty file
            from ..errors import DamagedStore

            raise DamagedStore(str(self.path), "search index", "another brain version keeps writing its own schema",
                               "stop the other brain (or upgrade it), then `brain index --rebuild`")
        return self._db

    @contextlib.contextmanager
    def _file_lock(self, *, exclusive: bool):
        """``runtime/index.db.lock``: shared while a connection is opened, exclusive while the file is swapped.

        Openers in any thread or process never see the moment when the WAL and shared-memory files
        are gone but the database is not yet replaced: a connection opened then would create them
        for the old file, and the new file's connections would share them (seen as "disk I/O error"
        and a bus error from a truncated mapping)."""
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _open(self) -> sqlite3.Connection | None:
        """A connection with the current schema, or None when the file holds another schema version."""
        from .functions import FUNCTIONS_SCHEMA
        from .graph import GRAPH_SCHEMA

        # check_same_thread off: a view handed to another thread, or a thread's storage freed
        # elsewhere, may be the last holder, and then closes it (each thread still opens its own)
        precreate_private(self.path)  # 0600, and so its -wal and -shm files (SQLite copies the mode)
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            try:
                version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            except sqlite3.OperationalError:
                version = None
            if version is not None and version[0] != SCHEMA_VERSION:
                db.close()
                return None
            db.executescript(DOCS_SCHEMA + CODE_SCHEMA + GRAPH_SCHEMA + VOCAB_SCHEMA + FUNCTIONS_SCHEMA)
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
            return db
        except BaseException:
            db.close()  # a damaged file fails here: keep no handle on it (it is replaced next)
            raise

    def close(self) -> None:
        """Let go of this thread's connection: closed now, or when a code view still reading it goes."""
        self._db = None

    def _swap_in(self, built: Path | None) -> None:
        """Put the finished file ``built`` in place of the index (or, with None, remove the index).

        The old file's WAL and shared memory go first, then the database is replaced in one rename,
        all under the exclusive lock. Connections still open on the old file keep reading it; each
        thread reopens before its next operation (``reopen_if_replaced`` sees the new inode)."""
        with self._file_lock(exclusive=True):
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(self.path) + suffix)
            if built is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
            else:
                os.replace(built, self.path)

    def _build_fresh(self) -> tuple[Path, dict]:
        """A complete index built beside this one (``index.db.rebuild-PID-THREAD``), checkpointed into one file."""
        for old in self.path.parent.glob(INDEX_FILE + ".rebuild-*"):
            pid = old.name[len(INDEX_FILE + ".rebuild-"):].split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    old.unlink()  # left by a rebuild that was killed
        builder = SearchIndex(self.brain_dir, self.repo, self.path.parent, self.decisions_dir)
        builder.path = self.path.with_name(f"{INDEX_FILE}.rebuild-{os.getpid()}-{threading.get_ident()}")
        try:
            stats = builder.refresh()
            builder.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except BaseException:
            builder.close()
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(builder.path) + suffix)
            raise
        builder.close()  # the last connection: its WAL and shared memory are removed
        return builder.path, stats

    # -- memory documents ----------------------------------------------------------
    def _memory_roots(self) -> list[tuple[str, Path]]:
        roots = [("", self.brain_dir)]
        if self.decisions_dir:
            folder = Path(os.path.normpath(self.repo / self.decisions_dir))  # lexical: links are not followed
            if (folder.is_dir() and folder != self.brain_dir / "decisions"
                    and not has_link_between(self.repo, folder)):
                roots.append(("@decisions/", folder))
        return roots

    def _walk_memory(self) -> tuple[dict[str, tuple[str, int, int]], list[str]]:
        """Every markdown store (relative path -> its path, size and mtime) and the folders holding them
        (for the cheap change check). One lstat a file, which also tells a link: a no-op `brain index`
        at 50,000 notes is this walk."""
        found: dict[str, tuple[str, int, int]] = {}
        folders: list[str] = []
        for prefix, root in self._memory_roots():
            if os.path.islink(root):
                continue  # a linked decisions folder is never read (a cloned repository may carry one)
            for folder, dirs, names in walk_tree(root):  # never descends into linked folders (nor too deep)
                rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
                rel_dir = "" if rel_dir == "." else rel_dir + "/"
                dirs[:] = [] if prefix else sorted(  # the decisions folder is read flat
                    d for d in dirs if is_plain_memory_name(d) and not os.path.islink(os.path.join(folder, d))
                    and not (rel_dir == "" and d.casefold() == "runtime"))
                folders.append(folder)
                contracts = prefix == "" and rel_dir == "contracts/"
                for name in names:
                    if not (name.endswith(".md") or (contracts and name.endswith(".yml"))):
                        continue  # brain.local.yml and every other setting file included: never indexed
                    if not is_plain_memory_name(name):
                        continue
                    path = os.path.join(folder, name)
                    try:
                        st = os.lstat(path)
                    except OSError:
                        continue  # removed while listed
                    if not stat.S_ISLNK(st.st_mode):  # a link is never followed nor read
                        found[prefix + rel_dir + name] = (path, st.st_size, st.st_mtime_ns)
        return found, folders

    def memory_files(self) -> dict[str, Path]:
        """Every markdown store: .brain/**/*.md (runtime excluded), contracts, and the decision records folder."""
        return {rel: Path(path) for rel, (path, _, _) in sorted(self._walk_memory()[0].items())}

    def _fingerprint(self, folders: list[str]) -> str:
        """Folder mtimes (a file added, removed or atomically replaced changes them) and top-level file stamps."""
        parts = []
        for folder in folders:
            try:
                parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
            except OSError:
                parts.append(f"{folder}:-")
        for name in ("now.md", "focus.md", "decisions.md"):
            try:
                st = os.stat(self.brain_dir / name)
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        return "\n".join(parts)

    def _memory_unchanged(self) -> bool:
        row = self.db.execute("SELECT value FROM meta WHERE key='memory_folders'").fetchone()
        if not row:
            return False
        folders = row[0].split("\n") if row[0] else []
        known = self.db.execute("SELECT value FROM meta WHERE key='memory_fingerprint'").fetchone()
        return bool(known) and known[0] == self._fingerprint(folders)

    def _fingerprint_is(self, folders: list[str]) -> bool:
        """Whether the cheap change check already holds these folders and their current stamps."""
        rows = dict(self.db.execute(
            "SELECT key, value FROM meta WHERE key IN ('memory_folders', 'memory_fingerprint')"))
        return (rows.get("memory_folders") == "\n".join(folders)
                and rows.get("memory_fingerprint") == self._fingerprint(folders))

    def _remember_fingerprint(self, folders: list[str]) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_folders', ?)", ("\n".join(folders),))
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_fingerprint', ?)",
                        (self._fingerprint(folders),))

    def _put_doc(self, rel: str, text: str) -> bool:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        row = self.db.execute("SELECT hash FROM docs WHERE path = ?", (rel,)).fetchone()
        if row and row[0] == digest:
            return False
        self._drop_doc(rel)
        kind, title = kind_of(rel), _title(rel, text)
        cur = self.db.execute("INSERT INTO docs(path, kind, title, hash) VALUES (?,?,?,?)", (rel, kind, title, digest))
        head = f"{title} {rel}"
        self.db.execute("INSERT INTO docs_fts(rowid, title, body, extra) VALUES (?,?,?,?)",
                        (cur.lastrowid, head, text, index_extra(head + "\n" + text)))
        return True

    def _drop_doc(self, rel: str) -> None:
        row = self.db.execute("SELECT id FROM docs WHERE path = ?", (rel,)).fetchone()
        if row:
            self.db.execute("DELETE FROM docs_fts WHERE rowid = ?", (row[0],))
            self.db.execute("DELETE FROM docs WHERE id = ?", (row[0],))

    def update_memory(self, rel: str) -> None:
        """Re-index one memory path after a write (the Brain.on_write listener)."""
        path = self.brain_dir / rel
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            data = read_memory_file(self.brain_dir, rel)
            if data is not None:
                text = data.decode("utf-8", errors="replace")
                self._put_doc(rel, text)
                st = path.stat()
                db.execute("INSERT OR REPLACE INTO doc_stamps(path, size, mtime_ns) VALUES (?,?,?)",
                           (rel, st.st_size, st.st_mtime_ns))
            else:
                self._drop_doc(rel)
                db.execute("DELETE FROM doc_stamps WHERE path = ?", (rel,))
            row = db.execute("SELECT value FROM meta WHERE key='memory_folders'").fetchone()
            if row:  # this write moved its folder's mtime: keep the cheap check valid
                folders = row[0].split("\n") if row[0] else []
                if str(path.parent) in folders or not path.exists():
                    self._remember_fingerprint(folders)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if getattr(self._local, "graph_deferred", False):
            return  # noted in graph_pending: the caller brings the graph up to date once, at its end
        from .graph import update_graph  # its own links and the links naming it (a card: the whole graph)

        update_graph(self)

    @contextlib.contextmanager
    def graph_deferred(self):
        """Memory writes in this block (this thread's) leave the graph to one ``update_graph`` after it:
        `brain map` writing 60 cards rebuilds the graph once, not 60 times."""
        before = getattr(self._local, "graph_deferred", False)
        self._local.graph_deferred = True
        try:
            yield self
        finally:
            self._local.graph_deferred = before

    def _memory_diff(self, files: dict[str, tuple[str, int, int]]) -> tuple[list[str], list[str]]:
        """(indexed paths whose file is gone, files new or changed since they were indexed), by size and mtime."""
        stamps = {path: (size, mtime) for path, size, mtime in self.db.execute(
            "SELECT docs.path, doc_stamps.size, doc_stamps.mtime_ns FROM docs LEFT JOIN doc_stamps USING (path)")}
        return (sorted(stamps.keys() - files.keys()),
                sorted(rel for rel, (_, size, mtime) in files.items() if stamps.get(rel, ()) != (size, mtime)))

    def memory_changes(self) -> tuple[list[str], list[str]]:
        """What `brain index` would do to the memory documents now: (removed, changed) paths, nothing written.

        `brain doctor` asks this rather than comparing the file's mtime with the newest memory file: writes go
        to the WAL (the database file's mtime moves at a checkpoint, which waits while any other process holds
        the index open), a no-op refresh writes nothing, and a file dated in the future stays newer; none of
        those means the index is behind, and `brain index` could clear none of them."""
        return self._memory_diff(self._walk_memory()[0])

    def refresh_memory(self, *, quick: bool = False) -> dict[str, int]:
        """Bring the memory documents up to date, reading only files whose size or mtime changed.

        ``quick`` (the boot's refresh) first checks the folders' mtimes and the top-level
        files, and reads nothing when none changed. An in-place edit that keeps its
        folder's mtime is then caught by the next `brain index` (post-merge/checkout hooks)."""
        db = self.db
        if quick and self._memory_unchanged():
            count = db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
            return {"documents": count, "changed": 0, "removed": 0}
        files, folders = self._walk_memory()
        removed, changed = self._memory_diff(files)
        if not removed and not changed and self._fingerprint_is(folders):
            return {"documents": len(files), "changed": 0, "removed": 0}  # nothing to write: no write lock
        db.execute("BEGIN IMMEDIATE")
        try:
            removed, changed = self._memory_diff(files)  # again under the write lock: another process may have done it
            for rel in removed:
                self._drop_doc(rel)
                db.execute("DELETE FROM doc_stamps WHERE path = ?", (rel,))
            written = 0
            for rel in changed:
                path, size, mtime = files[rel]
                try:
                    data = read_regular_file(Path(path))
                except OSError:
                    continue
                if data is None:
                    continue
                text = data.decode("utf-8", errors="replace")
                written += self._put_doc(rel, text)
                db.execute("INSERT OR REPLACE INTO doc_stamps(path, size, mtime_ns) VALUES (?,?,?)", (rel, size, mtime))
            self._remember_fingerprint(folders)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return {"documents": len(files), "changed": written, "removed": len(removed)}

    def add_documents(self, docs: Iterable[tuple[str, str, str]]) -> int:
        """Bulk-index (path, kind, text) documents in one transaction (imports, benchmarks)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            rows, fts = [], []
            next_id = (db.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
            seen: set[str] = set()
            empty = next_id == 1
            sha = hashlib.sha256
            for rel, kind, text in docs:
                if rel in seen:
                    raise ValueError(f"duplicate document path {rel!r}")
                seen.add(rel)
                if not empty:
                    self._drop_doc(rel)
                title = _title(rel, text)
                head = title + " " + rel
                rows.append((next_id, rel, kind, title, sha(text.encode("utf-8")).hexdigest()))
                fts.append((next_id, head, text, index_extra(head + "\n" + text)))
                next_id += 1
            db.executemany("INSERT INTO docs(id, path, kind, title, hash) VALUES (?,?,?,?,?)", rows)
            db.executemany("INSERT INTO docs_fts(rowid, title, body, extra) VALUES (?,?,?,?)", fts)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return len(rows)

    # -- everything ----------------------------------------------------------------
    def refresh(self, *, code: bool = True, progress=None) -> dict:
        """Bring memory, code and graph up to date; return what changed (nothing changed: no graph work).
        ``progress(done, total, what)`` hears how far the code index build is."""
        from .graph import update_graph

        stats = {"memory": self.refresh_memory()}
        if code:
            stats["code"] = self.refresh_code(progress=progress)
        stats["graph"] = update_graph(self)
        return stats

    def refresh_code(self, *, progress=None, indexed=None, plan=None) -> dict[str, int]:
        """The code and function tables brought up to date (``code.refresh_code``: a changed file is read once)."""
        from .functions import refresh_functions

        stats = refresh_code(self.db, self.repo, progress=progress, indexed=indexed, plan=plan)
        refresh_functions(self.db, self.repo)  # the function index follows the code tables (search.functions)
        from .history_store import refresh_history

        refresh_history(self.db, self.repo)  # past commits of HEAD and their files (search.history_store)
        return stats

    def rebuild(self) -> dict:
        """Build the whole index anew beside the current file, then swap it in (readers never see it half-built)."""
        self.close()
        built, stats = self._build_fresh()
        self._swap_in(built)
        return stats

    def reopen_if_replaced(self) -> None:
        """At the start of an operation: let go of this thread's connection if a heal replaced the file or
        the file moved (see ``_stamp``); never mid-operation, when the connection may still be in use."""
        db = self._db
        if db is None:
            return
        if getattr(self._local, "generation", 0) != self._generation or _stamp(self.path) != self._local.stamp:
            self._db = None

    @property
    def generation(self) -> int:
        """How many times this process replaced a damaged file (see ``heal``)."""
        return self._generation

    def heal(self, seen: int) -> bool:
        """Replace the damaged file with a rebuilt one, unless another thread did since generation ``seen``.

        Under one lock, so the threads of a server that all hit the damage wait for one rebuild
        instead of each rebuilding (and contending on the new file); True when this call rebuilt."""
        with self._heal_lock:
            if self._generation != seen:
                return False
            opened = getattr(self._local, "inode", None)
            if opened is not None and _inode(self.path) not in (None, opened):
                self._generation += 1  # another process already replaced the file: reopen, keep its rebuild
                return False
            with contextlib.suppress(sqlite3.Error):
                self.close()
            built, _ = self._build_fresh()
            self._swap_in(built)
            self._generation += 1
            return True

    # -- queries -----------------------------------------------------------------
    def search(self, query: str, *, kind: str | None = None, limit: int = 10) -> list[SearchHit]:
        """Memory documents and code files matching ``query``, best first, with bounded snippets."""
        words = (query_terms(query) or query_terms(query, stop=False))[:32]
        if not words or limit <= 0:
            return []
        hits: list[SearchHit] = []
        if kind != "code":
            hits += self._search_docs(words, kind, limit)
        if kind in (None, "code"):
            hits += self._search_code(query, limit)
        if kind is None:
            hits.sort(key=lambda h: (-h.score, h.path))
        return hits[:limit]

    def _match(self, table: str, words: list[str], limit: int, weights: str, join: str = "", where: str = "",
               params: tuple = ()):
        """rowids and scores of the best matches.

        Every word first (an intersection: cheap in FTS5). When nothing has them all, the words
        no document has are dropped and the rest intersected; when the words exist but never
        together, the union of the rarest ones (up to about UNION_DOCS documents) is ranked.
        Ranking a union of common words is what would cost, and those rank last in BM25 anyway.
        Each of these ranks at most CANDIDATES matches, the newest: FTS5 computes BM25 for every
        match before LIMIT, so without the bound one common word made a search cost O(notes).
        """
        quoted = {w: '"' + w.replace('"', '""') + '"' for w in words}
        sql = (f"SELECT {table}.rowid, bm25({table}, {weights}) AS s FROM {table} {join} "
               f"WHERE {table} MATCH ? {where} ORDER BY s LIMIT ?")
        # the rowid of the CANDIDATES-th newest match (no ranking: FTS5 walks its rowid order and stops there)
        newest = (f"SELECT {table}.rowid FROM {table} {join} WHERE {table} MATCH ? {where} "
                  f"ORDER BY {table}.rowid DESC LIMIT 1 OFFSET ?")
        capped = (f"SELECT {table}.rowid, bm25({table}, {weights}) AS s FROM {table} {join} "
                  f"WHERE {table} MATCH ? {where} AND {table}.rowid >= ? ORDER BY s LIMIT ?")

        def run(terms: list[str], op: str):
            expression = op.join(quoted[t] for t in terms)
            try:
                floor = self.db.execute(newest, (expression, *params, CANDIDATES - 1)).fetchone()
                if floor is None:  # at most CANDIDATES matches: rank them all, as FTS5 does
                    return self.db.execute(sql, (expression, *params, limit)).fetchall()
                return self.db.execute(capped, (expression, *params, floor[0], limit)).fetchall()
            except sqlite3.OperationalError:
                return []

        rows = run(words, " AND ")
        if rows or len(words) == 1:
            return rows
        # documents holding each word, counted up to just above UNION_DOCS (a walk of the word's rowids
        # that stops there: fts5vocab's count reads a common word's whole posting list, 2.6 ms at 50,000 notes)
        bounded = f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)"
        counts = {}
        for w in words:
            try:
                found = self.db.execute(bounded, (quoted[w], UNION_DOCS + 1)).fetchone()[0]
            except sqlite3.OperationalError:
                found = 0
            if found:
                counts[w] = found
        present = sorted(counts, key=lambda w: (counts[w], w))
        if not present:
            return []
        if len(present) < len(words):
            rows = run(present, " AND ")
            if rows or len(present) == 1:
                return rows
        chosen, total = [], 0
        for w in present:
            if chosen and total + counts[w] > UNION_DOCS:
                break
            chosen.append(w)
            total += counts[w]
        return run(chosen, " OR ")

    def _search_docs(self, words: list[str], kind: str | None, limit: int) -> list[SearchHit]:
        join, where, params = ("JOIN docs ON docs.id = docs_fts.rowid", "AND docs.kind = ?", (kind,)) if kind else ("", "", ())
        rows = self._match("docs_fts", words, limit, "3.0, 1.0, 1.0", join, where, params)
        if not rows:
            return []
        top = -rows[0][1] or 1.0
        wanted = set(words)
        marks = ",".join("?" * len(rows))
        docs = {r[0]: r[1:] for r in self.db.execute(
            f"SELECT docs.id, docs.path, docs.kind, docs.title, docs_fts.body FROM docs "
            f"JOIN docs_fts ON docs_fts.rowid = docs.id WHERE docs.id IN ({marks})", [r[0] for r in rows])}
        hits = []
        for rowid, s in rows:
            doc = docs.get(rowid)
            if doc:
                path = doc[0] if not doc[0].startswith("@decisions/") else f"{self.decisions_dir}/{doc[0][11:]}"
                hits.append(SearchHit(path, doc[1], doc[2], snippet(doc[3], wanted), -s / top))
        return hits

    def _search_code(self, query: str, limit: int) -> list[SearchHit]:
        if self.db.execute("SELECT 1 FROM code_fts LIMIT 1").fetchone() is None:
            return []  # no source files indexed (or only tests)
        words = list(dict.fromkeys(tokens(query, stop=True) or tokens(query)))[:32]
        rows = self._match("code_fts", words, limit, "3.0, 1.0")
        if not rows:
            return []
        top = -rows[0][1] or 1.0
        wanted = set(words)
        hits = []
        for rowid, s in rows:
            module = self.db.execute("SELECT path, module, doc FROM code_files WHERE id = ?", (rowid,)).fetchone()
            if not module:
                continue
            path = module[0]
            syms = [f"{q} (line {ln})" for q, ln in self.db.execute(
                "SELECT qual, line FROM code_symbols WHERE path = ? ORDER BY line", (path,))
                if wanted & set(query_terms(q, stop=False))][:6]
            text = ("defines " + ", ".join(syms)) if syms else (module[2] or "")
            hits.append(SearchHit(path, "code", module[1], text[:SNIPPET_CHARS], 0.9 * -s / top))
        return hits

    def code_view(self):
        from .locate import CodeView

        view = CodeView(self.db)
        view.held = self._local.held  # keeps the connection open while the view is in use (see _Held)
        return view

    def dump(self) -> dict:
        """A canonical, order-independent picture of the index (tests compare rebuild and incremental)."""
        db = self.db
        return {
            "docs": sorted(db.execute("SELECT path, kind, title, hash FROM docs").fetchall()),
            "docs_fts": sorted(db.execute("SELECT docs.path, docs_fts.title, body, extra FROM docs_fts "
                                          "JOIN docs ON docs.id = docs_fts.rowid").fetchall()),
            "code_files": sorted(db.execute("SELECT path, module, lang, is_test, doc FROM code_files").fetchall()),
            "code_symbols": sorted(db.execute("SELECT path, name, kind, qual, line FROM code_symbols").fetchall()),
            "code_imports": sorted(db.execute("SELECT path, target FROM code_imports").fetchall()),
            "code_fts": sorted(db.execute("SELECT code_files.path, names, body FROM code_fts "
                                          "JOIN code_files ON code_files.id = code_fts.rowid").fetchall()),
            "fn_defs": sorted(db.execute("SELECT path, qual, kind, start, end, exported, signature FROM fn_defs").fetchall()),
            "fn_calls": sorted(db.execute("SELECT fn_defs.path, fn_defs.qual, fn_calls.name, fn_calls.line, via FROM fn_calls "
                                          "JOIN fn_defs ON fn_defs.id = fn_calls.def_id").fetchall()),
            "nodes": sorted(db.execute("SELECT id, kind, label, path FROM nodes").fetchall()),
            "edges": sorted(db.execute("SELECT src, dst, kind FROM edges").fetchall()),
        }
