"""A claim in two batches of statements: the team server's hottest write, on the writers' lock.

Why: every write holds the writers' lock (SQLite's, or PostgreSQL's advisory lock) until it commits,
so on PostgreSQL each round trip inside a claim is time every other writer waits (and a wake-up of
PostgreSQL's process on the same cores). The general path (``Coordinator.claim`` after this returns
None) makes about nine; this one makes two, with the same rows, audit and order:

1. reads, with BEGIN and the lock: the session is live; the held claims whose lease ends before a
   bound a little after the clock read before the lock (the lease of each that has ended when the
   lock is held expires now); this machine's sessions with a process or a folder to check; the fence
   counter; the candidate overlaps through the prefix index (every live one, filtered again below).
2. writes and COMMIT: the heartbeat, each expiry and its audit row, the fence, the claim, its audit.

The time of the claim is read once the lock is held, as on the general path, so granted times follow
commit order. The reads are a superset of what that time needs; when they cannot be (the lock took
longer than ``LOCK_WAIT_BOUND``, the clock went back) or there is a session to end first (its
worktree removed, its process gone), nothing was written yet and the caller takes the general path.
"""

from __future__ import annotations

from ..errors import NotFound
from .model import Grant, Overlap
from .overlap import claim_prefix, item_kind, normalized_overlap as items_overlap

__all__ = ["AUDIT_SQL", "GONE_SQL", "LOCK_WAIT_BOUND", "claim_in_two_batches", "no_session"]

AUDIT_SQL = "INSERT INTO audit (at, session, action, subject, detail) VALUES (?, ?, ?, ?, ?)"
# this machine's live sessions that gave a process id or a folder: the ones a claim may have to end first
GONE_SQL = ("SELECT id, pid, worktree_path FROM sessions WHERE ended IS NULL AND machine = ? "
            "AND (pid IS NOT NULL OR worktree_path IS NOT NULL)")
# seconds the lock may take before the reads of batch 1 no longer cover the claim's time
LOCK_WAIT_BOUND = 5.0

_LIVE_SESSION = "SELECT 1 FROM sessions WHERE id = ? AND ended IS NULL"
_ENDING = "SELECT id, session, item, expires FROM claims WHERE state = 'held' AND expires <= ?"
_FENCE = "SELECT value FROM counters WHERE name = 'fence'"
_SET_FENCE = ("INSERT INTO counters (name, value) VALUES ('fence', ?) "
              "ON CONFLICT (name) DO UPDATE SET value = excluded.value")
_INSERT = ("INSERT INTO claims (session, item, kind, prefix, fence, granted, expires) "
           "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id")
# the claim's id is known only once inserted: its audit row names it through its unique fence
_AUDIT_GRANT = ("INSERT INTO audit (at, session, action, subject, detail) "
                "SELECT ?, ?, ?, 'claim:' || id, ? FROM claims WHERE fence = ?")


def no_session(session: str) -> NotFound:
    return NotFound(f"live session {session}", hint="start one with `brain session start --role R`")


def claim_in_two_batches(coord, tx, session: str, item: str, lease: float) -> Grant | None:
    """Grant ``item`` to ``session`` in ``tx`` in two batches; None (nothing written) for the general path.

    ``item`` is cleaned and ``lease`` checked by the caller, ``coord`` is the ``Coordinator``."""
    before = coord.clock()
    alive, ending, gone, counter, *candidates = tx.batch([
        (_LIVE_SESSION, (session,)), (_ENDING, (before + LOCK_WAIT_BOUND,)), (GONE_SQL, (coord.machine,)),
        (_FENCE, ()), *coord._overlap_statements(item, session, before)])
    if not alive:
        raise no_session(session)
    now = coord.clock()  # the lock is held
    removed, dead = coord._gone_from(gone)
    if removed or dead or not before <= now <= before + LOCK_WAIT_BOUND:
        return None
    expired = [row for row in ending if row[3] <= now]
    overlaps = [Overlap(s, i, cid) for cid, s, i, expires in sorted(r for rows in candidates for r in rows)
                if expires > now and items_overlap(i, item)]
    fence = int(counter[0][0]) + 1 if counter else 1
    writes = [("UPDATE sessions SET last_seen = ? WHERE id = ? AND ended IS NULL", (now, session))]
    for cid, holder, held, _ in expired:
        writes += [("UPDATE claims SET state = 'expired', ended = ? WHERE id = ?", (now, cid)),
                   (AUDIT_SQL, coord._audit_row(holder, "expire", f"claim:{cid}", item=held))]
    at, _, action, _, detail = coord._audit_row(session, "grant", "claim:", item=item, fence=fence, ttl=lease,
                                                overlaps=[o.to_dict() for o in overlaps])
    writes += [(_SET_FENCE, (fence,)),
               (_INSERT, (session, item, item_kind(item), claim_prefix(item), fence, now, now + lease)),
               (_AUDIT_GRANT, (at, session, action, detail, fence))]
    tx.notify("brain_claims")
    cid = tx.batch(writes, commit=True)[-2][0][0]
    return Grant(cid, fence, item, session, now + lease, overlaps)
