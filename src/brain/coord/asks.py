"""Ask / reply rendezvous with three bounded exits.

``ask(target, question)`` arms a durable ticket row carrying its absolute deadline,
then waits client-side: each wait turn re-reads the row, so a reply written before
the asker starts waiting is never missed, and a wake-up (condition variable, or
``LISTEN/NOTIFY``) only shortens the poll. Exactly one of reply / target Stalled /
absolute timeout resolves the ticket, by a conditional update from ``pending``:
whichever commits first wins and the others are refused. Because the deadline is in
the row, an asker whose server restarted calls ``wait(ticket)`` again and is still
released on time; ``sweep`` resolves overdue tickets nobody waits on.
"""

from __future__ import annotations

import logging
import secrets

from ..errors import NotFound, ReplyRefused, WaitCycle
from .model import Ask, AskResult
from .rules import ALIVE, resolve_turn_timeout

__all__ = ["AsksMixin", "OUTCOMES"]

log = logging.getLogger("brain.coord.ask")

OUTCOMES = {"replied": "reply", "stalled": "stalled", "timeout": "timeout", "abandoned": "timeout"}
_ASK_COLS = "ticket, asker, target, question, state, answer, created, deadline, resolved"
HEARTBEAT_EVERY = 1.0  # a waiting asker refreshes its own liveness at most this often


