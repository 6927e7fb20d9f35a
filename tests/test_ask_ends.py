"""Asks end cleanly (issue 19, item 5), on SQLite and PostgreSQL with a controllable clock.

Every exit (reply, timeout seen by wait(), target stalled, sweep(), a restarted server's wait or
sweep) leaves the target's live state as it was before the ask, atomically with the resolution;
the thread's handoff records the question once with how it ended, and neither the board nor a
boot shows it as open any more.
"""

from __future__ import annotations

import pytest

import brain as brainlib
from brain.backends import open_backend
from brain.coord import Coordinator, CoordConfig
from brain.coord.factory import coordinator_for
from brain.web.views import work_state
from coordkit import backend, backend_spec, clock, coord, make_coord  # noqa: F401  (fixtures)


def pair(coord):
    return coord.start_session("build").id, coord.start_session("review").id


def live(coord, key):
    [entry] = coord.livestate.read(key)
    return entry.status, entry.delegation, entry.intent


def _reply(c, clock, a, b, ticket):
    assert c.reply(b, ticket, "yes").outcome == "reply"


def _timeout_in_wait(c, clock, a, b, ticket):
    clock.advance(c.ask_timeout() + 1)
    c.heartbeat(b)  # alive: only the timeout can end it
    assert c.wait(ticket).outcome == "timeout"


def _stall_in_wait(c, clock, a, b, ticket):
    clock.advance(c.config.stall_seconds + 1)  # b stays silent
    assert c.wait(ticket).outcome == "stalled"


def _timeout_in_sweep(c, clock, a, b, ticket):
    clock.advance(c.ask_timeout() + 1)
    c.heartbeat(b)
    assert (ticket, "timeout") in c.sweep()


def _stall_in_sweep(c, clock, a, b, ticket):
    clock.advance(c.config.stall_seconds + 1)
    c.heartbeat(a)
    assert (ticket, "stalled") in c.sweep()


EXITS = [_reply, _timeout_in_wait, _stall_in_wait, _timeout_in_sweep, _stall_in_sweep]


@pytest.mark.parametrize("ends", EXITS, ids=lambda f: f.__name__.strip("_"))
def test_every_exit_gives_the_target_back_its_live_state(coord, clock, ends):
    a, b = pair(coord)
    coord.livestate.set(b, intent="split the parser", status="blocked", delegation="waiting on CI", writer=b)
    ticket = coord.arm(a, b, "Is the parser API frozen?").ticket
    status, delegation, _ = live(coord, b)
    assert status == "working" and "Is the parser API frozen?" in delegation
    ends(coord, clock, a, b, ticket)
    assert live(coord, b) == ("blocked", "waiting on CI", "split the parser")
    assert coord.livestate.read(b)[0].queue == 0


@pytest.mark.parametrize("ends", EXITS, ids=lambda f: f.__name__.strip("_"))
def test_a_target_without_live_state_goes_back_to_idle(coord, clock, ends):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "which port?").ticket
    ends(coord, clock, a, b, ticket)
    assert live(coord, b) == ("idle", "", "")


@pytest.mark.parametrize("through", ["wait", "sweep"])
def test_a_restarted_server_restores_the_target_when_it_resolves(backend_spec, clock, through):
    first = open_backend(backend_spec)
    c1 = Coordinator(first, brain_name="proj", machine="box", clock=clock, config=CoordConfig(ask_timeout=40))
    a, b = pair(c1)
    c1.livestate.set(b, status="working", delegation="reviewing #12", writer=b)
    ticket = c1.arm(a, b, "q").ticket
    first.close()  # the serving process goes away with the ask pending
    clock.advance(41)
    second = open_backend(backend_spec)
    try:
        c2 = Coordinator(second, brain_name="proj", machine="box", clock=clock, config=CoordConfig())
        c2.heartbeat(b)
        if through == "wait":
            assert c2.wait(ticket).outcome == "timeout"
        else:
            assert (ticket, "timeout") in c2.sweep()
        assert live(c2, b)[:2] == ("working", "reviewing #12")
    finally:
        second.close()


def test_what_the_target_wrote_during_the_ask_stands(coord, clock):
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q", timeout=10).ticket
    coord.livestate.set(b, status="done", progress="answered elsewhere", writer=b)  # b's own word, mid-ask
    clock.advance(11)
    coord.heartbeat(b)
    assert coord.wait(ticket).outcome == "timeout"
    assert live(coord, b)[:2] == ("done", "")  # its status kept; the ask's delegation taken away
    t2 = coord.arm(a, b, "q2").ticket
    coord.livestate.set(b, delegation="asked the DBA", writer=b)  # b delegated on its own meanwhile
    coord.reply(b, t2, "ok")
    assert live(coord, b)[:2] == ("working", "asked the DBA")


