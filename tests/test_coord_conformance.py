"""One conformance suite, run unchanged on SQLite and on PostgreSQL (an isolated schema per test).

Covers migrations, sessions and liveness, claims (overlap, TTL, renew, fencing,
watchdog decisions), signals (direct, broadcast, cursor, pruning), checkpoints and
the audit history. Time is a FakeClock: no test sleeps.
"""

from __future__ import annotations

import re

import pytest

from brain.backends.migrations import migration_names
from brain.coord import Coordinator
from brain.errors import ClaimLost, InvalidInput, NotFound, TooLarge
from coordkit import backend, backend_spec, clock, coord, make_coord  # noqa: F401  (fixtures)


# -- migrations ------------------------------------------------------------------------
def test_migrations_are_named_applied_once_and_recorded(backend):
    first = backend.migrate()
    assert first == migration_names()
    assert backend.migrate() == []
    assert backend.applied_migrations() == sorted(migration_names())


def test_migration_list_is_append_only():
    # committed migrations keep their names and order; new ones go at the end
    assert migration_names()[:3] == ["0001_sessions_claims_signals", "0002_asks", "0003_livestate"]


# -- sessions --------------------------------------------------------------------------
def test_session_ids_have_the_routing_shape_and_are_unique_in_one_minute(coord):
    ids = [coord.start_session("build").id for _ in range(5)]
    assert len(set(ids)) == 5
    pattern = re.compile(r"^sess-\d{8}-\d{4}-build(\.\d+)?@box$")
    assert all(pattern.match(i) for i in ids), ids
    assert ids[0] == "sess-" + ids[0][5:18] + "-build@box"


def test_role_is_validated(coord):
    with pytest.raises(InvalidInput):
        coord.start_session("   ")


def test_liveness_alive_stalled_gone_and_any_call_is_a_heartbeat(coord, clock):
    s = coord.start_session("build").id
    assert coord.session(s).liveness == "alive"
    clock.advance(coord.config.stall_seconds + 1)
    assert coord.session(s).liveness == "stalled"
    coord.signals(s)  # any call naming the session is its heartbeat
    assert coord.session(s).liveness == "alive"
    clock.advance(coord.config.gone_seconds + 1)
    assert coord.session(s).liveness == "gone"
    assert s not in [x.id for x in coord.sessions()]
    assert s in [x.id for x in coord.sessions(include_gone=True)]


def test_ended_session_is_gone_and_refuses_calls(coord):
    s = coord.start_session("build").id
    coord.claim(s, "src/a.py")
    coord.end_session(s)
    assert coord.session(s).liveness == "gone"
    assert coord.claims(session=s) == []
    with pytest.raises(NotFound):
        coord.claim(s, "src/b.py")


def test_unknown_session_is_refused(coord):
    with pytest.raises(NotFound):
        coord.claim("sess-20200101-0000-x@nowhere", "src")


# -- claims ----------------------------------------------------------------------------
def test_claims_are_always_granted_with_overlaps_returned(coord):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g1 = coord.claim(a, "src/auth")
    g2 = coord.claim(b, "src/auth/login.py")          # a descendant of a claimed folder
    g3 = coord.claim(b, "docs/*.md")
    g4 = coord.claim(a, "docs/guide.md")              # matched by b's glob
    g5 = coord.claim(a, "name:release-1.2")
    g6 = coord.claim(b, "name:release-1.2")
    g7 = coord.claim(b, "src/billing")                # no overlap
    assert g1.overlaps == []
    assert [(o.session, o.item, o.claim) for o in g2.overlaps] == [(a, "src/auth", g1.claim)]
    assert g3.overlaps == []
    assert [(o.session, o.item) for o in g4.overlaps] == [(b, "docs/*.md")]
    assert g5.overlaps == [] and [(o.session, o.item) for o in g6.overlaps] == [(a, "name:release-1.2")]
    assert g7.overlaps == []