class AsksMixin:
    # provided by Coordinator
    backend: object
    clock: object
    config: object
    livestate: object
    _clean: object  # Coordinator._clean: checked, then redacted
    observer = None  # optional callable(kind, event) told of each ask and reply after commit

    def ask_timeout(self) -> float:
        return self.config.ask_timeout

    # -- arming ------------------------------------------------------------------
    def arm(self, session: str, target: str, question: str, *, timeout: float | None = None) -> Ask:
        """Create the ticket (durable, with its absolute deadline); refuse a wait cycle."""
        question = self._clean(question, "question", self.config.text_max)
        absolute = self.ask_timeout()
        limit = resolve_turn_timeout(timeout, absolute)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            now = self.clock()
            if not isinstance(target, str) or not tx.execute("SELECT 1 FROM sessions WHERE id = ?", (target,)):
                raise NotFound(f"session {target}", hint="ask a session id listed by `brain session list`")
            cycle = self._cycle(tx, session, target)
            if cycle:
                raise WaitCycle(cycle)
            ticket = "ask-" + secrets.token_hex(8)
            deadline = now + limit
            tx.execute(f"INSERT INTO asks ({_ASK_COLS}) VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?, NULL)",
                       (ticket, session, target, question, now, deadline))
            tx.execute("UPDATE sessions SET waiting_ticket = ?, waiting_until = ? WHERE id = ?", (ticket, deadline, session))
            self.livestate.set_in(tx, target, {"status": "working",
                                               "delegation": f"asked by {session}: {' '.join(question.split())}"[:290]},
                                  writer=session)
            self._audit(tx, session, "ask", f"ask:{ticket}", target=target, deadline=deadline)
            tx.notify("brain_ask")
        log.debug("ask %s armed: %s -> %s, deadline in %.1f s", ticket, session, target, limit)
        self._emit("ask", ticket=ticket, speaker=session, to=target, text=question)
        return Ask(ticket, session, target, question, "pending", None, now, deadline, None)

    def _cycle(self, tx, asker: str, target: str) -> list[str] | None:
        """The wait path target -> ... -> asker if one exists (then asker -> target closes a cycle)."""
        if asker == target:
            return [asker, asker]
        now = self.clock()
        edges: dict[str, list[str]] = {}
        for a, t in tx.execute("SELECT asker, target FROM asks WHERE state = 'pending' AND deadline > ?", (now,)):
            edges.setdefault(a, []).append(t)
        paths = {target: [asker, target]}
        frontier = [target]
        while frontier:
            node = frontier.pop()
            for nxt in edges.get(node, []):
                if nxt == asker:
                    return paths[node] + [asker]
                if nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    frontier.append(nxt)
        return None

    # -- waiting -----------------------------------------------------------------
    def ask(self, session: str, target: str, question: str, *, timeout: float | None = None) -> AskResult:
        """Block until the reply, the target seen Stalled, or the absolute timeout — exactly one."""
        ticket = self.arm(session, target, question, timeout=timeout)
        return self.wait(ticket.ticket)

    def get_ask(self, ticket: str) -> Ask:
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {_ASK_COLS} FROM asks WHERE ticket = ?", (ticket,))
        if not rows:
            raise NotFound(f"ask {ticket}")
        return Ask(*rows[0])

    def wait(self, ticket: str, *, turn_timeout: float | None = None) -> AskResult:
        """Wait on an armed ticket; returns its outcome, or ``pending`` if this turn's bound came first.

        The row's absolute deadline bounds every wait, whoever armed it and whenever
        the waiter (re)started; ``turn_timeout`` (finite) bounds this one call.
        """
        turn = None if turn_timeout is None else resolve_turn_timeout(turn_timeout, self.ask_timeout())
        started = self.clock()
        last_beat = started
        while True:
            ask, target_row = self._ask_and_target(ticket)
            if ask.state != "pending":
                return AskResult(OUTCOMES[ask.state], ask.answer, ticket)
            now = self.clock()
            if now >= ask.deadline:
                return self._finish(ticket, "timeout")
            target_state = "gone" if target_row[0] is None else self._liveness(now, *target_row)
            if target_state != ALIVE:
                return self._finish(ticket, "stalled")
            if turn is not None and now - started >= turn:
                return AskResult("pending", None, ticket)
            if now - last_beat >= HEARTBEAT_EVERY:
                last_beat = now
                try:
                    self.heartbeat(ask.asker)
                except NotFound:
                    pass
            self.backend.wait(("brain_ask",), max(0.0, ask.deadline - now))

    def _ask_and_target(self, ticket: str) -> tuple[Ask, tuple]:
        """One read per wait turn: the ticket row and its target's liveness inputs."""
        cols = ", ".join("a." + c.strip() for c in _ASK_COLS.split(","))
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {cols}, t.last_seen, t.ended, t.waiting_until, t.pid, t.machine FROM asks a "
                              "LEFT JOIN sessions t ON t.id = a.target WHERE a.ticket = ?", (ticket,))
        if not rows:
            raise NotFound(f"ask {ticket}")
        return Ask(*rows[0][:9]), tuple(rows[0][9:])

    def _finish(self, ticket: str, state: str) -> AskResult:
        """Resolve a pending ticket as ``state`` unless something else resolved it first."""
        with self.backend.transaction() as tx:
            self._resolve_in(tx, ticket, state)
            row = tx.execute("SELECT state, answer FROM asks WHERE ticket = ?", (ticket,))[0]
        return AskResult(OUTCOMES[row[0]], row[1], ticket)

    def _resolve_in(self, tx, ticket: str, state: str, answer: str | None = None, *, target: str | None = None) -> bool:
        """Resolve ``ticket`` from pending (only if asked of ``target`` when given); False if it was not pending."""
        now = self.clock()
        sql = "UPDATE asks SET state = ?, answer = ?, resolved = ? WHERE ticket = ? AND state = 'pending'"
        params: list = [state, answer, now, ticket]
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        rows = tx.execute(sql + " RETURNING asker, target", params)
        if len(rows) != 1:
            return False
        asker, target = rows[0]
        tx.execute("UPDATE sessions SET waiting_ticket = NULL, waiting_until = NULL WHERE id = ? AND waiting_ticket = ?",
                   (asker, ticket))
        status = {"replied": "done", "stalled": "stalled"}.get(state)
        if status:
            self.livestate.set_in(tx, target, {"status": status}, writer=asker if state != "replied" else target)
        self._audit(tx, target if state == "replied" else asker, "reply" if state == "replied" else state,
                    f"ask:{ticket}", asker=asker, target=target)
        tx.notify("brain_ask")
        log.debug("ask %s resolved: %s", ticket, OUTCOMES[state])
        return True

    # -- the target's side ----------------------------------------------------------
    def reply(self, session: str, ticket: str, answer: str) -> AskResult:
        """Answer an ask made of ``session``; a second reply, or one after resolution, is refused."""
        answer = self._clean(answer, "answer", self.config.text_max)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            if not self._resolve_in(tx, ticket, "replied", answer, target=session):  # the happy path: one update
                rows = tx.execute("SELECT target, state FROM asks WHERE ticket = ?", (ticket,))
                if not rows:
                    raise NotFound(f"ask {ticket}")
                target, state = rows[0]
                raise ReplyRefused(ticket, "not_target" if target != session else state)
            asker = tx.execute("SELECT asker FROM asks WHERE ticket = ?", (ticket,))[0][0]
        self._emit("reply", ticket=ticket, speaker=session, to=asker, text=answer)
        return AskResult("reply", answer, ticket)

    def _emit(self, kind: str, **event) -> None:
        """Tell the observer (the conversation log, wired by the composition root) after the commit.

        Recording is a side effect for humans: its failure never fails the ask or the reply."""
        observer = self.observer
        if observer is None:
            return
        try:
            observer(kind, event)
        except Exception as exc:  # noqa: BLE001 - a log failure must not break coordination
            log.debug("could not record %s %s in the log: %s", kind, event.get("ticket"), exc)

    def inbox(self, session: str) -> list[dict]:
        """Asks waiting on ``session``, oldest first: ``[{"ticket", "from", "question"}]``."""
        self.sweep()
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            rows = tx.execute("SELECT ticket, asker, question, deadline FROM asks WHERE target = ? AND state = 'pending' "
                              "ORDER BY created, ticket", (session,))
        return [{"ticket": r[0], "from": r[1], "question": r[2], "deadline": r[3]} for r in rows]

    def sweep(self) -> list[tuple[str, str]]:
        """Resolve tickets nobody resolved: past their deadline (timeout), target silent (stalled),
        asker gone (abandoned). Safe to call from anywhere, any time."""
        done = []
        with self.backend.transaction() as tx:
            now = self.clock()
            self._expire_in(tx, now)
            rows = tx.execute("SELECT a.ticket, a.deadline, t.last_seen, t.ended, t.waiting_until, t.pid, t.machine, "
                              "s.last_seen, s.ended, s.waiting_until, s.pid, s.machine FROM asks a "
                              "LEFT JOIN sessions t ON t.id = a.target LEFT JOIN sessions s ON s.id = a.asker "
                              "WHERE a.state = 'pending'")
            for row in rows:
                ticket, deadline, target, asker = row[0], row[1], row[2:7], row[7:12]
                if now >= deadline:
                    state = "timeout"
                elif target[0] is None or self._liveness(now, *target) != ALIVE:
                    state = "stalled"
                elif asker[0] is None or self._liveness(now, *asker) == "gone":
                    state = "abandoned"
                else:
                    continue
                if self._resolve_in(tx, ticket, state):
                    done.append((ticket, state))
        return done

    def asks(self, *, session: str | None = None, pending_only: bool = True) -> list[Ask]:
        sql, params = f"SELECT {_ASK_COLS} FROM asks WHERE 1 = 1", []
        if pending_only:
            sql += " AND state = 'pending'"
        if session is not None:
            sql += " AND (asker = ? OR target = ?)"
            params += [session, session]
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(sql + " ORDER BY created, ticket", params)
        return [Ask(*r) for r in rows]


