"""Ask / reply on both backends: the three exits under a controllable clock, refusals, cycles,
live-state side effects, restart of the waiting side, and 1,000 randomized ask/reply races."""

from __future__ import annotations

import logging
import queue
import random
import threading
import time

import pytest

from brain.backends import open_backend
from brain.coord import Coordinator, CoordConfig
from brain.coord.rules import resolve_ask_timeout, resolve_turn_timeout
from brain.errors import InvalidInput, NotFound, ReplyRefused, SettingsError, WaitCycle
from coordkit import backend, backend_spec, clock, coord, make_coord  # noqa: F401  (fixtures)

BOUND = 15.0  # seconds: every wait in these tests must end well within this


def in_thread(fn, *args, **kwargs) -> queue.Queue:
    out: queue.Queue = queue.Queue()

    def run():
        try:
            out.put(("ok", fn(*args, **kwargs)))
        except BaseException as exc:  # surfaced to the test
            out.put(("error", exc))

    threading.Thread(target=run, daemon=True).start()
    return out


def result_of(q: queue.Queue):
    kind, value = q.get(timeout=BOUND)
    if kind == "error":
        raise value
    return value


def wait_until(predicate, bound: float = BOUND) -> None:
    """Bounded wait on a condition of the rows (the product's own polling, not a sleep-to-sync)."""
    deadline = time.monotonic() + bound
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.002)


def pair(coord):
    return coord.start_session("build").id, coord.start_session("review").id


# -- pure rules --------------------------------------------------------------------------
def test_absolute_timeout_default_override_and_zero_means_no_override():
    assert resolve_ask_timeout(None) == 600
    assert resolve_ask_timeout("") == 600
    assert resolve_ask_timeout("0") == 600
    assert resolve_ask_timeout("2.5") == 2.5
    for bad in ("inf", "nan", "-1", "soon"):
        with pytest.raises(SettingsError):
            resolve_ask_timeout(bad)


def test_turn_timeout_is_finite_and_capped():
    assert resolve_turn_timeout(None, 600) == 600
    assert resolve_turn_timeout(5, 600) == 5
    assert resolve_turn_timeout(10_000, 600) == 600
    for bad in (0, -1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(InvalidInput):
            resolve_turn_timeout(bad, 600)


def test_env_override_reaches_the_coordinator(brain, monkeypatch):
    from brain.coord.factory import config_from_settings

    assert config_from_settings(brain.settings, {})[0].ask_timeout == 600
    assert config_from_settings(brain.settings, {"BRAIN_ASK_TIMEOUT": "7"})[0].ask_timeout == 7
    assert config_from_settings(brain.settings, {"BRAIN_ASK_TIMEOUT": "0"})[0].ask_timeout == 600


# -- the three exits ------------------------------------------------------------------------
def test_reply_releases_the_asker(coord):
    a, b = pair(coord)
    waiting = in_thread(coord.ask, a, b, "which port?")
    wait_until(lambda: coord.inbox(b))
    [item] = coord.inbox(b)
    assert (item["from"], item["question"]) == (a, "which port?")
    coord.reply(b, item["ticket"], "8080")
    res = result_of(waiting)
    assert (res.outcome, res.answer, res.ticket) == ("reply", "8080", item["ticket"])
    assert coord.inbox(b) == []


def test_target_stalled_resolves_as_silent(coord, clock):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "still there?").ticket
    waiting = in_thread(coord.wait, ticket)
    clock.advance(coord.config.stall_seconds + 1)  # b never heartbeats again
    res = result_of(waiting)
    assert (res.outcome, res.answer) == ("stalled", None)
    with pytest.raises(ReplyRefused) as err:
        coord.reply(b, ticket, "too late")
    assert err.value.state == "stalled"


def test_idle_but_waiting_is_not_stalled(coord, clock):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "long question").ticket
    clock.advance(coord.config.stall_seconds + 1)
    coord.heartbeat(b)
    info = coord.session(a)
    assert (info.liveness, info.waiting_on) == ("alive", ticket)
    coord.reply(b, ticket, "done")
    assert coord.session(a).liveness == "stalled"  # no longer waiting, no heartbeat


