"""A claim in two batches (issue 21, item 7): ``Tx.batch`` on both backends, and the claim's fast path.

On PostgreSQL a batch is one round trip (one query string, its values quoted by psycopg) and a write holds the writers' lock
across its round trips, so a claim sends its reads in one batch and its writes with COMMIT in another.
Checked here on both backends, with real stores: what a batch returns, commits and rolls back; that a
claim is exactly two batches; that it writes the same rows and audit as the general path (which it
falls back to when the lock took long); and, with real processes, that concurrent claims with leases
ending under them stay serialised (fences gap-free in id order, one audit row each, overlaps replayed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from contextlib import contextmanager

import pytest

from brain.backends import open_backend
from brain.backends.testing import FakeClock, isolated_postgres
from brain.coord import Coordinator, claiming
from brain.coord.overlap import items_overlap
from brain.errors import BackendError, InvalidInput
from coordkit import backend, backend_spec, clock, make_coord  # noqa: F401  (fixtures)


def counter(backend) -> int | None:
    with backend.transaction(write=False) as tx:
        rows = tx.execute("SELECT value FROM counters WHERE name = 'x'")
    return rows[0][0] if rows else None


# -- Tx.batch ------------------------------------------------------------------------------------------
def test_a_batch_returns_each_statements_rows_in_order_and_commits(backend_spec):
    writer, reader = open_backend(backend_spec), open_backend(backend_spec)
    try:
        with writer.transaction() as tx:
            first = tx.batch([("INSERT INTO counters (name, value) VALUES ('x', ?)", (1,)),
                              ("SELECT value + ? FROM counters WHERE name = 'x'", (10,)),
                              ("SELECT name FROM counters WHERE name = 'nothing'", ())])
            assert first == [[], [(11,)], []]
            tx.notify("brain_claims")
            last = tx.batch([("UPDATE counters SET value = value + 1 WHERE name = 'x' RETURNING value", ())],
                            commit=True)
            assert last == [[(2,)]]
        assert counter(reader) == 2  # committed: another connection sees it
    finally:
        writer.close()
        reader.close()


def test_a_batchs_values_come_back_exactly_as_given(backend):
    """PostgreSQL binds a batch's values in its query text: floats to the last bit, quotes, backslashes,
    semicolons, non-ASCII text, NULL and 64-bit integers, written and read back as ``execute`` would."""
    texts = ["it's", "back\\slash \\' end", "a; DROP TABLE claims; --", "ünïcödé ✓ 日本", "%s ? %% ?", ""]
    floats = [0.1, 1 / 3, 1765432109.123456789, 1e-300, -2.5e300, 123456789012.5]
    with backend.transaction() as tx:
        tx.batch([(AUDIT, (at, None if k == 0 else f"s{k}", "a", text, text)) for k, (at, text) in
                  enumerate(zip(floats, texts))] + [("INSERT INTO counters (name, value) VALUES ('big', ?)", (2**62,))])
        rows = tx.batch([("SELECT at, session, subject, detail FROM audit WHERE action = ? ORDER BY id", ("a",)),
                         ("SELECT value FROM counters WHERE name = ?", ("big",)),
                         ("SELECT COUNT(*) FROM audit WHERE at > ? AND at < ?", (0.1, 1 / 3 + 1e-12))], commit=True)
    assert rows[0] == [(at, None if k == 0 else f"s{k}", text, text) for k, (at, text) in enumerate(zip(floats, texts))]
    assert all(type(r[0]) is float for r in rows[0])
    assert rows[1] == [(2**62,)]
    assert rows[2] == [(1,)]
    with backend.transaction(write=False) as tx:  # nothing was dropped
        assert tx.execute("SELECT COUNT(*) FROM claims") == [(0,)]


AUDIT = "INSERT INTO audit (at, session, action, subject, detail) VALUES (?, ?, ?, ?, ?)"


def test_a_statement_runs_again_after_a_batch_that_failed_with_it(backend):
    """PostgreSQL prepares a batch's statements on the connection (PREPARE is not undone by a rollback):
    after batches that failed with a statement in them, the same statement still runs, with any values."""
    insert = "INSERT INTO audit (at, session, action, subject, detail) VALUES (?, ?, ?, ?, ?)"
    for _ in range(2):
        with pytest.raises(BackendError):
            with backend.transaction() as tx:
                tx.batch([(insert, (1.0, "s", "p", "x", "d")),
                          ("INSERT INTO counters (name, value) VALUES ('y', 1)", ()),
                          ("INSERT INTO counters (name, value) VALUES ('y', 2)", ())])  # duplicate key
    with backend.transaction() as tx:
        tx.batch([(insert, (2.0, "s", "p", "x", "d")), (insert, (3.0, None, "p", "x", "d"))], commit=True)
    with backend.transaction(write=False) as tx:
        rows = tx.batch([("SELECT at, session FROM audit WHERE action = ? ORDER BY id", ("p",))])
    assert rows == [[(2.0, "s"), (3.0, None)]]


def test_a_failing_batch_rolls_back_the_whole_transaction(backend):
    with pytest.raises(BackendError):
        with backend.transaction() as tx:
            tx.execute("INSERT INTO counters (name, value) VALUES ('x', 1)")
            tx.batch([("UPDATE counters SET value = 5 WHERE name = 'x'", ()),
                      ("INSERT INTO counters (name, value) VALUES ('x', 2)", ())],  # duplicate key
                     commit=True)
    assert counter(backend) is None
    with backend.transaction() as tx:  # the connection is usable again
        tx.batch([("INSERT INTO counters (name, value) VALUES ('x', 3)", ())], commit=True)
    assert counter(backend) == 3


def test_a_batch_refuses_nul_before_anything_runs(backend):
    with pytest.raises(InvalidInput):
        with backend.transaction() as tx:
            tx.batch([("INSERT INTO counters (name, value) VALUES ('x', 1)", ()),
                      ("SELECT ?", ("a\x00b",))])
    assert counter(backend) is None


def test_nothing_runs_after_the_last_batch(backend):
    with pytest.raises(BackendError, match="last batch"):
        with backend.transaction() as tx:
            tx.batch([("INSERT INTO counters (name, value) VALUES ('x', 1)", ())], commit=True)
            tx.execute("SELECT 1")


def test_the_last_batch_sends_the_notifications(backend_spec):
    if not backend_spec.startswith("postgresql"):
        pytest.skip("PostgreSQL's LISTEN/NOTIFY; SQLite wakes its waiters in process after COMMIT")
    import psycopg

    b = open_backend(backend_spec)
    try:
        b.migrate()
        with psycopg.connect(backend_spec, autocommit=True) as listener:
            listener.execute("LISTEN brain_claims")
            coord = Coordinator(b, brain_name="proj", machine="box")
            coord.claim(coord.start_session("a").id, "src/a.py")
            schema = listener.execute("SELECT current_schema()").fetchone()[0]
            # channels are per database: other schemas' brains (another test run) may notify too; ours say so
            got = []
            for note in listener.notifies(timeout=30):
                if note.payload == schema:
                    got.append(note.channel)
                    break
        assert got == ["brain_claims"]
    finally:
        b.close()


# -- the claim's two batches -----------------------------------------------------------------------------
class Recording:
    """The real backend; every execute and batch of its write transactions recorded (``on_batch`` runs
    after each batch, e.g. to move the clock as a long wait for the lock would)."""

    def __init__(self, inner, on_batch=None) -> None:
        self.inner, self.kind, self.on_batch = inner, inner.kind, on_batch
        self.calls: list[str] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @contextmanager
    def transaction(self, write: bool = True):
        with self.inner.transaction(write) as tx:
            recording = self

            class Tx:
                def execute(self, sql, params=()):
                    recording.calls.append("execute")
                    return tx.execute(sql, params)

                def batch(self, statements, *, commit=False):
                    recording.calls.append("batch+commit" if commit else "batch")
                    rows = tx.batch(statements, commit=commit)
                    if recording.on_batch:
                        recording.on_batch()
                    return rows

                def rowcount(self):
                    return tx.rowcount()

                def notify(self, channel):
                    tx.notify(channel)

            yield Tx()


def test_a_claim_is_two_batches_and_nothing_else(backend, clock):
    recording = Recording(backend)
    coord = make_coord(recording, clock)
    me, other = coord.start_session("me").id, coord.start_session("other").id
    coord.claim(other, "src/a.py", ttl=5)
    clock.advance(10)  # its lease has ended: the next claim expires it in its write batch
    coord.claim(other, "src/*.py")
    recording.calls.clear()
    grant = coord.claim(me, "src/a.py")
    assert recording.calls == ["batch", "batch+commit"]
    assert [o.item for o in grant.overlaps] == ["src/*.py"]
    assert coord.check_fence(grant.claim, grant.fence)


def scenario(coord, clock) -> None:
    """Claims with overlaps, leases ending between them, a released one, a glob and a named item."""
    a, b, c = (coord.start_session(r).id for r in ("a", "b", "c"))
    coord.claim(a, "src/auth/**/*.py", ttl=30)
    coord.claim(b, "src/auth/login.py", ttl=100)
    clock.advance(40)  # a's lease has ended
    coord.claim(c, "src/auth/login.py")
    g = coord.claim(a, "name:deploy", ttl=50)
    coord.claim(b, "name:deploy")
    coord.release(a, g.claim)
    clock.advance(60)  # b's first lease has ended
    coord.claim(c, "src/**")
    coord.claim(a, "docs/x.md")


def store_rows(backend) -> tuple[list, list]:
    with backend.transaction(write=False) as tx:
        claims = tx.execute("SELECT id, session, item, kind, prefix, fence, granted, expires, ended, state "
                            "FROM claims ORDER BY id")
        audit = tx.execute("SELECT at, session, action, subject, detail FROM audit ORDER BY id")
    return [tuple(r) for r in claims], [tuple(r) for r in audit]


@contextmanager
def another_store(backend_spec, tmp_path, request):
    """A second, empty store on the same kind of backend."""
    if backend_spec.startswith("sqlite"):
        yield open_backend(f"sqlite:{tmp_path / 'general.db'}")
        return
    with isolated_postgres(request.getfixturevalue("postgres_url")) as url:
        store = open_backend(url)
        try:
            yield store
        finally:
            store.close()


def test_the_fast_path_writes_what_the_general_path_writes(backend_spec, tmp_path, request, monkeypatch):
    fast = open_backend(backend_spec)
    try:
        clock = FakeClock()
        scenario(make_coord(fast, clock), clock)
        fast_rows = store_rows(fast)
    finally:
        fast.close()
    with another_store(backend_spec, tmp_path, request) as general:
        monkeypatch.setattr(claiming, "LOCK_WAIT_BOUND", -1.0)  # no claim can take the fast path
        clock = FakeClock()
        scenario(make_coord(general, clock), clock)
        general_rows = store_rows(general)
    assert fast_rows == general_rows
    actions = [row[2] for row in fast_rows[1]]
    assert actions.count("expire") == 2 and actions.count("grant") == 7


def test_a_long_wait_for_the_lock_takes_the_general_path(backend, clock):
    coord = make_coord(backend, clock)
    a, b = coord.start_session("a").id, coord.start_session("b").id
    held = coord.claim(a, "src/x.py", ttl=3)
    jumps = []

    def lock_wait():  # the lock took 10 s: a's lease ended meanwhile
        if not jumps:
            jumps.append(clock.advance(claiming.LOCK_WAIT_BOUND * 2))

    recording = Recording(backend, on_batch=lock_wait)
    coord = make_coord(recording, clock)
    grant = coord.claim(b, "src/x.py")
    assert recording.calls[0] == "batch" and "execute" in recording.calls  # read, then the general path
    assert grant.overlaps == []
    info = {c.claim: c for c in coord.claims(include_ended=True)}
    assert info[held.claim].state == "expired" and info[grant.claim].state == "held"
    assert [e.action for e in coord.history(subject=f"claim:{held.claim}")] == ["expire", "grant"]


def test_an_unknown_session_is_refused_before_anything_is_written(backend, clock):
    from brain.errors import NotFound

    coord = make_coord(backend, clock)
    with pytest.raises(NotFound, match="live session"):
        coord.claim("sess-nobody", "src/a.py")
    with pytest.raises(InvalidInput):
        coord.claim("", "src/a.py")
    assert coord.claims(include_ended=True) == [] and coord.history() == []


# -- real processes, leases ending under them -----------------------------------------------------------
WORKER = textwrap.dedent("""
    import json, random, sys, threading
    from brain.backends import open_backend
    from brain.coord import Coordinator
    spec, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    c = Coordinator(open_backend(spec), brain_name="proj", machine="box")
    out = threading.Lock()

    def work(t):  # each thread its own session; threads of one process claim in groups (group commit)
        rng = random.Random(n * 100 + t)
        items = ["src", "src/a.py", "src/*.py", "src/b/c.py", "docs/**", "name:deploy", "t/%d.py" % (n % 3)]
        me = c.start_session("w%d-%d" % (n, t)).id
        for _ in range(rounds):
            # short leases end while the others claim: their expiry rides in a later claim's batch
            g = c.claim(me, rng.choice(items), ttl=rng.choice([0.05, 0.2, 3600]))
            with out:
                print(json.dumps({"claim": g.claim, "fence": g.fence, "overlaps": [o.claim for o in g.overlaps]}))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps({"groups": c._claims.groups, "requests": c._claims.requests}))
