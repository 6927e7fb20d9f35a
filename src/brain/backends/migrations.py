"""Named, append-only schema migrations, one text per dialect.

Rule: never edit or reorder an entry once committed; add a new one at the end. Both
backends record the names they applied in ``brain_migrations`` and apply the missing
ones in order, inside one serialised transaction, so concurrent openers are safe.
Each migration is written once with a few dialect tokens (``{id}`` for an
auto-increment key, ``{float}`` for timestamps, ``{bytewise}`` for code-point
order, ``{qmark}`` for a literal ``?``, which the PostgreSQL backend would turn into a
placeholder) rather than twice by hand, so the two schemas cannot drift.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "render", "migration_names", "apply_pending"]

_TOKENS = {
    "sqlite": {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "float": "DOUBLE PRECISION", "big": "INTEGER",
               "bytewise": "COLLATE BINARY", "qmark": "'?'"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "float": "DOUBLE PRECISION", "big": "BIGINT",
                   "bytewise": 'COLLATE "C"', "qmark": "chr(63)"},
}

# (name, statements) — append only.
MIGRATIONS: list[tuple[str, list[str]]] = [
    ("0001_sessions_claims_signals", [
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY, role TEXT NOT NULL, machine TEXT NOT NULL, brain TEXT NOT NULL,
            pid {big}, started {float} NOT NULL, last_seen {float} NOT NULL, ended {float},
            waiting_ticket TEXT, waiting_until {float})""",
        "CREATE INDEX sessions_brain ON sessions (brain, machine)",
        "CREATE TABLE counters (name TEXT PRIMARY KEY, value {big} NOT NULL)",
        """CREATE TABLE claims (
            id {id}, session TEXT NOT NULL, item TEXT NOT NULL, kind TEXT NOT NULL,
            fence {big} NOT NULL UNIQUE, granted {float} NOT NULL, expires {float} NOT NULL,
            ended {float}, state TEXT NOT NULL DEFAULT 'held')""",
        "CREATE INDEX claims_state ON claims (state, expires)",
        "CREATE INDEX claims_session ON claims (session, state)",
        """CREATE TABLE overlap_decisions (
            id {id}, claim_a {big} NOT NULL, claim_b {big} NOT NULL, decision TEXT NOT NULL,
            decided_by TEXT, at {float} NOT NULL)""",
        """CREATE TABLE signals (
            id {id}, recipient TEXT NOT NULL, sender TEXT NOT NULL, target TEXT NOT NULL,
            kind TEXT NOT NULL, body TEXT NOT NULL, created {float} NOT NULL, expires {float} NOT NULL)""",
        "CREATE INDEX signals_recipient ON signals (recipient, id)",
        "CREATE TABLE signal_cursors (session TEXT PRIMARY KEY, acked {big} NOT NULL)",
        """CREATE TABLE checkpoints (
            session TEXT PRIMARY KEY, role TEXT NOT NULL, machine TEXT NOT NULL, step TEXT NOT NULL,
            claims TEXT NOT NULL, asks TEXT NOT NULL, signal_cursor {big} NOT NULL, note TEXT NOT NULL,
            created {float} NOT NULL)""",
        """CREATE TABLE audit (
            id {id}, at {float} NOT NULL, session TEXT, action TEXT NOT NULL, subject TEXT NOT NULL,
            detail TEXT NOT NULL)""",
        "CREATE INDEX audit_subject ON audit (subject)",
    ]),
    ("0002_asks", [
        """CREATE TABLE asks (
            ticket TEXT PRIMARY KEY, asker TEXT NOT NULL, target TEXT NOT NULL, question TEXT NOT NULL,
            state TEXT NOT NULL, answer TEXT, created {float} NOT NULL, deadline {float} NOT NULL,
            resolved {float})""",
        "CREATE INDEX asks_target ON asks (target, state)",
        "CREATE INDEX asks_asker ON asks (asker, state)",
    ]),
    ("0003_livestate", [
        """CREATE TABLE livestate (
            key TEXT PRIMARY KEY, intent TEXT NOT NULL, progress TEXT NOT NULL, delegation TEXT NOT NULL,
            status TEXT NOT NULL, revision {big} NOT NULL, writer TEXT, updated {float} NOT NULL)""",
        "CREATE INDEX livestate_updated ON livestate (updated)",
    ]),
    # An ask sets its target Working; what it found there is kept in the ticket, so whichever path
    # resolves the ticket (reply, timeout, stall, sweep, another process after a restart) restores it.
    ("0004_asks_live_state_before", [
        "ALTER TABLE asks ADD COLUMN prior_status TEXT",
        "ALTER TABLE asks ADD COLUMN prior_delegation TEXT",
        "ALTER TABLE asks ADD COLUMN ask_delegation TEXT",
    ]),
    # one store per repository (docs/coordination.md, Worktrees): a session names its working tree and
    # branch; the per-worktree stores of earlier versions are imported once each (coord/imports.py)
    ("0005_session_worktree", [
        "ALTER TABLE sessions ADD COLUMN worktree TEXT",
        "ALTER TABLE sessions ADD COLUMN branch TEXT",
        "ALTER TABLE sessions ADD COLUMN worktree_path TEXT",
        "CREATE TABLE store_imports (source TEXT PRIMARY KEY, at {float} NOT NULL, rows {big} NOT NULL)",
    ]),
    # a claim finds the claims it may overlap through an index instead of reading every held claim
    # (coord/overlap.py claim_prefix: `/src/auth/` for `src/auth/*.py`, the whole text of a `name:` item).
    # Code-point order on both ({bytewise}), so the descendants' range is exact. Existing rows get their
    # prefix here: a glob's is set to `/` (every path claim's ancestor), which is always a candidate and so
    # stays exact (the glob test decides) without parsing globs in SQL. A row written by an older brain
    # keeps the default '', which every claim reads as a candidate.
    ("0006_claim_prefix", [
        "ALTER TABLE claims ADD COLUMN prefix TEXT {bytewise} NOT NULL DEFAULT ''",
        """UPDATE claims SET prefix = CASE WHEN kind = 'name' THEN item
            WHEN item LIKE '%*%' OR item LIKE '%' || {qmark} || '%' OR item LIKE '%[%' OR item = '' THEN '/'
            ELSE '/' || item || '/' END""",
        "CREATE INDEX claims_prefix ON claims (state, kind, prefix)",
    ]),
]


def render(dialect: str, statements: list[str]) -> list[str]:
    tokens = _TOKENS[dialect]
    return [" ".join(s.format(**tokens).split()) for s in statements]


def migration_names() -> list[str]:
    return [name for name, _ in MIGRATIONS]


def apply_pending(tx, dialect: str) -> list[str]:
    """Inside ``tx``: create the ledger if needed and apply, in order, every migration not yet in it.

    Returns the names applied. Both backends call this one function, so their schemas
    cannot drift apart."""
    import time

    tx.execute("CREATE TABLE IF NOT EXISTS brain_migrations (name TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)")
    done = {r[0] for r in tx.execute("SELECT name FROM brain_migrations")}
    applied = []
    for name, statements in MIGRATIONS:
        if name in done:
            continue
        for sql in render(dialect, statements):
            tx.execute(sql)
        tx.execute("INSERT INTO brain_migrations (name, applied) VALUES (?, ?)", (name, time.time()))
        applied.append(name)
    return applied