def test_absolute_timeout_releases_the_asker(backend, clock):
    c = make_coord(backend, clock, ask_timeout=30)
    a, b = pair(c)
    ticket = c.arm(a, b, "q").ticket
    assert c.get_ask(ticket).deadline == pytest.approx(clock() + 30)
    waiting = in_thread(c.wait, ticket)
    clock.advance(31)
    c.heartbeat(b)  # the target is alive: only the timeout can fire
    res = result_of(waiting)
    assert res.outcome == "timeout"
    with pytest.raises(ReplyRefused) as err:
        c.reply(b, ticket, "late")
    assert err.value.state == "timeout"


def test_per_ask_timeout_never_exceeds_the_absolute(backend, clock):
    c = make_coord(backend, clock, ask_timeout=30)
    a, b = pair(c)
    assert c.arm(a, b, "q", timeout=10_000).deadline == pytest.approx(clock() + 30)
    assert c.arm(a, b, "q", timeout=5).deadline == pytest.approx(clock() + 5)
    with pytest.raises(InvalidInput):
        c.arm(a, b, "q", timeout=float("inf"))


def test_a_wait_turn_is_bounded_and_the_ticket_stays_armed(coord, clock):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q").ticket
    waiting = in_thread(coord.wait, ticket, turn_timeout=5)
    clock.advance(6)
    coord.heartbeat(b)
    assert result_of(waiting).outcome == "pending"
    coord.reply(b, ticket, "done")
    assert coord.wait(ticket).outcome == "reply"


def test_reply_before_the_wait_is_not_missed(coord):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q").ticket
    coord.reply(b, ticket, "early")
    res = coord.wait(ticket)
    assert (res.outcome, res.answer) == ("reply", "early")


def test_second_reply_and_wrong_replier_are_refused(coord):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q").ticket
    with pytest.raises(ReplyRefused) as err:
        coord.reply(a, ticket, "not mine to answer")
    assert err.value.state == "not_target"
    coord.reply(b, ticket, "first")
    with pytest.raises(ReplyRefused) as err:
        coord.reply(b, ticket, "second")
    assert err.value.state == "replied"
    assert coord.wait(ticket).answer == "first"
    with pytest.raises(NotFound):
        coord.reply(b, "ask-nope", "x")


def test_concurrent_replies_exactly_one_wins(coord):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q").ticket
    outs = [in_thread(coord.reply, b, ticket, f"r{i}") for i in range(8)]
    wins, refusals = 0, 0
    for q in outs:
        kind, value = q.get(timeout=BOUND)
        if kind == "ok":
            wins += 1
        else:
            assert isinstance(value, ReplyRefused)
            refusals += 1
    assert (wins, refusals) == (1, 7)


def test_wait_cycles_are_refused(coord):
    a, b = pair(coord)
    c = coord.start_session("test").id
    with pytest.raises(WaitCycle):
        coord.arm(a, a, "myself?")
    coord.arm(a, b, "q1")
    with pytest.raises(WaitCycle) as err:
        coord.arm(b, a, "q2")
    assert err.value.cycle == [b, a, b]
    coord.arm(b, c, "q3")
    with pytest.raises(WaitCycle) as err:
        coord.arm(c, a, "q4")
    assert err.value.cycle == [c, a, b, c]
    coord.arm(c, coord.start_session("docs").id, "fine: no cycle")


def test_ask_sets_target_working_until_its_last_ask_ends_with_busy_and_queue_computed(coord):
    a, b = pair(coord)
    t1 = coord.arm(a, b, "first question").ticket
    t2 = coord.arm(coord.start_session("test").id, b, "second question").ticket
    [entry] = coord.livestate.read(b)
    assert (entry.status, entry.busy, entry.queue) == ("working", True, 2)
    assert entry.delegation.endswith("second question")
    coord.reply(b, t1, "ok")
    [entry] = coord.livestate.read(b)
    assert (entry.status, entry.queue) == ("working", 1)  # still asked: the second ask waits on b
    coord.reply(b, t2, "ok too")
    [entry] = coord.livestate.read(b)
    assert (entry.status, entry.delegation, entry.queue) == ("idle", "", 0)  # as before the asks