""")


def test_processes_claiming_with_leases_ending_stay_serialised(backend_spec, tmp_path):
    setup = open_backend(backend_spec)
    setup.migrate()
    setup.close()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    procs = [subprocess.Popen([sys.executable, str(script), backend_spec, str(n), "15"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(12)]
    grants, _groups = run_workers(procs)
    assert len(grants) == 12 * 15
    check_serialised(backend_spec, grants)


def run_workers(procs) -> tuple[list[dict], list[dict]]:
    """Every worker's grants, and each one's group-commit counters; a failed worker fails the test."""
    grants, groups, errors = [], [], []
    for p in procs:
        out, err = p.communicate(timeout=240)
        if p.returncode != 0:
            errors.append(err[-2000:])
        lines = [json.loads(line) for line in out.splitlines()]
        grants += [line for line in lines if "claim" in line]
        groups += [line for line in lines if "groups" in line]
    assert errors == []
    return grants, groups


def test_threads_of_several_processes_claiming_in_groups_stay_serialised(backend_spec, tmp_path):
    """Group commit under real concurrency: 4 processes of 6 threads, each thread its own session; the
    threads of a process share transactions, the processes meet at the writers' lock."""
    setup = open_backend(backend_spec)
    setup.migrate()
    setup.close()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    procs = [subprocess.Popen([sys.executable, str(script), backend_spec, str(n), "12", "6"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(4)]
    grants, groups = run_workers(procs)
    assert len(grants) == 4 * 6 * 12 and sum(g["requests"] for g in groups) == len(grants)
    check_serialised(backend_spec, grants)


def check_serialised(backend_spec, grants: list[dict]) -> None:
    """The store after concurrent claims is what claims one after the other would have left: fences gap-free
    in id order, every caller's grant as stored, every reported overlap replayed from the audit."""
    b = open_backend(backend_spec)
    try:
        with b.transaction(write=False) as tx:
            rows = {r[0]: r for r in tx.execute("SELECT id, session, item, fence, granted, expires, state "
                                                "FROM claims ORDER BY id")}
            audit = tx.execute("SELECT action, subject, detail, session FROM audit ORDER BY id")
    finally:
        b.close()
    # fences gap-free and in id order, granted times in commit order
    ids = sorted(rows)
    assert [rows[i][3] for i in ids] == list(range(1, len(ids) + 1))
    assert all(rows[x][4] <= rows[y][4] for x, y in zip(ids, ids[1:]))
    assert sorted((g["claim"], g["fence"]) for g in grants) == [(i, rows[i][3]) for i in ids]
    # one grant row per claim naming its fence; at most one expiry each; replaying the audit gives each
    # grant exactly the live overlapping claims of other sessions, none of them past its lease
    reported = {g["claim"]: sorted(g["overlaps"]) for g in grants}
    live: dict[int, tuple] = {}
    seen_grants, expired, pending = [], [], []
    for action, subject, detail, session in audit:
        if not subject.startswith("claim:"):
            continue
        cid = int(subject.split(":")[1])
        if action == "grant":
            detail = json.loads(detail)
            assert detail["fence"] == rows[cid][3] and session == rows[cid][1]
            granted = rows[cid][4]
            assert all(rows[p][5] <= granted for p in pending)  # expired in this claim's transaction
            pending.clear()
            assert all(row[5] > granted for row in live.values()), cid  # every ended lease expired first
            expected = sorted(k for k, row in live.items() if row[1] != session and items_overlap(row[2], rows[cid][2]))
            assert reported[cid] == expected == sorted(o["claim"] for o in detail["overlaps"])
            live[cid] = rows[cid]
            seen_grants.append(cid)
        elif action == "expire":
            live.pop(cid)
            expired.append(cid)
            pending.append(cid)
    assert sorted(seen_grants) == ids and len(set(expired)) == len(expired) > 0
    assert {i for i in ids if rows[i][6] == "expired"} == set(expired)
