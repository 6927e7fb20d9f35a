"""Group commit: the requests of many threads run by one of them in one write transaction.

Why: every coordination write is serialised (one writer at a time, ids and fences in commit
order), so under a busy team server a claim spends most of its time queued behind the others, and
each one pays its own BEGIN, writers' lock, fence read and COMMIT (on PostgreSQL two round trips
with the lock held, each a wake-up of PostgreSQL's process on the same cores). Here the requests
that arrive while a transaction is running wait for it to end; the first of them then runs all of
them in the next transaction (leader and followers, as a database's own group commit): one lock,
one pair of batches, one commit for the group. Each caller still gets its own answer: the leader's
``run`` returns one result per request (a value, an exception the caller raises, or ``None``: the
caller takes the general path alone, in its own transaction).

Nothing here knows SQL: ``brain.coord.claiming`` gives the claims' ``run``. A group is at most
``limit`` requests (a server runs at most ``brain.mcp.calls.TOOL_THREADS`` tool calls at once).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

__all__ = ["GroupCommit"]


class _Slot:
    __slots__ = ("request", "result", "done", "lead")

    def __init__(self, request) -> None:
        self.request = request
        self.result: Any = None
        self.done = threading.Event()
        self.lead = False  # set by the leader that hands the next group to this slot's thread


class GroupCommit:
    """``submit(request)`` from any thread: the result of ``run([..., request, ...])`` for that request."""

    def __init__(self, run: Callable[[list], Sequence[Any]], *, limit: int = 64) -> None:
        self._run = run
        self.limit = limit
        self._cond = threading.Condition(threading.Lock())  # guards the queue; notified on each arrival
        self._pending: list[_Slot] = []
        self._busy = False  # a leader is running a group: arrivals wait for the next one
        self.groups = 0  # groups run, and the requests in them (what the benches and tests read)
        self.requests = 0

    def submit(self, request):
        slot = _Slot(request)
        with self._cond:
            self._pending.append(slot)
            lead = not self._busy
            self._busy = True
            self._cond.notify_all()
        if not lead:
            slot.done.wait()
            if not slot.lead:
                return slot.result
        return self._lead(slot)

    def _lead(self, own: _Slot):
        with self._cond:
            group, self._pending = self._pending[:self.limit], self._pending[self.limit:]
            self.groups += 1
            self.requests += len(group)
        assert group and group[0] is own  # the leader's slot heads the queue: it arrived first or was handed it
        interrupted = None
        try:
            results = list(self._run([s.request for s in group]))
            if len(results) != len(group):
                raise RuntimeError(f"group commit: {len(results)} results for {len(group)} requests")
        except Exception:  # noqa: BLE001 - nothing of the group is known to be written: each goes alone
            results = [None] * len(group)
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: the others go alone, this thread stops
            results, interrupted = [None] * len(group), exc
        for slot, result in zip(group, results):
            slot.result = result
            if slot is not own:
                slot.done.set()
        with self._cond:
            if self._pending:  # the next group is everyone who arrived meanwhile: its first thread leads it
                nxt = self._pending[0]
                nxt.lead = True
                nxt.done.set()
            else:
                self._busy = False
        if interrupted is not None:
            raise interrupted
        return own.result

    def wait_pending(self, count: int, timeout: float) -> bool:
        """Block until ``count`` requests wait for the next group (tests: forming a group without sleeping)."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._pending) >= count, timeout)