def test_arming_and_resolution_are_logged_at_debug(coord, caplog):
    a, b = pair(coord)
    with caplog.at_level(logging.DEBUG, logger="brain.coord.ask"):
        ticket = coord.arm(a, b, "q").ticket
        coord.reply(b, ticket, "a")
    messages = [r.getMessage() for r in caplog.records if r.name == "brain.coord.ask"]
    assert any(ticket in m and "armed" in m for m in messages)
    assert any(ticket in m and "resolved" in m for m in messages)


def test_waiter_restart_keeps_the_stored_absolute_deadline(backend_spec, clock):
    first = open_backend(backend_spec)
    c1 = Coordinator(first, brain_name="proj", machine="box", clock=clock, config=CoordConfig(ask_timeout=40))
    a, b = pair(c1)
    ticket = c1.arm(a, b, "q").ticket
    first.close()  # the serving process goes away mid-wait
    clock.advance(20)
    second = open_backend(backend_spec)
    try:
        c2 = Coordinator(second, brain_name="proj", machine="box", clock=clock, config=CoordConfig(ask_timeout=600))
        c2.heartbeat(b)
        waiting = in_thread(c2.wait, ticket)
        clock.advance(21)  # past the deadline stored at arming (40 s), far before a fresh 600 s
        c2.heartbeat(b)
        assert result_of(waiting).outcome == "timeout"
    finally:
        second.close()


def test_sweep_resolves_tickets_nobody_waits_on(coord, clock):
    a, b = pair(coord)
    c = coord.start_session("test").id
    t_timeout = coord.arm(a, b, "q", timeout=10).ticket
    clock.advance(11)
    coord.heartbeat(b)
    assert (t_timeout, "timeout") in coord.sweep()
    t_stalled = coord.arm(c, b, "q").ticket
    clock.advance(coord.config.stall_seconds + 1)
    coord.heartbeat(c)
    assert (t_stalled, "stalled") in coord.sweep()
    assert coord.asks() == []


def test_unknown_target_and_bad_question_are_refused(coord):
    a, _ = pair(coord)
    with pytest.raises(NotFound):
        coord.arm(a, "sess-20200101-0000-ghost@box", "q")
    with pytest.raises(InvalidInput):
        coord.arm(a, "sess-x", "  ")


# -- races --------------------------------------------------------------------------------
def test_a_thousand_randomized_ask_reply_races_lose_no_wake_up(backend):
    rng = random.Random(1234)
    c = Coordinator(backend, brain_name="proj", machine="box")  # real clock: a lost wake-up would time out
    pairs = [(c.start_session(f"ask{i}").id, c.start_session(f"tgt{i}").id) for i in range(4)]
    total = 1000
    per_asker = total // len(pairs)
    plans = {asker: [rng.random() for _ in range(per_asker)] for asker, _ in pairs}
    done = threading.Event()
    failures: list = []
    results: list = []
    lock = threading.Lock()

    def asker(me, target):
        for i, r in enumerate(plans[me]):
            question = f"{me}#{i}"
            ticket = c.arm(me, target, question, timeout=20).ticket
            if r < 0.3:  # let the reply land before the wait starts
                wait_until(lambda: c.get_ask(ticket).state != "pending")
            res = c.wait(ticket)
            with lock:
                results.append(res)
            if res.outcome != "reply" or res.answer != "re:" + question:
                failures.append((question, res))

    def target(me):
        while not done.is_set():
            pending = [a for a in c.asks(session=me) if a.target == me]
            if not pending:
                c.backend.wait(("brain_ask",), 0.01)
                continue
            for a in pending:
                c.reply(me, a.ticket, "re:" + a.question)

    repliers = [threading.Thread(target=target, args=(t,), daemon=True) for _, t in pairs]
    askers = [threading.Thread(target=asker, args=p, daemon=True) for p in pairs]
    for t in repliers + askers:
        t.start()
    for t in askers:
        t.join(timeout=240)
    done.set()
    for t in repliers:
        t.join(timeout=BOUND)
    assert not any(t.is_alive() for t in askers)
    assert failures == []
    assert len(results) == total
    assert len({r.ticket for r in results}) == total