def test_the_claims_of_a_session_whose_process_is_gone_stop_counting_at_once(coord):
    """An MCP server killed with SIGKILL registered its pid: its claims expire now, not at the end of a lease
    nobody will release (the lease may be hours)."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed = coord.start_session("build", pid=dead.pid).id
    alive = coord.start_session("review").id
    held = coord.claim(killed, "src/parser.py", ttl=3600)
    assert coord.claim(alive, "src/parser.py").overlaps == []
    assert all(c.claim != held.claim for c in coord.claims())
    assert [e.detail.get("reason") for e in coord.history(subject=f"claim:{held.claim}", action="expire")] == [
        "process_gone"]


def test_own_claims_do_not_overlap_and_items_are_normalised(coord):
    a = coord.start_session("build").id
    coord.claim(a, "src/")
    g = coord.claim(a, "./src//x.py")
    assert g.item == "src/x.py" and g.overlaps == []


def test_fences_are_unique_and_increasing(coord):
    a = coord.start_session("build").id
    fences = [coord.claim(a, f"f{i}").fence for i in range(10)]
    assert fences == sorted(fences) and len(set(fences)) == 10


def test_ttl_expiry_renew_never_revives_and_fence_check(coord, clock):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g = coord.claim(a, "src/x.py", ttl=60)
    assert coord.check_fence(g.claim, g.fence)
    clock.advance(30)
    r = coord.renew(a, g.claim, ttl=60)
    assert r.fence == g.fence and r.expires == pytest.approx(clock() + 60)
    clock.advance(61)
    assert not coord.check_fence(g.claim, g.fence)
    with pytest.raises(ClaimLost) as err:
        coord.renew(a, g.claim)
    assert err.value.state == "expired"
    # an expired claim no longer shows up as an overlap
    assert coord.claim(b, "src").overlaps == []
    assert [e.action for e in coord.history(subject=f"claim:{g.claim}")] == ["expire", "renew", "grant"]


def test_release_then_renew_is_refused(coord):
    a = coord.start_session("build").id
    g = coord.claim(a, "src/x.py")
    assert coord.release(a, g.claim) == [g.claim]
    with pytest.raises(ClaimLost) as err:
        coord.renew(a, g.claim)
    assert err.value.state == "released"
    assert coord.release(a, g.claim) == []  # releasing twice changes nothing


def test_release_by_item_all_and_someone_elses_claim(coord):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g1, g2, g3 = coord.claim(a, "x"), coord.claim(a, "y"), coord.claim(b, "z")
    with pytest.raises(NotFound):
        coord.release(a, g3.claim)
    assert coord.release(a, item="x") == [g1.claim]
    assert coord.release(a, all_claims=True) == [g2.claim]
    with pytest.raises(InvalidInput):
        coord.release(a)


def test_ttl_bounds(coord):
    a = coord.start_session("build").id
    for bad in (0, -5, float("inf"), 10**9, True):
        with pytest.raises(InvalidInput):
            coord.claim(a, "x", ttl=bad)
    with pytest.raises(InvalidInput):
        coord.claim(a, "   ")


def test_watchdog_reports_overlaps_and_records_the_human_decision(coord):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g1, g2 = coord.claim(a, "src/**/*.py"), coord.claim(b, "src/app/models.py")
    coord.claim(b, "README.md")
    reports = coord.overlaps()
    assert [(r.a.claim, r.b.claim, r.decision) for r in reports] == [(g1.claim, g2.claim, None)]
    coord.decide_overlap(g2.claim, g1.claim, "review waits for build", by="alice")
    reports = coord.overlaps()
    assert (reports[0].decision, reports[0].decided_by) == ("review waits for build", "alice")
    assert coord.history(action="decide")[0].detail["decision"] == "review waits for build"
    with pytest.raises(NotFound):
        coord.decide_overlap(g1.claim, 9999, "x")


# -- signals ---------------------------------------------------------------------------
def test_direct_signals_are_ordered_with_cursor_and_ack(coord):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    for i in range(5):
        coord.signal(a, b, f"m{i}")
    got = coord.signals(b, limit=3, ack=True)
    assert [s.body for s in got] == ["m0", "m1", "m2"]
    assert [s.body for s in coord.signals(b)] == ["m3", "m4"]
    assert coord.ack(b, got[-1].id + 1) == got[-1].id + 1
    assert [s.body for s in coord.signals(b)] == ["m4"]
    assert coord.ack(b, 0) == got[-1].id + 1  # the cursor never moves back
    assert [s.body for s in coord.signals(b, include_acked=True)] == [f"m{i}" for i in range(5)]
    assert coord.signals(a) == []


def test_broadcast_reaches_live_sessions_of_that_brain_and_machine_only(coord, clock, backend):
    a = coord.start_session("build").id
    old = coord.start_session("old").id
    clock.advance(coord.config.gone_seconds + 1)  # `old` is now gone
    a2 = coord.start_session("review").id
    coord.heartbeat(a)
    other_machine = Coordinator(backend, brain_name="proj", machine="elsewhere", clock=clock)
    far = other_machine.start_session("build").id
    ended = coord.start_session("test").id
    coord.end_session(ended)
    result = coord.signal(a, "proj@box", "hello all", kind="broadcast")
    assert result["recipients"] == [a2]
    assert [s.body for s in coord.signals(a2)] == ["hello all"]
    assert coord.signals(a) == [] and other_machine.signals(far) == []
    assert old not in result["recipients"]
    with pytest.raises(InvalidInput):
        coord.signal(a, "nonsense", "x")
    with pytest.raises(NotFound):
        coord.signal(a, "sess-20200101-0000-ghost@box", "x")


def test_signals_are_bounded_by_max_n_and_ttl(backend, clock):
    c = make_coord(backend, clock, signal_max=3, signal_ttl=100)
    a, b = c.start_session("build").id, c.start_session("review").id
    for i in range(6):
        c.signal(a, b, f"m{i}")
    assert [s.body for s in c.signals(b, include_acked=True)] == ["m3", "m4", "m5"]
    clock.advance(101)
    assert c.signals(b, include_acked=True) == []
    with pytest.raises(TooLarge):
        c.signal(a, b, "x" * (c.config.text_max + 1))


# -- checkpoints -----------------------------------------------------------------------
def test_checkpoint_snapshots_step_claims_asks_cursor_and_note(coord):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g = coord.claim(a, "src/x.py")
    coord.signal(b, a, "ping")
    coord.signals(a, ack=True)
    ticket = coord.arm(b, a, "are you done?").ticket
    cp = coord.checkpoint(a, "step 3: tests", note="next: run pytest")
    again = coord.read_checkpoint(a)
    assert again.to_dict() == cp.to_dict()
    assert (cp.step, cp.note, cp.inherited) == ("step 3: tests", "next: run pytest", False)
    assert [c["claim"] for c in cp.claims] == [g.claim]
    assert [x["ticket"] for x in cp.asks] == [ticket]
    assert cp.signal_cursor > 0


def test_successor_reads_the_predecessors_checkpoint_once_it_is_not_alive(coord):
    a = coord.start_session("build").id
    coord.checkpoint(a, "half way")
    succ = coord.start_session("build").id
    assert coord.read_checkpoint(succ) is None  # the predecessor is still alive
    coord.end_session(a)
    cp = coord.read_checkpoint(succ)
    assert cp.session == a and cp.inherited and cp.step == "half way"
    other_role = coord.start_session("review").id
    assert coord.read_checkpoint(other_role) is None
    assert coord.read_checkpoint("sess-unknown") is None


# -- audit -----------------------------------------------------------------------------
def test_every_grant_release_expiry_signal_ask_and_reply_is_audited(coord, clock):
    a, b = coord.start_session("build").id, coord.start_session("review").id
    g1 = coord.claim(a, "x", ttl=10)
    g2 = coord.claim(a, "y")
    coord.release(a, g2.claim)
    clock.advance(11)
    coord.claims()
    coord.signal(a, b, "hi")
    t = coord.arm(a, b, "q?").ticket
    coord.reply(b, t, "a")
    actions = [e.action for e in reversed(coord.history())]
    for expected in ("session_start", "grant", "release", "expire", "signal", "ask", "reply"):
        assert expected in actions
    assert coord.history(subject=f"claim:{g1.claim}")[0].action == "expire"