def test_two_asks_keep_the_target_working_until_the_last_ends(coord, clock):
    a, b = pair(coord)
    c = coord.start_session("test").id
    coord.livestate.set(b, status="blocked", delegation="", writer=b)
    t1 = coord.arm(a, b, "first?", timeout=10).ticket
    t2 = coord.arm(c, b, "second?").ticket
    clock.advance(11)
    coord.heartbeat(b)
    assert (t1, "timeout") in coord.sweep()
    status, delegation, _ = live(coord, b)
    assert status == "working" and delegation.endswith("second?")
    coord.reply(b, t2, "done")
    assert live(coord, b)[:2] == ("blocked", "")  # as before the first ask, not as the second found it


def test_a_ticket_armed_before_the_migration_still_ends_idle(coord, clock):
    """Rows from before `0004_asks_live_state_before` have no saved state: the target goes back to idle."""
    a, b = pair(coord)
    ticket = coord.arm(a, b, "from an older brain?").ticket
    with coord.backend.transaction() as tx:
        tx.execute("UPDATE asks SET prior_status = NULL, prior_delegation = NULL, ask_delegation = NULL "
                   "WHERE ticket = ?", (ticket,))
    clock.advance(coord.config.stall_seconds + 1)
    coord.heartbeat(a)
    assert (ticket, "stalled") in coord.sweep()
    assert live(coord, b)[:2] == ("idle", "")


def test_the_restore_is_part_of_the_resolution(coord, clock):
    """A resolution that loses the race (already replied) changes nothing: one restore, by the winner."""
    a, b = pair(coord)
    ticket = coord.arm(a, b, "q").ticket
    coord.reply(b, ticket, "yes")
    revision = coord.livestate.read(b)[0].revision
    clock.advance(coord.ask_timeout() + 1)
    assert coord.wait(ticket).outcome == "reply"
    assert coord.sweep() == []
    assert coord.livestate.read(b)[0].revision == revision


# -- the handoff, the board and the boot ----------------------------------------------------
@pytest.fixture
def brain_on(backend_spec, clock, repo, monkeypatch):
    """A brain on the parametrized backend whose coordination runs on the controllable clock."""
    if not backend_spec.startswith("sqlite:"):  # the embedded one is the brain's own runtime/brain.db
        monkeypatch.setenv("BRAIN_BACKEND", backend_spec)
    b = brainlib.init(repo)
    b._coord = coordinator_for(b, b.backend, clock)
    yield b
    b.backend.close()


ENDINGS = {
    "timeout": (_timeout_in_wait, "→ timed out after 600 s, no reply"),
    "stalled": (_stall_in_sweep, "→ target stalled, no reply"),
    "reply": (_reply, "→ A: yes"),
}


@pytest.mark.parametrize("outcome", list(ENDINGS))
def test_the_handoff_records_the_question_once_with_how_it_ended(brain_on, clock, outcome):
    ends, how = ENDINGS[outcome]
    coord = brain_on.coord
    a, b = pair(coord)
    question = "Is the parser API frozen for release 2? And the lexer?"
    ticket = coord.arm(a, b, question).ticket
    thread = brain_on.thread_between(a, b)
    assert "## Open questions" in brain_on.conversations.handoff(thread).text
    ends(coord, clock, a, b, ticket)
    text = brain_on.conversations.handoff(thread).text
    assert "## Open questions" not in text
    assert text.count("Is the parser API frozen") == 1 and how in text
    assert brain_on.conversations.rebuild(thread) and brain_on.conversations.handoff(thread).text == text  # replayable
    board = work_state(brain_on)
    assert board["asks"] == []
    assert {row["id"]: row["status"] for row in board["sessions"]}[b] == "idle"
    boot = brain_on.boot(session=a, record=False).text
    assert "Is the parser API frozen" in boot and "Open questions" not in boot and "[working" not in boot


def test_a_later_message_does_not_close_an_ask_it_does_not_answer(brain_on, clock):
    """Only the ticket closes an ask's question: a chat turn between the two leaves it open, then it times out."""
    coord = brain_on.coord
    a, b = pair(coord)
    ticket = coord.arm(a, b, "Which port?").ticket
    brain_on.record_turn(None, b, "Working on the lexer now.", to=a)
    thread = brain_on.thread_between(a, b)
    assert "## Open questions" in brain_on.conversations.handoff(thread).text
    _timeout_in_wait(coord, clock, a, b, ticket)
    text = brain_on.conversations.handoff(thread).text
    assert "## Open questions" not in text and "Which port? → timed out after 600 s, no reply" in text


