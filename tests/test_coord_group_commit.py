"""Group commit of claims (``brain.coord.groupcommit``, decision 0039): claims that arrive together share a
transaction, and each caller still gets exactly its own answer.

A group is formed here without sleeping: the first claim's transaction waits at a gate until the next
claims are queued behind it (``GroupCommit.wait_pending``), so those run as one group, on both backends.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from brain.coord.groupcommit import GroupCommit
from brain.errors import BackendError, NotFound
from coordkit import backend, backend_spec, clock, make_coord  # noqa: F401  (fixtures)


# -- the queue alone --------------------------------------------------------------------------------------
def test_each_request_gets_its_own_result_and_arrivals_form_the_next_group():
    gate, groups = threading.Event(), []

    def run(requests):
        groups.append(list(requests))
        if len(groups) == 1:
            assert gate.wait(30)
        return [r * 10 if r != 3 else ValueError("three") for r in requests]

    queue = GroupCommit(run)
    results = {}
    first = threading.Thread(target=lambda: results.setdefault(0, queue.submit(0)))
    first.start()
    assert queue.wait_pending(0, 30) and _wait_for(lambda: groups)  # the first group (alone) is running
    others = [threading.Thread(target=lambda n=n: results.setdefault(n, queue.submit(n))) for n in range(1, 6)]
    for t in others:
        t.start()
    assert queue.wait_pending(5, 30)  # all five wait behind it
    gate.set()
    for t in [first, *others]:
        t.join(30)
    assert groups[0] == [0] and sorted(groups[1]) == [1, 2, 3, 4, 5] and len(groups) == 2
    assert {n: r for n, r in results.items() if n != 3} == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50}
    assert isinstance(results[3], ValueError)  # one request's error is its own: the others got theirs
    assert (queue.groups, queue.requests) == (2, 6)


def test_a_group_that_raises_sends_every_caller_alone_and_the_queue_goes_on():
    calls = []

    def run(requests):
        calls.append(list(requests))
        if len(calls) == 1:
            raise BackendError("the group's transaction failed")
        return [r + 1 for r in requests]

    queue = GroupCommit(run)
    assert queue.submit(1) is None  # None: take the general path alone
    assert queue.submit(2) == 3  # the next group is not affected


def test_a_group_is_at_most_limit_requests():
    gate, sizes = threading.Event(), []

    def run(requests):
        sizes.append(len(requests))
        if len(sizes) == 1:
            assert gate.wait(30)
        return list(requests)

    queue = GroupCommit(run, limit=3)
    threads = [threading.Thread(target=queue.submit, args=(0,))]
    threads[0].start()
    assert _wait_for(lambda: sizes)
    threads += [threading.Thread(target=queue.submit, args=(n,)) for n in range(1, 8)]
    for t in threads[1:]:
        t.start()
    assert queue.wait_pending(7, 30)
    gate.set()
    for t in threads:
        t.join(30)
    assert sizes == [1, 3, 3, 1]


def _wait_for(predicate, timeout: float = 30) -> bool:
    """Wait for another thread's progress without sleeping a fixed time (an Event's timed wait, re-checked)."""
    tick = threading.Event()
    for _ in range(int(timeout * 1000)):
        if predicate():
            return True
        tick.wait(0.001)
    return False


# -- claims in one group, on both backends ------------------------------------------------------------------
class Gated:
    """The real backend; once ``arm``ed, the next write transaction waits at ``gate`` once open (the claims
    behind it queue up), and every batch from then on is recorded."""

    def __init__(self, inner, fail_batch: int = 0) -> None:
        self.inner, self.kind = inner, inner.kind
        self.gate, self.entered = threading.Event(), threading.Event()
        self.armed = False
        self.batches: list[int] = []  # statements per batch, in order
        self.fail_batch = fail_batch  # this batch (1: the first after arming) raises, as a lost connection would

    def arm(self) -> None:
        self.armed, self.batches = True, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @contextmanager
    def transaction(self, write: bool = True):
        first = write and self.armed and not self.entered.is_set()
        with self.inner.transaction(write) as tx:
            if first:
                self.entered.set()
                assert self.gate.wait(30)
            outer = self

            class Tx:
                def execute(self, sql, params=()):
                    return tx.execute(sql, params)

                def batch(self, statements, *, commit=False):
                    outer.batches.append(len(statements))
                    if len(outer.batches) == outer.fail_batch:
                        raise BackendError("injected failure of the group's transaction")
                    return tx.batch(statements, commit=commit)

                def rowcount(self):
                    return tx.rowcount()

                def notify(self, channel):
                    tx.notify(channel)

            yield Tx()


def claim_in_a_group(coord, backend, first: tuple, group: list[tuple]) -> tuple[object, list]:
    """``first`` claimed alone (its transaction held at the gate), then ``group`` queued behind it and run
    as one group. Each result is the caller's Grant or the exception it raised."""
    results: dict[int, object] = {}
    backend.arm()

    def claim(n, session, item):
        try:
            results[n] = coord.claim(session, item)
        except Exception as exc:  # noqa: BLE001 - the caller's own error is its result
            results[n] = exc

    lead = threading.Thread(target=claim, args=(-1, *first))
    lead.start()
    assert backend.entered.wait(30)
    threads = [threading.Thread(target=claim, args=(n, *req)) for n, req in enumerate(group)]
    for t in threads:
        t.start()
    assert coord._claims.wait_pending(len(group), 30)
    backend.gate.set()
    for t in [lead, *threads]:
        t.join(30)
    return results[-1], [results[n] for n in range(len(group))]


