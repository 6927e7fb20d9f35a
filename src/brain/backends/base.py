"""The backend protocol: transactions of portable SQL, a wake-up channel, migrations.

Why so narrow: the semantics (claims, signals, asks...) must be identical on both
databases, so they live once in ``brain.coord``; a backend only differs in how it
connects, how it serialises writers (SQLite ``BEGIN IMMEDIATE``, PostgreSQL a
transaction advisory lock) and how it wakes a waiter (polling, ``LISTEN/NOTIFY``).
Rows are always the truth: a wake-up is only a hint to look again.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from collections.abc import Sequence

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a task boot (decision 0043)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # the interfaces are for type checkers: nothing subclasses or instantiates them
    Protocol = object

__all__ = ["Backend", "Tx", "refuse_nul"]


def refuse_nul(params: Sequence[Any]) -> None:
    """Refuse text holding a NUL character before any backend sees it.

    PostgreSQL rejects ``\\x00`` in text columns while SQLite stores it: checked here, in
    both backends' ``execute``, the same text is refused identically on both (an
    ``InvalidInput``, exit code 2, MCP ``invalid_input``), on reads as on writes. The
    callers that know the field's name (``coord.rules.check_text``) refuse it earlier."""
    for value in params:
        if isinstance(value, str) and "\x00" in value:
            from ..errors import InvalidInput

            raise InvalidInput("text with a NUL character (\\x00) cannot be stored", field="text",
                               hint="remove the NUL characters; brain stores text, not binary data")


class Tx(Protocol):
    """One open transaction. SQL uses ``?`` placeholders on every backend."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement; return its rows (empty for statements without rows)."""

    def rowcount(self) -> int:
        """Rows changed by the last statement."""

    def batch(self, statements: Sequence[tuple[str, Sequence[Any]]], *, commit: bool = False) -> list[list[tuple]]:
        """Run ``(sql, params)`` statements in order; return each one's rows (empty for none).

        Why: on PostgreSQL a write holds the writers' lock across every round trip, so a hot path (a claim)
        sends its statements together: one round trip (one query string, its values quoted by psycopg's own
        adapters), the first one also opening the transaction and taking the lock. ``commit=True`` says these are the transaction's last statements:
        PostgreSQL sends the notifications and COMMIT in the same round trip. A failing statement raises as
        ``execute`` would and the transaction rolls back. SQLite runs them one after the other."""

    def notify(self, channel: str) -> None:
        """Wake waiters on ``channel`` once this transaction commits."""


class Backend(Protocol):
    kind: str  # "sqlite" | "postgresql"

    def transaction(self, write: bool = True) -> AbstractContextManager[Tx]:
        """A transaction; write transactions are serialised with every other writer."""

    def wait(self, channels: Sequence[str], timeout: float) -> None:
        """Block at most ``timeout`` seconds or until a notify on a channel (a hint only)."""

    def migrate(self) -> list[str]:
        """Apply the missing named migrations; return the names applied."""

    def applied_migrations(self) -> list[str]:
        ...

    def close(self) -> None:
        ...
