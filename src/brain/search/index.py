"""The derived search index: ``runtime/index.db``, rebuildable from the files at any time.

One SQLite database holds three derived things: the memory documents (every
markdown store under ``.brain/`` and the decision records) in an FTS5 table, the
code tables (files, symbols, imports, and their FTS5 table; see ``code``), and the
graph (see ``graph``). Nothing in it is canonical: deleting ``runtime/`` loses
nothing, ``refresh`` brings it up to date incrementally (memory by content hash,
code by size and modification time) and ``rebuild`` starts from an empty file.
Tokens are computed in Python (``tokenize``) because this SQLite cannot load a
custom tokenizer; the FTS5 tables only split on spaces. This module holds the file's life
(open, lock, swap, heal, refresh); the memory documents are ``index_docs`` and the queries
``index_query``, mixed into ``SearchIndex``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
from pathlib import Path

from ..memory.files import pid_alive
from ..memory.private import ensure_private_dir, precreate_private
from .code import CODE_SCHEMA, refresh_code
from .index_docs import MemoryDocs, kind_of
from .index_query import SNIPPET_CHARS, Queries, SearchHit, snippet
from .tokenize import FTS_TOKENIZE

__all__ = ["SearchIndex", "SearchHit", "kind_of", "MEMORY_KINDS", "INDEX_FILE", "snippet", "SNIPPET_CHARS",
           "is_corruption", "sqlite_file_problem"]  # the last two: brain.backends.sqlite's, loaded when asked


def is_corruption(exc: BaseException) -> bool:
    """``brain.backends.sqlite.is_corruption``, loaded at the first failure: a boot that opens the index
    fine never imports the backend package (its migrations and base)."""
    from ..backends.sqlite import is_corruption as damaged

    return damaged(exc)


def sqlite_file_problem(path: Path) -> str | None:
    """``brain.backends.sqlite.sqlite_file_problem`` (see ``is_corruption``)."""
    from ..backends.sqlite import sqlite_file_problem as problem

    return problem(path)


INDEX_FILE = "index.db"
MERGED_TABLES = ("docs_fts", "code_fts")  # the full-text tables a build leaves in one segment (see merge_segments)
MERGE_PAGES = 4096  # at most this many pages written per table by one merge (16 MB at SQLite's 4 KiB pages)
SCHEMA_VERSION = "19"  # bump when tokens or tables change: an older index is rebuilt
MEMORY_KINDS = ("now", "focus", "note", "workflow", "card", "decision", "handoff", "contract", "profile", "memory")

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

    __slots__ = ("db", "_lock", "answers", "answers_state")

    def __init__(self, db: sqlite3.Connection, lock) -> None:
        self.db = db
        self._lock = lock
        self.answers = None  # the rankings this connection has computed (brain.search.answers)
        self.answers_state = None

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


class SearchIndex(MemoryDocs, Queries):
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
        self.seedable = True  # a missing file may start as a sibling worktree's copy (search.seed); not a rebuild's

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
            if self.seedable and not os.path.lexists(self.path):
                self._seed()
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
            if version is None:  # a new file; an index of this version already says so (no write per open)
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
            return db
        except BaseException:
            db.close()  # a damaged file fails here: keep no handle on it (it is replaced next)
            raise

    def _seed(self) -> None:
        """Start a missing index as a copy of a sibling worktree's (``search.seed``), renamed into place under
        the exclusive lock only when there is still none; any failure leaves the usual build from nothing."""
        from .seed import seed_from_sibling

        self.seedable = False  # one try per process
        copy = seed_from_sibling(self.repo, self.path, SCHEMA_VERSION, self._lock_path.name)
        if copy is None:
            return
        with self._file_lock(exclusive=True):
            if not os.path.lexists(self.path):
                os.chmod(copy, 0o600)
                os.replace(copy, self.path)
                return
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(copy) + suffix)

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
        builder.seedable = False  # a rebuild starts from nothing, by definition
        try:
            stats = builder.refresh()
            builder.merge_segments()
            builder.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except BaseException:
            builder.close()
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(builder.path) + suffix)
            raise
        builder.close()  # the last connection: its WAL and shared memory are removed
        return builder.path, stats

    def merge_segments(self) -> None:
        """Merge each full-text table of ``MERGED_TABLES`` into one segment (FTS5's ``merge`` command, all
        segments eligible, at most ``MERGE_PAGES`` pages written: a larger table is merged in part).

        FTS5 writes each transaction's rows as a new segment and merges them only a few at a time, so a
        build of many small writes leaves several: `brain map` left Django 4.2's memory documents in 17
        segments (62 cards, each written and indexed on its own) and the code files in 4, and a query
        then reads every term's list in each segment. What a query answers is the same rows with the same
        BM25 scores (the scores read the rows and the table's totals, not the segments); a task boot's
        queries on them cost about 1.4 ms less (memory) and 1-2 ms less (code files) on this machine.
        The function bodies' table is left as it is: merged, its queries measured no cheaper. A table
        already in one segment (its ``_idx`` rows, one per leaf page, name one segment) is not touched, so
        the write lock is not taken. Run at the end of a `brain map` and of a rebuild, never by a boot
        (which only reads)."""
        from . import fts_terms

        db = self.db
        if not fts_terms.complete(db):  # a build stopped before its end left the kept terms incomplete
            from .code import transaction

            with transaction(db):
                fts_terms.fill(db)
        for table in MERGED_TABLES:
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None:
                continue
            if db.execute(f"SELECT count(*) FROM (SELECT DISTINCT segid FROM {table}_idx LIMIT 2)").fetchone()[0] < 2:
                continue
            db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (-MERGE_PAGES,))

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

    def refresh_code(self, *, progress=None, indexed=None, plan=None, git_before=None) -> dict[str, int]:
        """The code and function tables brought up to date (``code.refresh_code``: a changed file is read once).

        ``git_before``: a ``git status`` (``gitstamp.GitState``) the caller read before ``plan``'s walk
        (`brain map`'s, for its layout), used instead of asking git once more."""
        from . import gitstamp
        from .functions import refresh_functions
        from .history_store import known_head, refresh_history

        old_modules = (self.repo / "go.mod").is_file() and self.db.execute(  # an index from before inner modules
            "SELECT 1 FROM code_modules LIMIT 1").fetchone() is None              # were recorded: the walk adds them
        if indexed is None and plan is None and not old_modules and gitstamp.unchanged_since_refresh(self.db, self.repo):
            # git's stat data and the files it names say nothing changed since the last refresh (no walk)
            if known_head(self.db) != gitstamp.git_state(self.repo).head:
                refresh_history(self.db, self.repo)
            files = self.db.execute("SELECT COUNT(*) FROM code_files").fetchone()[0]
            return {"files": files, "changed": 0, "removed": 0}
        # asked before the walk: a file changed during it is checked next time
        before = git_before if git_before is not None and plan is not None else gitstamp.git_state(self.repo)
        if plan is None:
            from .build import plan_code

            plan = plan_code(self.db, self.repo)
        stats = refresh_code(self.db, self.repo, progress=progress, indexed=indexed, plan=plan)
        refresh_functions(self.db, self.repo)  # the function index follows the code tables (search.functions)
        refresh_history(self.db, self.repo)  # past commits of HEAD and their files (search.history_store)
        gitstamp.record_refresh(self.db, self.repo, plan.current, before, changed=not plan.noop)
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
