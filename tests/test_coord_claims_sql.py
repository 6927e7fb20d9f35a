"""Claims in SQL (issue 21, item 6): the database finds a claim's candidates through the index on
``claims.prefix``; only those take the exact glob test.

Checked here on both backends: the candidate test never misses an overlap (a property test of the pure
rule, and real claims against an all-pairs comparison, with characters that sort next to ``/``); rows of
older versions (filled by migration 0006, or written by an older brain with the default prefix) keep
working; and the rows a claim reads do not grow with unrelated claims held by other sessions, counted
through a wrapper on the backend's ``execute`` (and, on SQLite, no statement of the claim scans the
claims table; on PostgreSQL, the claims rows the transaction fetched).
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

import pytest
from hypothesis import given, settings, strategies as st

from brain.backends import open_backend
from brain.backends.migrations import MIGRATIONS, render
from brain.coord.overlap import (UNKNOWN_PREFIX, candidate_prefixes, claim_prefix, may_overlap, normalize_item,
                                 normalized_overlap)
from coordkit import backend, backend_spec, clock, coord, make_coord  # noqa: F401  (fixtures)

# characters on both sides of '/' (0x2F) and of '0' (0x30) in code-point order, glob characters, non-ASCII
SEGMENT = st.text(alphabet="ab-.0/*?[]é", min_size=0, max_size=4)
ITEM = st.one_of(st.lists(SEGMENT, min_size=1, max_size=4).map(lambda parts: normalize_item("/".join(parts))),
                 st.text(alphabet="ab/-0", min_size=1, max_size=4).map(lambda t: normalize_item("name:" + t)))


@settings(max_examples=1500, deadline=None)
@given(ITEM, ITEM)
def test_the_candidate_test_never_misses_an_overlap(a, b):
    if a and b and normalized_overlap(a, b):
        assert may_overlap(claim_prefix(b), a), (a, b, claim_prefix(b), candidate_prefixes(a))
        assert may_overlap(claim_prefix(a), b)
    assert may_overlap(UNKNOWN_PREFIX, a)  # a row of an older brain is always a candidate


def test_prefix_shapes():
    assert claim_prefix("src/auth/login.py") == "/src/auth/login.py/"
    assert claim_prefix("src/auth/*.py") == "/src/auth/"
    assert claim_prefix("**/*.md") == "/"
    assert claim_prefix("name:release/1") == "name:release/1"
    equal, low, high = candidate_prefixes("src/a")
    assert equal == ("/", "/src/", "/src/a/", UNKNOWN_PREFIX) and (low, high) == ("/src/a/", "/src/a0")
    assert candidate_prefixes("name:x") == (("name:x", UNKNOWN_PREFIX), "name:x", "name:x")


TRICKY = ["src", "src/a", "src-a", "src.a", "src0", "src/a/b", "src/a-b", "src/a0", "src/a/*", "src/*", "*",
          "**", "src/**/x", "src/[ab]", "src/a[", "srcé/x", "src/é", "name:src", "name:src/a", "name:src",
          "docs/*.md", "docs", "a/b/c/d/e", "a/*/c", "a/b/c/d/e/f/g"]


def test_every_claim_sees_exactly_the_overlaps_of_an_all_pairs_comparison(coord):
    held: list[tuple[int, str, str]] = []
    for i, item in enumerate(TRICKY):
        session = coord.start_session(f"r{i}").id
        grant = coord.claim(session, item)
        expected = [cid for cid, s, other in held if s != session and normalized_overlap(other, grant.item)]
        assert [o.claim for o in grant.overlaps] == expected, item
        held.append((grant.claim, session, grant.item))
    for cid, session, item in held:  # renew reads its overlaps the same way
        expected = [c for c, s, other in held if s != session and normalized_overlap(other, item)]
        assert [o.claim for o in coord.renew(session, cid).overlaps] == expected, item


@pytest.mark.parametrize("depth", [200, 600])
def test_a_deep_claim_finds_its_ancestors_at_every_depth(backend, clock, depth):
    # 200 segments: the deepest the default item_max (400) allows; 600: past SQLite's 500 terms of one
    # compound SELECT, for a brain configured with longer items
    coord = make_coord(backend, clock, item_max=2 * depth)
    deep = "/".join(["a"] * depth)
    holder, claimant = coord.start_session("holder").id, coord.start_session("claimant").id
    held = ["/".join(["a"] * d) for d in (1, 99, 100, 101, depth // 2, depth - 1)] + ["/".join(["a"] * 120) + "/*"]
    for item in held:
        coord.claim(holder, item)
    assert [o.item for o in coord.claim(claimant, deep).overlaps] == held
    assert [o.item for o in coord.claim(holder, deep[:-1] + "*").overlaps] == [deep]


def test_the_prefix_column_compares_code_points_on_postgresql(backend):
    if backend.kind != "postgresql":
        pytest.skip("PostgreSQL only: SQLite compares text as bytes (BINARY) by default")
    with backend.transaction(write=False) as tx:
        rows = tx.execute("SELECT collation_name FROM information_schema.columns WHERE table_name = 'claims' "
                          "AND column_name = 'prefix' AND table_schema = current_schema()")
    assert rows == [("C",)]


# -- rows of older versions -------------------------------------------------------------------------------
@contextmanager
def raw_connection(spec: str):
    """A plain driver connection to the store, as an older brain would hold one (autocommit)."""
    if spec.startswith("sqlite:"):
        conn = sqlite3.connect(spec[len("sqlite:"):], isolation_level=None)
        try:
            yield lambda sql, params=(): conn.execute(sql, params).fetchall()
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(spec, autocommit=True) as conn:
        def run(sql, params=()):
            cur = conn.execute(sql.replace("?", "%s"), params or None)
            return cur.fetchall() if cur.description else []
        yield run


def test_claims_of_a_store_from_before_the_prefix_column_keep_their_overlaps(backend_spec, clock):
    dialect = "sqlite" if backend_spec.startswith("sqlite:") else "postgresql"
    names = [name for name, _ in MIGRATIONS]
    old = names.index("0006_claim_prefix")
    with raw_connection(backend_spec) as run:  # the schema of the version before, with its claims
        run("CREATE TABLE brain_migrations (name TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)")
        for name, statements in MIGRATIONS[:old]:
            for sql in render(dialect, statements):
                run(sql)
            run("INSERT INTO brain_migrations (name, applied) VALUES (?, 0)", (name,))
        now = clock()
        run("INSERT INTO sessions (id, role, machine, brain, started, last_seen) VALUES ('sess-old@box', 'old', "
            "'box', 'proj', ?, ?)", (now, now))
        for fence, (item, kind) in enumerate([("src/auth/login.py", "path"), ("src/*/x?.py", "path"),
                                              ("name:release", "name"), ("docs/[ab].md", "path")], 1):
            run("INSERT INTO claims (session, item, kind, fence, granted, expires) VALUES ('sess-old@box', ?, ?, ?, ?, ?)",
                (item, kind, fence, now, now + 3600))
        run("INSERT INTO counters (name, value) VALUES ('fence', 4)")
    b = open_backend(backend_spec)
    try:
        assert b.migrate() == names[old:]
        with b.transaction(write=False) as tx:
            prefixes = dict(tx.execute("SELECT item, prefix FROM claims"))
        # a literal path and a name get their exact prefix, a glob the root (always a candidate: still exact)
        assert prefixes == {"src/auth/login.py": "/src/auth/login.py/", "src/*/x?.py": "/",
                            "name:release": "name:release", "docs/[ab].md": "/"}
        coord = make_coord(b, clock)
        me = coord.start_session("new").id
        with raw_connection(backend_spec) as run:  # an older brain still writing to the migrated store
            run("INSERT INTO claims (session, item, kind, fence, granted, expires) VALUES ('sess-old@box', "
                "'lib/core', 'path', 99, ?, ?)", (now, now + 3600))

        def seen(item):
            return sorted(o.item for o in coord.claim(me, item).overlaps)

        assert seen("src/auth") == ["src/*/x?.py", "src/auth/login.py"]
        assert seen("src/auth/login.py") == ["src/auth/login.py"]
        assert seen("src/billing/xy.py") == ["src/*/x?.py"]
        assert seen("name:release") == ["name:release"]
        assert seen("docs/a.md") == ["docs/[ab].md"]
        assert seen("lib/core/io.py") == ["lib/core"]
        assert seen("tests/test_x.py") == []
    finally:
        b.close()


def test_claims_imported_from_an_old_per_checkout_store_get_their_prefix(backend, clock, tmp_path):
    from brain.coord.imports import import_worktree_store

    old_path = tmp_path / "old" / "brain.db"
    old_path.parent.mkdir()
    old_backend = open_backend(f"sqlite:{old_path}")
    old = make_coord(old_backend, clock)
    holder = old.start_session("old").id
    for item in ("src/parser.py", "src/*/x.py", "name:release"):
        old.claim(holder, item)
    old_backend.close()
    assert import_worktree_store(backend, old_path, None)
    with backend.transaction(write=False) as tx:
        assert dict(tx.execute("SELECT item, prefix FROM claims")) == {
            "src/parser.py": "/src/parser.py/", "src/*/x.py": "/src/", "name:release": "name:release"}
    coord = make_coord(backend, clock)
    assert [o.item for o in coord.claim(coord.start_session("new").id, "src/a/x.py").overlaps] == ["src/*/x.py"]


# -- a claim reads the rows near its path, not the board --------------------------------------------------
class CountingBackend:
    """The real backend, with every statement of its transactions recorded with the rows it returned."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.statements: list[tuple[str, tuple, int]] = []
        self.fetched_claims: list[int] = []  # PostgreSQL: claims rows read by each write transaction
        self.counting = False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @contextmanager
    def transaction(self, write: bool = True):
        with self.inner.transaction(write) as tx:
            backend = self
            measure = self.counting and write and self.kind == "postgresql"
            before = claims_rows_read(tx) if measure else 0

            class Tx:
                def execute(self, sql, params=()):
                    rows = tx.execute(sql, params)
                    if backend.counting:
                        backend.statements.append((sql, tuple(params), len(rows)))
                    return rows

                def batch(self, statements, *, commit=False):
                    # measuring reads the transaction's statistics after the body: the commit waits for it
                    results = tx.batch(statements, commit=commit and not measure)
                    if backend.counting:
                        backend.statements += [(sql, tuple(params), len(rows))
                                               for (sql, params), rows in zip(statements, results)]
                    return results

                def rowcount(self):
                    return tx.rowcount()

                def notify(self, channel):
                    tx.notify(channel)

            yield Tx()
            if measure:
                self.fetched_claims.append(claims_rows_read(tx) - before)


