"""Coordination storage: one narrow protocol, SQLite and PostgreSQL behind it.

The coordination logic (``brain.coord``, ``brain.livestate``) is written once against
``Backend``: short transactions of portable SQL with ``?`` placeholders. Each backend
only knows how to open a connection, serialise writers, migrate its schema and wake
up waiters. Nothing here is imported by ``import brain``: ``open_backend`` imports
sqlite3 or psycopg on first use.
"""

from __future__ import annotations

from pathlib import Path

from .base import Backend, Tx

__all__ = ["Backend", "Tx", "open_backend"]


def open_backend(spec: str, runtime_dir: Path | None = None) -> Backend:
    """``sqlite`` (file ``runtime_dir/brain.db``), ``sqlite:PATH``, or a ``postgresql://`` URL."""
    from ..errors import SettingsError

    if spec.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresBackend

        return PostgresBackend(spec)
    if spec == "sqlite" or spec.startswith("sqlite:"):
        from .sqlite import SqliteBackend

        path = spec[len("sqlite:"):] if spec.startswith("sqlite:") else None
        if not path:
            if runtime_dir is None:
                raise SettingsError("backend", "backend", "a runtime folder for the embedded SQLite database")
            path = str(Path(runtime_dir) / "brain.db")
        return SqliteBackend(Path(path))
    from ..security.redact import mask_dsn

    raise SettingsError("backend", "backend", "`sqlite` or a postgresql:// URL", repr(mask_dsn(spec)))
