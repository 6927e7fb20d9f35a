"""Backends on their own: spec parsing, lazy imports, rollback, concurrent migration, errors."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from brain.backends import open_backend
from brain.backends.migrations import MIGRATIONS, migration_names, render
from brain.errors import BackendError, SettingsError
from coordkit import backend, backend_spec  # noqa: F401  (fixtures)


def test_importing_brain_imports_no_database_driver():
    code = ("import sys, brain; b = brain.Brain; "
            "print(sorted(m for m in ('sqlite3', 'psycopg', 'brain.coord', 'brain.backends') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_spec_parsing(tmp_path):
    assert open_backend("sqlite", tmp_path).path == tmp_path / "brain.db"
    assert open_backend(f"sqlite:{tmp_path / 'x.db'}").path == tmp_path / "x.db"
    assert open_backend("postgresql://u@h/db").kind == "postgresql"
    with pytest.raises(SettingsError):
        open_backend("mysql://nope")
    with pytest.raises(SettingsError):
        open_backend("sqlite")  # no runtime folder to put it in


def test_unreachable_postgres_is_a_backend_error_and_the_boot_survives_it(brain, monkeypatch):
    b = open_backend("postgresql://postgres@127.0.0.1:1/none")
    with pytest.raises(BackendError) as err:
        b.migrate()
    assert "127.0.0.1:1" in err.value.message
    monkeypatch.setenv("BRAIN_BACKEND", "postgresql://postgres@127.0.0.1:1/none")
    import brain as brainlib

    reopened = brainlib.open(brain.repo)
    result = reopened.boot("anything", session="sess-20260101-0000-x@testbox", record=False)
    assert result.text.startswith("# Boot") or "Now" in result.text
    assert not any(s["slot"] in ("checkpoint", "livestate") for s in result.to_dict()["sections"])


def test_a_failed_transaction_writes_nothing(backend):
    backend.migrate()
    with pytest.raises(RuntimeError):
        with backend.transaction() as tx:
            tx.execute("INSERT INTO counters (name, value) VALUES ('x', 1)")
            raise RuntimeError("boom")
    with backend.transaction(write=False) as tx:
        assert tx.execute("SELECT COUNT(*) FROM counters WHERE name = 'x'")[0][0] == 0


def test_after_failures_the_connection_still_writes(backend):
    """A refused write, a failed statement: rolled back, and the next write on the thread commits."""
    backend.migrate()
    with pytest.raises(RuntimeError):
        with backend.transaction() as tx:
            tx.execute("INSERT INTO counters (name, value) VALUES ('a', 1)")
            raise RuntimeError("refused")
    with pytest.raises(BackendError):
        with backend.transaction() as tx:
            tx.execute("INSERT INTO no_such_table (x) VALUES (1)")
    with backend.transaction() as tx:
        tx.execute("INSERT INTO counters (name, value) VALUES ('b', 1)")
        tx.notify("brain_claims")
    with backend.transaction(write=False) as tx:
        assert [r[0] for r in tx.execute("SELECT name FROM counters WHERE name IN ('a', 'b') ORDER BY name")] == ["b"]


def test_concurrent_openers_migrate_once(backend_spec):
    backends = [open_backend(backend_spec) for _ in range(4)]
    applied: list[list[str]] = []
    errors: list[BaseException] = []

    def run(b):
        try:
            applied.append(b.migrate())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(b,)) for b in backends]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for b in backends:
        b.close()
    assert errors == [], [str(e) for e in errors]
    assert sorted(len(a) for a in applied) == [0, 0, 0, len(MIGRATIONS)]


def test_both_dialects_render_every_migration():
    for _, statements in MIGRATIONS:
        for dialect in ("sqlite", "postgresql"):
            assert all("{" not in sql for sql in render(dialect, statements))
    assert len(set(migration_names())) == len(MIGRATIONS)
    assert migration_names() == sorted(migration_names())  # names sort in application order