def test_an_llm_summarizer_keeps_the_ticket_of_an_asks_question():
    """The model rewrites the summary on ordinary turns; the ask's question keeps its ticket and still closes."""
    import asyncio
    import json

    from brain.log import HandoffState, LLMSummarizer, Turn

    prompts = []

    async def model(prompt):
        prompts.append(prompt)
        return json.dumps({"open_questions": [["a", "Which port?"]], "answers": [], "decisions": [], "files": [],
                           "next_step": None})

    llm = LLMSummarizer(model)
    state = asyncio.run(llm.afold(HandoffState(thread="t"), Turn("t", "a", "Which port?", kind="ask", ref="ask-1")))
    assert prompts == []  # an ask's own turns are folded exactly, not by the model
    state = asyncio.run(llm.afold(state, Turn("t", "b", "Looking at the config.")))
    assert [q.ref for q in state.open_questions] == ["ask-1"]
    state = asyncio.run(llm.afold(state, Turn("t", "a", "timed out after 600 s, no reply", kind="ask_end", ref="ask-1")))
    assert state.open_questions == () and state.answers[-1].text.endswith("→ timed out after 600 s, no reply")


def test_a_checkpoint_taken_during_an_ask_no_longer_shows_it_pending_once_it_ended(brain_on, clock):
    coord = brain_on.coord
    a, b = pair(coord)
    ticket = coord.arm(a, b, "Which port?").ticket
    coord.checkpoint(a, "waiting on review")
    assert f"pending ask {ticket}" in brain_on.boot(session=a, record=False).text
    _timeout_in_wait(coord, clock, a, b, ticket)
    boot = brain_on.boot(session=a, record=False).text
    assert f"pending ask {ticket}" not in boot and f"ask {ticket} (ended since: timed out, no reply)" in boot


def test_an_asker_killed_mid_wait_leaves_nothing_open_after_the_next_sweep(brain_on, clock):
    """A real `brain ask` process killed with SIGKILL while it waits: another process's sweep, past the
    deadline, restores the target and closes the question in the handoff."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from brain.backends.testing import FakeClock

    real = coordinator_for(brain_on, brain_on.backend)  # the sessions on the real clock, as the CLI sees them
    a, b = real.start_session("build").id, real.start_session("review").id
    real.livestate.set(b, status="blocked", delegation="waiting on CI", writer=b)
    asker = subprocess.Popen([sys.executable, "-m", "brain", "ask", b, "Is the parser API frozen?", "--session", a],
                             cwd=brain_on.repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ)
    try:
        deadline = time.monotonic() + 30
        thread = brain_on.thread_between(a, b)

        def asked() -> bool:  # the ticket row, then the ask's turn in the log (recorded after the commit)
            doc = real.asks() and brain_on.conversations.handoff(thread)
            return bool(doc) and "## Open questions" in doc.text

        while not asked():  # bounded wait on the condition, never a fixed sleep
            assert asker.poll() is None, asker.stderr.read()
            assert time.monotonic() < deadline, "the ask was never armed"
            time.sleep(0.01)
        assert real.livestate.read(b)[0].status == "working"
    finally:
        asker.send_signal(signal.SIGKILL)
        asker.wait(30)
    [ticket] = [t.ticket for t in real.asks()]
    later = coordinator_for(brain_on, brain_on.backend, FakeClock(time.time() + 601))  # another process, later
    later.heartbeat(b)
    assert (ticket, "timeout") in later.sweep()
    assert live(later, b)[:2] == ("blocked", "waiting on CI")
    text = brain_on.conversations.handoff(thread).text
    assert "## Open questions" not in text and "Is the parser API frozen? → timed out after 600 s, no reply" in text


def test_a_target_an_older_brain_left_working_is_released_by_the_next_sweep(coord, clock):
    """Before tickets kept the state to restore, a timed-out ask left its target Working for good."""
    a, b = pair(coord)
    c = coord.start_session("docs").id
    coord.livestate.set(b, status="working", delegation=f"asked by {a}: which port?", writer=a)  # as left by an ask
    coord.livestate.set(c, status="working", delegation="asked by the lead: a review", writer=c)  # its own words
    coord.sweep()
    assert live(coord, b)[:2] == ("idle", "")
    assert live(coord, c)[:2] == ("working", "asked by the lead: a review")
    ticket = coord.arm(a, b, "still there?").ticket  # a live ask is never touched
    coord.sweep()
    assert live(coord, b)[0] == "working"
    coord.reply(b, ticket, "yes")
    assert live(coord, b)[:2] == ("idle", "")
