"""Ask / reply rendezvous with three bounded exits.

``ask(target, question)`` arms a durable ticket row carrying its absolute deadline,
then waits client-side: each wait turn re-reads the row, so a reply written before
the asker starts waiting is never missed, and a wake-up (condition variable, or
``LISTEN/NOTIFY``) only shortens the poll. Exactly one of reply / target Stalled /
absolute timeout resolves the ticket, by a conditional update from ``pending``:
whichever commits first wins and the others are refused. Because the deadline is in
the row, an asker whose server restarted calls ``wait(ticket)`` again and is still
released on time; ``sweep`` resolves overdue tickets nobody waits on.

Arming sets the target's live state Working with the question as its delegation; the ticket
keeps what it found there (``prior_status``/``prior_delegation``; the first pending ask's copy
when several wait on one target). Every resolution restores it in the same transaction as the
conditional update, so no exit leaves a target Working for good: a field is restored only while
it still holds what the ask put there (a status the target set itself meanwhile stands). A
timeout, stall or abandonment is told to the observer as an ``ask_end`` turn, so the thread's
handoff records the question once, with how it ended.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from ..errors import NotFound, ReplyRefused, WaitCycle
from .model import Ask, AskResult
from .rules import ALIVE, resolve_turn_timeout

__all__ = ["AsksMixin", "OUTCOMES"]

log = logging.getLogger("brain.coord.ask")

OUTCOMES = {"replied": "reply", "stalled": "stalled", "timeout": "timeout", "abandoned": "timeout"}
_ASK_COLS = "ticket, asker, target, question, state, answer, created, deadline, resolved"
HEARTBEAT_EVERY = 1.0  # a waiting asker refreshes its own liveness at most this often


def _delegation(asker: str, question: str) -> str:
    """The live-state delegation an ask writes on its target (one line, within the field's bound)."""
    return f"asked by {asker}: {' '.join(question.split())}"[:290]


_ENDINGS = {"stalled": "target stalled, no reply", "abandoned": "asker gone, no reply"}


@dataclass(frozen=True)
class _Resolved:
    """A ticket this transaction resolved: what restoring the target and recording the end need."""

    ticket: str
    state: str  # replied | timeout | stalled | abandoned
    asker: str
    target: str
    limit: float  # seconds the asker gave it (deadline - created)
    prior_status: str | None
    prior_delegation: str | None
    delegation: str  # what the ask wrote on the target

    def ending(self) -> str:
        """How the ask ended, in the words of the handoff."""
        if self.state == "timeout":
            return f"timed out after {round(self.limit, 1):g} s, no reply"
        return _ENDINGS.get(self.state, "answered")


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
            prior_status, prior_delegation = self._live_before(tx, target, now)
            entry = self.livestate.set_in(tx, target, {"status": "working", "delegation": _delegation(session, question)},
                                          writer=session)
            tx.execute(f"INSERT INTO asks ({_ASK_COLS}, prior_status, prior_delegation, ask_delegation) "
                       "VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?, NULL, ?, ?, ?)",
                       (ticket, session, target, question, now, deadline, prior_status, prior_delegation,
                        entry.delegation))
            tx.execute("UPDATE sessions SET waiting_ticket = ?, waiting_until = ? WHERE id = ?", (ticket, deadline, session))
            self._audit(tx, session, "ask", f"ask:{ticket}", target=target, deadline=deadline)
            tx.notify("brain_ask")
        log.debug("ask %s armed: %s -> %s, deadline in %.1f s", ticket, session, target, limit)
        self._emit("ask", ticket=ticket, speaker=session, to=target, text=question)
        return Ask(ticket, session, target, question, "pending", None, now, deadline, None)

    def _live_before(self, tx, target: str, now: float) -> tuple[str | None, str | None]:
        """The target's (status, delegation) before any ask waiting on it: the oldest pending ask's copy,
        else the live-state row (None, None when there is none or it is past its TTL: restored as idle)."""
        rows = tx.execute("SELECT prior_status, prior_delegation FROM asks WHERE target = ? AND state = 'pending' "
                          "ORDER BY created, ticket LIMIT 1", (target,))
        if not rows:
            rows = tx.execute("SELECT status, delegation FROM livestate WHERE key = ? AND updated >= ?",
                              (target, now - self.livestate.limits.ttl))
        return (rows[0][0], rows[0][1]) if rows else (None, None)

    def _restore_target(self, tx, resolved: "_Resolved") -> None:
        """After a ticket resolved: the target back to its state before the asks, or, while another ask
        still waits on it, Working on that one. Only fields still holding what this ask put there."""
        rows = tx.execute("SELECT status, delegation FROM livestate WHERE key = ?", (resolved.target,))
        if not rows or rows[0][1] != resolved.delegation:
            return  # pruned, or the target (or someone) wrote its own delegation since: theirs stands
        pending = tx.execute("SELECT asker, question, ask_delegation FROM asks WHERE target = ? AND state = 'pending' "
                             "ORDER BY created DESC, ticket DESC LIMIT 1", (resolved.target,))
        if pending:
            values = {"delegation": pending[0][2] or _delegation(pending[0][0], pending[0][1])}
        else:
            values = {"delegation": resolved.prior_delegation or ""}
            if rows[0][0] == "working":
                values["status"] = resolved.prior_status or "idle"
        self.livestate.set_in(tx, resolved.target, values,
                              writer=resolved.target if resolved.state == "replied" else resolved.asker)

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
            resolved = self._resolve_in(tx, ticket, state)
            row = tx.execute("SELECT state, answer FROM asks WHERE ticket = ?", (ticket,))[0]
        if resolved is not None:
            self._emit_end(resolved)
        return AskResult(OUTCOMES[row[0]], row[1], ticket)

    def _resolve_in(self, tx, ticket: str, state: str, answer: str | None = None, *,
                    target: str | None = None) -> "_Resolved | None":
        """Resolve ``ticket`` from pending (only if asked of ``target`` when given), restoring the target's
        live state in the same transaction; None if it was not pending (someone else resolved it first)."""
        now = self.clock()
        sql = "UPDATE asks SET state = ?, answer = ?, resolved = ? WHERE ticket = ? AND state = 'pending'"
        params: list = [state, answer, now, ticket]
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        rows = tx.execute(sql + " RETURNING asker, target, question, created, deadline, prior_status, "
                                "prior_delegation, ask_delegation", params)
        if len(rows) != 1:
            return None
        asker, target, question, created, deadline, prior_status, prior_delegation, delegation = rows[0]
        resolved = _Resolved(ticket, state, asker, target, deadline - created, prior_status, prior_delegation,
                             delegation if delegation is not None else _delegation(asker, question))
        tx.execute("UPDATE sessions SET waiting_ticket = NULL, waiting_until = NULL WHERE id = ? AND waiting_ticket = ?",
                   (asker, ticket))
        self._restore_target(tx, resolved)
        self._audit(tx, target if state == "replied" else asker, "reply" if state == "replied" else state,
                    f"ask:{ticket}", asker=asker, target=target)
        tx.notify("brain_ask")
        log.debug("ask %s resolved: %s", ticket, OUTCOMES[state])
        return resolved

    def _emit_end(self, resolved: "_Resolved") -> None:
        """An ask that ended without a reply, told to the observer (after the commit) with how it ended."""
        if resolved.state != "replied":
            self._emit("ask_end", ticket=resolved.ticket, speaker=resolved.asker, to=resolved.target,
                       text=resolved.ending())

    # -- the target's side ----------------------------------------------------------
    def reply(self, session: str, ticket: str, answer: str) -> AskResult:
        """Answer an ask made of ``session``; a second reply, or one after resolution, is refused."""
        answer = self._clean(answer, "answer", self.config.text_max)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            if self._resolve_in(tx, ticket, "replied", answer, target=session) is None:  # the happy path: one update
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

    def pending_asks(self, session: str) -> list[dict]:
        """``inbox`` without its writes (no sweep, no heartbeat): one read, for a watcher that polls it."""
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute("SELECT ticket, asker, question, deadline FROM asks WHERE target = ? AND state = 'pending' "
                              "ORDER BY created, ticket", (session,))
        return [{"ticket": r[0], "from": r[1], "question": r[2], "deadline": r[3]} for r in rows]

    def sweep(self) -> list[tuple[str, str]]:
        """Resolve tickets nobody resolved: past their deadline (timeout), target silent (stalled),
        asker gone (abandoned). Safe to call from anywhere, any time."""
        done, ended = [], []
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
                resolved = self._resolve_in(tx, ticket, state)
                if resolved is not None:
                    done.append((ticket, state))
                    ended.append(resolved)
            self._release_left_behind(tx)
        for resolved in ended:
            self._emit_end(resolved)
        return done

    def _release_left_behind(self, tx) -> None:
        """Targets an older brain left Working (or Stalled) for good: set so by an ask (its delegation, an
        asker's write) that ended before tickets kept the state to restore, and no ask waits on them now.
        Back to idle, once: the restore of every ask that ends now leaves no such row behind."""
        rows = tx.execute("SELECT v.key FROM livestate v WHERE v.status IN ('working', 'stalled') "
                          "AND v.delegation LIKE 'asked by %' AND (v.writer IS NULL OR v.writer <> v.key) "
                          "AND NOT EXISTS (SELECT 1 FROM asks a WHERE a.target = v.key AND a.state = 'pending')")
        for (key,) in rows:
            self.livestate.set_in(tx, key, {"status": "idle", "delegation": ""}, writer=None)

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


