"""Helpers for testing against real backends: a controllable clock, an isolated PostgreSQL schema.

Shipped with the library (not only the test suite) so integrators can run the same
conformance checks against their own PostgreSQL.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import quote

__all__ = ["FakeClock", "isolated_postgres", "with_search_path"]


class FakeClock:
    """A clock that only moves when told to: expiry, stall windows and timeouts without sleeping."""

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._now += seconds
            return self._now


def with_search_path(url: str, schema: str) -> str:
    """The URL with libpq ``options`` setting the search_path (every connection then uses ``schema``)."""
    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}", safe="")


@contextmanager
def isolated_postgres(url: str, prefix: str = "brain_t") -> Iterator[str]:
    """A fresh schema for one test (yielded as a URL using it), dropped afterwards."""
    import psycopg

    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield with_search_path(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