def test_claims_of_one_group_each_get_their_own_grant_and_overlaps(backend, clock):
    gated = Gated(backend)
    coord = make_coord(gated, clock)
    a, b, c, d = (coord.start_session(r).id for r in "abcd")
    held = coord.claim(d, "src/x.py", ttl=5)
    clock.advance(10)  # d's lease has ended: the group expires it once
    first, grants = claim_in_a_group(coord, gated, (d, "docs/a.md"),
                                     [(a, "src/a.py"), (b, "src/*.py"), (c, "lib/c.py"), (a, "src/b.py")])
    assert coord._claims.groups == 3 and coord._claims.requests == 6  # held, first, then the four as one
    assert len(gated.batches) == 2 + 3  # the first claim's two; the group's three (b's glob overlaps a's claim)
    ga, gb, gc, ga2 = grants
    assert [g.session for g in grants] == [a, b, c, a] and [g.item for g in grants] == \
        ["src/a.py", "src/*.py", "lib/c.py", "src/b.py"]
    fences = [first.fence] + [g.fence for g in grants]
    assert fences == list(range(fences[0], fences[0] + 5))  # gap-free, in the order of the group
    # each one's overlaps: a's first claim none; b's glob overlaps a's claim; a's second claim b's glob
    assert ga.overlaps == [] and gc.overlaps == []
    assert [(o.claim, o.session) for o in gb.overlaps] == [(ga.claim, a)]
    assert [(o.claim, o.session) for o in ga2.overlaps] == [(gb.claim, b)]
    audit = {e.subject: e for e in coord.history(limit=100)}
    for g in grants:  # the audit names each claim and what it overlapped
        assert [o["claim"] for o in audit[f"claim:{g.claim}"].detail["overlaps"]] == [o.claim for o in g.overlaps]
    info = {i.claim: i for i in coord.claims(include_ended=True)}
    assert info[held.claim].state == "expired" and all(info[g.claim].state == "held" for g in grants)
    assert [e.action for e in coord.history(subject=f"claim:{held.claim}")] == ["expire", "grant"]


def test_a_disjoint_group_is_two_batches(backend, clock):
    gated = Gated(backend)
    coord = make_coord(gated, clock)
    sessions = [coord.start_session(f"s{n}").id for n in range(5)]
    _, grants = claim_in_a_group(coord, gated, (sessions[0], "a/0.py"),
                                 [(s, f"b/{n}.py") for n, s in enumerate(sessions[1:])])
    assert len(gated.batches) == 4  # the first claim's two batches, then the group's two
    assert all(not g.overlaps for g in grants) and len({g.claim for g in grants}) == 4


def test_a_session_that_is_not_live_fails_alone_in_its_group(backend, clock):
    gated = Gated(backend)
    coord = make_coord(gated, clock)
    a, b, gone = (coord.start_session(r).id for r in ("a", "b", "gone"))
    coord.end_session(gone)
    _, (ga, refused, gb) = claim_in_a_group(coord, gated, (a, "x.py"),
                                            [(a, "src/a.py"), (gone, "src/a.py"), (b, "src/a.py")])
    assert isinstance(refused, NotFound) and "live session" in str(refused)
    assert ga.session == a and gb.session == b and gb.fence == ga.fence + 1
    assert [(o.claim, o.session) for o in gb.overlaps] == [(ga.claim, a)]
    assert [c.session for c in coord.claims()] == [a, a, b]  # nothing for the session that is gone


def test_a_group_whose_reads_fail_is_claimed_one_by_one(backend, clock):
    gated = Gated(backend, fail_batch=3)  # the first claim's two batches, then the group's reads
    coord = make_coord(gated, clock)
    a, b = coord.start_session("a").id, coord.start_session("b").id
    _, (ga, gb) = claim_in_a_group(coord, gated, (a, "x.py"), [(a, "src/a.py"), (b, "src/**")])
    assert ga.session == a and gb.session == b  # each went alone through the general path and got its grant
    assert gb.fence == ga.fence + 1 or ga.fence == gb.fence + 1
    later = gb if gb.fence > ga.fence else ga
    earlier = ga if later is gb else gb
    assert [o.claim for o in later.overlaps] == [earlier.claim]
    assert len(coord.claims()) == 3 and len([e for e in coord.history() if e.action == "grant"]) == 3


def test_a_group_whose_writes_fail_gives_each_caller_the_error_and_never_claims_twice(backend, clock):
    """Writes that failed on their way (a connection lost around COMMIT) may have committed: each caller gets
    the error, as its own claim would have raised it, instead of claiming again on the general path."""
    gated = Gated(backend, fail_batch=4)  # the first claim's two batches, the group's reads, then its writes
    coord = make_coord(gated, clock)
    a, b = coord.start_session("a").id, coord.start_session("b").id
    first, results = claim_in_a_group(coord, gated, (a, "x.py"), [(a, "src/a.py"), (b, "src/b.py")])
    assert first.item == "x.py"
    assert all(isinstance(r, BackendError) and "injected" in str(r) for r in results)
    assert results[0] is not results[1]  # each thread raises its own copy
    assert [c.item for c in coord.claims()] == ["x.py"]  # rolled back here, and not claimed a second time
