"""The team backend: PostgreSQL through psycopg 3.

Writers serialise on one transaction-level advisory lock, so the rows a writer reads
are exactly the rows every earlier writer committed (claims, fences and signal ids
are then gap-free in commit order, like on SQLite). ``LISTEN/NOTIFY`` is only a
wake-up: a waiter always re-reads the rows, and polls at a bounded interval in case a
notification is lost. Tables live in the connection's ``search_path``, so a URL with
``options=-csearch_path%3Dname`` isolates one brain (the tests use a schema each).
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from ..errors import BackendError
from .base import refuse_nul
from .migrations import apply_pending

__all__ = ["PostgresBackend"]

WRITE_LOCK_KEY = 0x6272_6169_6E  # "brain": every writer of this database queues here
# BEGIN and the writers' lock in one round trip (a write holds the lock until COMMIT, so round trips
# inside a write are what serialized writers wait on)
_BEGIN_LOCKED = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
_CHANNEL = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
POLL_SECONDS = 0.02


def _redact(url: str) -> str:
    """The URL as it may be shown: the password masked wherever the URL carries one."""
    from ..security.redact import mask_dsn

    return mask_dsn(url)


_BUG = "this is a bug in brain: report it with the traceback (BRAIN_LOG=debug)"


_PIECES: dict[str, list[bytes]] = {}
# the type of each parameter of a prepared statement, from its value's Python type (None: PostgreSQL infers it)
_PG_TYPES = {bool: "boolean", int: "bigint", float: "double precision", str: "text", type(None): "unknown"}
MAX_PREPARED = 512  # prepared statements per connection (a claim group's few shapes; the IN lists vary in length)


class _Prepared:
    """The statements a batch has prepared on one connection: ``(sql, types)`` -> name.

    Names are never reused: PREPARE is not transactional, so a PREPARE sent in a batch that failed may or
    may not exist; its entry is dropped and the statement is prepared again under a new name."""

    __slots__ = ("conn", "names", "count")

    def __init__(self, conn) -> None:
        self.conn = conn
        self.names: dict[tuple, bytes] = {}
        self.count = 0


def _pieces(sql: str) -> list[bytes]:
    """``sql`` split at its ``?`` placeholders, encoded (the statements are a few constants: kept)."""
    pieces = _PIECES.get(sql)
    if pieces is None:
        pieces = [piece.encode() for piece in sql.split("?")]
        if len(_PIECES) < 4096:
            _PIECES[sql] = pieces
    return pieces


class _Tx:
    """One transaction on one connection. A write opens lazily: its first statement (or batch) carries BEGIN
    and the writers' lock in the same round trip, and ``batch(commit=True)`` carries COMMIT in its own."""

    def __init__(self, cur, write: bool) -> None:
        self.cur = cur
        self.channels: set[str] = set()
        self.write = write
        self.begun = not write  # a read runs in autocommit: nothing to open or to commit
        self.finished = False
        self.prepared: _Prepared | None = None  # the connection's prepared statements (given by the backend)

    def _check(self, statements) -> None:
        if self.finished:
            raise BackendError("a statement after the transaction's last batch", hint=_BUG)
        for _, params in statements:
            refuse_nul(params)  # a clear InvalidInput, identical to SQLite's, instead of a driver DataError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        self._check([(sql, params)])
        if not self.begun:
            self.cur.execute(_BEGIN_LOCKED)
            self.begun = True
        self.cur.execute(sql.replace("?", "%s"), tuple(params) if params else None)
        return self.cur.fetchall() if self.cur.description else []

    def batch(self, statements: Sequence[tuple[str, Sequence[Any]]], *, commit: bool = False) -> list[list[tuple]]:
        """The statements as one query string, one round trip: one execute and one result per statement, where
        psycopg's pipeline costs a cursor, a send and a fetch for each, in Python, with the writers' lock held
        (a group of claims sends about five statements a claim). The values are quoted by psycopg's own
        adapters (``as_literal``: what its ``ClientCursor`` does, the connection's encoding and string rules).
        Each statement is prepared on the connection the first time (``PREPARE``, in the same string) and
        sent as ``EXECUTE name(values)`` after: PostgreSQL parses and plans it once per connection."""
        if self.finished:
            raise BackendError("a statement after the transaction's last batch", hint=_BUG)
        if commit and not self.write:
            raise BackendError("batch(commit=True) in a read transaction", hint=_BUG)
        import psycopg
        from psycopg.adapt import Transformer
        from psycopg.pq import ExecStatus

        conn = self.cur.connection
        literal = Transformer(conn).as_literal  # the connection's adapters: what ClientCursor.mogrify() calls
        prepared = self.prepared if self.prepared is not None and self.prepared.conn is conn else None
        names = prepared.names if prepared is not None else None
        new: dict[tuple, bytes] = {}
        prepares: list[bytes] = []
        parts: list[bytes] = []
        try:
            for sql, params in statements:
                if names is not None and params:
                    key = (sql, tuple(map(type, params)))
                    name = names.get(key) or new.get(key)
                    if name is None and prepared.count + len(new) < MAX_PREPARED:
                        name = self._prepare(sql, key, new, prepares, prepared.count)
                    if name:
                        parts.append(b"EXECUTE %s(%s)" % (name, b", ".join(map(literal, params))))
                        continue
                pieces = _pieces(sql)
                if len(pieces) != len(params) + 1:
                    raise BackendError(f"{len(params)} parameters for {len(pieces) - 1} placeholders", hint=_BUG)
                out = [pieces[0]]
                for value, piece in zip(params, pieces[1:]):
                    out += (literal(value), piece)
                parts.append(b"".join(out))
        except psycopg.DataError:  # a NUL in a text: the same InvalidInput as on SQLite, before anything is sent
            for _, params in statements:
                refuse_nul(params)
            raise
        head = list(prepares)
        if not self.begun:
            self.begun = True  # BEGIN is sent: whatever fails next, the caller's rollback ends it
            head.append(_BEGIN_LOCKED.encode())
        skip = len(prepares) + (0 if len(head) == len(prepares) else 2)  # their results come first (BEGIN, the lock)
        if prepared is not None:
            prepared.count += len(new)  # the names are taken, whatever happens next
        if commit:
            parts.append(_commit_sql(self.channels).encode())
        cur = psycopg.ClientCursor(conn)
        try:
            cur.execute(b"; ".join(head + parts))
            for _ in range(skip):
                cur.nextset()
            rows = []
            for _ in statements:
                rows.append(cur.fetchall() if cur.pgresult.status == ExecStatus.TUPLES_OK else [])
                cur.nextset()
        finally:
            cur.close()
        if new:  # prepared: known from now on (on a failure above they are forgotten, their names never reused)
            prepared.names.update(new)
        self.finished = commit
        return rows

    @staticmethod
    def _prepare(sql: str, key: tuple, new: dict, prepares: list, count: int) -> bytes:
        """The name of ``sql`` prepared for the parameter types of ``key`` (its PREPARE added to ``prepares``),
        or b"" when a value's type has no PostgreSQL type here (then it is sent with its values inline)."""
        types = [_PG_TYPES.get(kind) for kind in key[1]]
        if None in types:
            return b""
        pieces = sql.split("?")
        if len(pieces) != len(types) + 1:
            raise BackendError(f"{len(types)} parameters for {len(pieces) - 1} placeholders", hint=_BUG)
        name = new[key] = f"brain_{count + len(new)}".encode()
        numbered = "".join(f"{piece}${k}" for k, piece in enumerate(pieces[:-1], 1)) + pieces[-1]
        prepares.append(b"PREPARE %s (%s) AS %s" % (name, ", ".join(types).encode(), numbered.encode()))
        return name

    def rowcount(self) -> int:
        return self.cur.rowcount

    def notify(self, channel: str) -> None:
        if not _CHANNEL.match(channel):  # sent inline with COMMIT: a constant name, never caller text
            raise ValueError(f"bad notification channel {channel!r}")
        self.channels.add(channel)


