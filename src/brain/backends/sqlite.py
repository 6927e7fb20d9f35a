"""The embedded backend: one SQLite file in WAL mode.

Writers use ``BEGIN IMMEDIATE`` so they queue on the database lock (with a busy
timeout) instead of failing half-way; readers use plain deferred transactions and
never block writers. Each thread gets its own connection. Wake-ups: waiters in this
process are woken by a condition variable at commit; waiters in other processes
poll at a short interval (the rows are the truth either way).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator, Sequence

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a task boot (decision 0043)
if TYPE_CHECKING:
    from typing import Any

from ..errors import BackendError, DamagedStore
from ..memory.private import precreate_private
from .base import refuse_nul
from .migrations import MIGRATIONS, apply_pending

__all__ = ["SqliteBackend", "is_corruption", "sqlite_file_problem"]

POLL_SECONDS = 0.005
BUSY_TIMEOUT_MS = 30000


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch a new database file to WAL (persistent). Several processes creating the file at once
    can see "database is locked" here, where SQLite does not apply the busy timeout: retry, bounded."""
    for attempt in range(200):
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == 199:
                raise
            time.sleep(0.005 * min(attempt + 1, 20))


_CORRUPT_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)


def is_corruption(exc: BaseException) -> bool:
    """A SQLite error that says the file is damaged (not a lock, not a full disk)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CORRUPT_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def sqlite_file_problem(path: Path) -> str | None:
    """What is wrong with the SQLite file ``path`` (None when it reads whole, or is absent).

    Opened read-only and checked with ``PRAGMA quick_check`` (every page read once), so a
    damaged file is found whether its header, its pages or its length is broken."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        db.close()
    problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return "; ".join(problems[:3]) or None


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._rowcount = 0
        self.channels: set[str] = set()
        self.finished = False  # a batch(commit=True) ran: the transaction takes no more statements

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        if self.finished:
            raise BackendError("a statement after the transaction's last batch",
                               hint="this is a bug in brain: report it with the traceback (BRAIN_LOG=debug)")
        refuse_nul(params)  # as PostgreSQL does: the same text is refused on both backends
        cur = self.conn.execute(sql, tuple(params))
        rows = cur.fetchall()
        self._rowcount = cur.rowcount
        return rows

    def rowcount(self) -> int:
        return self._rowcount

    def batch(self, statements: Sequence[tuple[str, Sequence[Any]]], *, commit: bool = False) -> list[list[tuple]]:
        """The statements in order, each one's rows (the protocol's one-round-trip call; in process here)."""
        rows = [self.execute(sql, params) for sql, params in statements]
        self.finished = commit
        return rows

    def notify(self, channel: str) -> None:
        self.channels.add(channel)


class SqliteBackend:
    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._writer = threading.Lock()  # writers of this process queue here, not in SQLite's busy handler
        self._migrated = False

    def __repr__(self) -> str:
        return f"SqliteBackend({str(self.path)!r})"

    # -- connections ---------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                precreate_private(self.path)  # 0600, and so its -wal and -shm files (SQLite copies the mode)
                conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                _enable_wal(conn)
                conn.execute("PRAGMA synchronous=NORMAL")
            except (sqlite3.Error, OSError) as exc:
                raise self._open_error(exc) from None
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def _open_error(self, exc: BaseException) -> BackendError:
        """The error for a store that cannot be used: a damaged file says so, with the way out."""
        if is_corruption(exc):
            return DamagedStore(str(self.path), "coordination store", str(exc),
                                f"run `brain doctor`; to start over, stop brain's processes and move it aside "
                                f"(`mv {self.path} {self.path}.damaged`, and its -wal/-shm files)")
        return BackendError(f"cannot open the SQLite database {self.path}: {exc}",
                            hint=f"check that {self.path.parent} is writable")

    @contextmanager
    def _raw(self, write: bool) -> Iterator[_Tx]:
        # A server runs tools on many threads: without this mutex its writers contend inside SQLite,
        # whose busy handler sleeps and gives up after the busy timeout ("database is locked" with 64
        # HTTP clients, bench/bench_team.py). Other processes still queue on SQLite's own lock.
        if write:
            with self._writer:
                with self._raw_tx(True) as tx:
                    yield tx
            return
        with self._raw_tx(False) as tx:
            yield tx

    @contextmanager
    def _raw_tx(self, write: bool) -> Iterator[_Tx]:
        conn = self._conn()
        tx = _Tx(conn)
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite could not start a transaction: {exc}") from None
        try:
            yield tx
        except BaseException:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise BackendError(f"SQLite commit failed: {exc}") from None
        if tx.channels:
            with self._cond:
                self._cond.notify_all()

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[_Tx]:
        if not self._migrated:
            self.migrate()
        try:
            with self._raw(write) as tx:
                yield tx
        except sqlite3.Error as exc:
            if is_corruption(exc):
                raise self._open_error(exc) from None
            raise BackendError(f"SQLite error: {exc}") from None

    # -- wake-ups --------------------------------------------------------------
    def wait(self, channels: Sequence[str], timeout: float) -> None:
        if timeout <= 0:
            return
        with self._cond:
            self._cond.wait(min(timeout, POLL_SECONDS))

    # -- schema ----------------------------------------------------------------
    def applied_migrations(self) -> list[str]:
        with self._raw(False) as tx:
            tx.execute("CREATE TABLE IF NOT EXISTS brain_migrations (name TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)")
            return [r[0] for r in tx.execute("SELECT name FROM brain_migrations ORDER BY name")]

    def migrate(self) -> list[str]:
        applied: list[str] = []
        try:  # the common case, every process start: all applied, checked without taking the write lock
            with self._raw(False) as tx:
                done = {r[0] for r in tx.execute("SELECT name FROM brain_migrations")}
            if all(name in done for name, _ in MIGRATIONS):
                self._migrated = True
                return []
        except sqlite3.Error:
            pass  # no table yet: create it below
        try:
            with self._raw(True) as tx:
                applied = apply_pending(tx, "sqlite")
        except sqlite3.Error as exc:
            if is_corruption(exc):
                raise self._open_error(exc) from None
            raise BackendError(f"SQLite migration failed: {exc}") from None
        self._migrated = True
        return applied

    def close(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()
