"""The backend protocol: transactions of portable SQL, a wake-up channel, migrations.

Why so narrow: the semantics (claims, signals, asks...) must be identical on both
databases, so they live once in ``brain.coord``; a backend only differs in how it
connects, how it serialises writers (SQLite ``BEGIN IMMEDIATE``, PostgreSQL a
transaction advisory lock) and how it wakes a waiter (polling, ``LISTEN/NOTIFY``).
Rows are always the truth: a wake-up is only a hint to look again.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol, Sequence

__all__ = ["Backend", "Tx"]


class Tx(Protocol):
    """One open transaction. SQL uses ``?`` placeholders on every backend."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement; return its rows (empty for statements without rows)."""

    def rowcount(self) -> int:
        """Rows changed by the last statement."""

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