def _commit_sql(channels: set[str], commit: bool = True) -> str:
    """The notifications and COMMIT as one round trip (no parameters: the simple query protocol). The payload
    is the sender's schema: channels are per database, and brains in other schemas of it ignore the wake-up."""
    return ("".join(f"SELECT pg_notify('{c}', current_schema()); " for c in sorted(channels))
            + ("COMMIT" if commit else ""))


class PostgresBackend:
    kind = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url
        self._local = threading.local()
        self._conns: list[Any] = []
        self._lock = threading.Lock()
        self._migrated = False

    def __repr__(self) -> str:
        return f"PostgresBackend({_redact(self.url)!r})"

    def _connect(self):
        import psycopg

        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            # the durability trade of SQLite's WAL + synchronous=NORMAL: a crash of the whole server may lose
            # the last few milliseconds of coordination writes, never corrupt them; an app crash loses nothing
            # UTF-8 both ways: the batches encode their SQL once (``_pieces``), the values in the same encoding
            conn.execute("SET synchronous_commit = off; SET client_encoding = 'UTF8'")
        except psycopg.Error as exc:
            raise BackendError(f"cannot reach PostgreSQL at {_redact(self.url)}: {type(exc).__name__}",
                               hint="check the backend URL in brain.local.yml or BRAIN_BACKEND") from None
        with self._lock:
            self._conns.append(conn)
        return conn

    def _conn(self, name: str = "conn"):
        conn = getattr(self._local, name, None)
        if conn is None or conn.closed:
            conn = self._connect()
            setattr(self._local, name, conn)
        return conn

    def _prepared(self, conn) -> _Prepared:
        prepared = getattr(self._local, "prepared", None)
        if prepared is None or prepared.conn is not conn:  # a new connection prepares anew
            prepared = self._local.prepared = _Prepared(conn)
        return prepared

    @contextmanager
    def _raw(self, write: bool) -> Iterator[_Tx]:
        import psycopg

        conn = self._conn()
        if not write:
            # READ COMMITTED gives every statement its own snapshot even inside BEGIN/COMMIT, so a read
            # "transaction" is the same statements in autocommit: two round trips fewer per wait turn
            try:
                with conn.cursor() as cur:
                    tx = _Tx(cur, write=False)
                    tx.prepared = self._prepared(conn)
                    yield tx
            except psycopg.OperationalError as exc:
                self._local.conn = None
                raise BackendError(f"PostgreSQL error: {type(exc).__name__}: {exc}".splitlines()[0]) from None
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL error: {type(exc).__name__}: {exc}".splitlines()[0]) from None
            return
        from psycopg.pq import TransactionStatus

        if conn.info.transaction_status != TransactionStatus.IDLE:  # SQLite's writer mutex would deadlock here
            raise BackendError("a write transaction was opened inside another on the same thread",
                               hint="this is a bug in brain: report it with the traceback (BRAIN_LOG=debug)")
        try:
            with conn.cursor() as cur:
                try:
                    tx = _Tx(cur, write=True)
                    tx.prepared = self._prepared(conn)
                    yield tx
                    if tx.begun and not tx.finished:
                        cur.execute(_commit_sql(tx.channels))
                    elif not tx.begun and tx.channels:  # nothing written: the wake-ups alone, in autocommit
                        cur.execute(_commit_sql(tx.channels, commit=False))
                except BaseException:
                    self._rollback(conn)
                    raise
        except psycopg.OperationalError as exc:
            self._local.conn = None  # a broken connection is reopened by the next call
            raise BackendError(f"PostgreSQL error: {type(exc).__name__}: {exc}".splitlines()[0]) from None
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL error: {type(exc).__name__}: {exc}".splitlines()[0]) from None

    def _rollback(self, conn) -> None:
        """End a failed write's transaction; a connection that cannot even roll back is dropped."""
        import psycopg
        from psycopg.pq import TransactionStatus

        if conn.closed or conn.info.transaction_status == TransactionStatus.IDLE:
            return
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            self._local.conn = None
            try:
                conn.close()
            except psycopg.Error:
                pass

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[_Tx]:
        if not self._migrated:
            self.migrate()
        with self._raw(write) as tx:
            yield tx

    def wait(self, channels: Sequence[str], timeout: float) -> None:
        if timeout <= 0:
            return
        conn = self._conn("listen")
        try:
            listening: set[str] = getattr(self._local, "listening", set())
            if not listening:
                self._local.schema = conn.execute("SELECT current_schema()").fetchone()[0]
            for channel in channels:
                if channel not in listening:
                    conn.execute(f'LISTEN "{channel}"')
                    listening.add(channel)
            self._local.listening = listening
            schema = self._local.schema
            # the timeout bounds the whole wait; another schema's wake-ups (same channel, other brain) are skipped
            for note in conn.notifies(timeout=min(timeout, POLL_SECONDS)):
                if note.payload == schema:
                    break
        except Exception:  # a wake-up is only a hint: on any trouble the caller polls
            self._local.listen = None
            self._local.listening = set()

    def applied_migrations(self) -> list[str]:
        with self._raw(False) as tx:
            rows = tx.execute("SELECT to_regclass('brain_migrations') IS NOT NULL")
            if not rows[0][0]:
                return []
            return [r[0] for r in tx.execute("SELECT name FROM brain_migrations ORDER BY name")]

    def migrate(self) -> list[str]:
        with self._raw(True) as tx:
            applied = apply_pending(tx, "postgresql")
        self._migrated = True
        return applied

    def close(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.close()
            except Exception:
                pass
        self._local = threading.local()