def claims_rows_read(tx) -> int:
    """Rows of ``claims`` this PostgreSQL connection read and has not reported yet (statistics are flushed
    between transactions, never inside one): sequential scans and index fetches."""
    rows = tx.execute("SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                      "WHERE relname = 'claims' AND schemaname = current_schema()")
    return int(rows[0][0]) if rows else 0


def full_scans_of_claims(backend, statements) -> list[str]:
    """The statements SQLite plans as a scan of the whole claims table or of every live claim (the
    (state, expires) index read for "not expired yet")."""
    conn = backend._conn()  # this thread's connection: EXPLAIN QUERY PLAN of the very statements run
    out = []
    for sql, params, _ in statements:
        if "claims" not in sql or not sql.lstrip().upper().startswith("SELECT"):
            continue
        plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        if "SCAN claims" in plan or "expires>?" in plan:
            out.append(f"{sql} -> {plan}")
    return out


def measured_claim(counting: CountingBackend, coord, session: str, item: str):
    """A claim and its renewal, with the rows their statements returned (and, on PostgreSQL, read)."""
    counting.statements.clear()
    counting.fetched_claims.clear()
    counting.counting = True
    try:
        grant = coord.claim(session, item)
        renewed = coord.renew(session, grant.claim)
    finally:
        counting.counting = False
    rows = sum(n for _, _, n in counting.statements)
    return grant, renewed, rows, list(counting.statements), list(counting.fetched_claims)


def board(backend, clock, sessions: int, per_session: int):
    """A claimant and ``sessions`` other sessions holding ``per_session`` claims each, all unrelated to the
    claimant's item but in the same folders (src/area*), plus the same three related ones on every board."""
    counting = CountingBackend(backend)
    coord = make_coord(counting, clock)
    for s in range(sessions):
        sid = coord.start_session(f"r{s}").id
        for k in range(per_session):
            coord.claim(sid, f"src/area{(s * per_session + k) % 50}/held{s}_{k}.py")
    related = coord.start_session("related").id
    coord.claim(related, "src/area7")  # an ancestor of the measured item
    coord.claim(related, "src/*/file12.py")  # a glob under an ancestor
    coord.claim(related, "src/area7/file12.py/part")  # a descendant
    return counting, coord, coord.start_session("me").id


RELATED = sorted(["src/area7", "src/*/file12.py", "src/area7/file12.py/part"])


def test_the_rows_a_claim_reads_do_not_grow_with_unrelated_claims(backend, clock):
    counting, coord, me = board(backend, clock, 1, 10)
    small = measured_claim(counting, coord, me, "src/area7/file12.py")
    for session in coord.sessions():  # their claims released: the next board starts from none held
        coord.end_session(session.id)
    counting, coord, me = board(backend, clock, 64, 10)
    grant, renewed, rows, statements, fetched = measured_claim(counting, coord, me, "src/area7/file12.py")
    assert sorted(o.item for o in small[0].overlaps) == RELATED
    assert sorted(o.item for o in grant.overlaps) == RELATED
    assert sorted(o.item for o in renewed.overlaps) == RELATED
    # 630 more claims held on the board: not one more row returned to the claim and its renewal
    assert rows == small[2], [(sql[:80], n) for sql, _, n in statements]
    if backend.kind == "sqlite":
        assert full_scans_of_claims(backend, statements) == []
    else:  # nor one more row of claims read by PostgreSQL, whatever its statistics say
        assert fetched == small[4] and len(fetched) == 2, (fetched, small[4])
