"""Claims in two batches of statements: the team server's hottest write, on the writers' lock.

Why: every write holds the writers' lock (SQLite's, or PostgreSQL's advisory lock) until it commits,
so on PostgreSQL each round trip inside a claim is time every other writer waits (and a wake-up of
PostgreSQL's process on the same cores). The general path (``Coordinator.claim`` after this returns
None) makes about nine; this one makes two, with the same rows, audit and order, for one claim or for
a group of claims that arrived together (``brain.coord.groupcommit``, decision 0039):

1. reads, with BEGIN and the lock: the sessions are live; the held claims whose lease ends before a
   bound a little after the clock read before the lock (the lease of each that has ended when the
   lock is held expires now); this machine's sessions with a process or a folder to check; the fence
   counter; each claim's candidate overlaps through the prefix index (every live one, filtered below).
2. writes and COMMIT: the heartbeats, each expiry and its audit row, the fence, the claims, their audit
   (in a third batch when a claim overlaps one granted earlier in the group: its row names that id).

The time of the claims is read once the lock is held, as on the general path, so granted times follow
commit order. The reads are a superset of what that time needs; when they cannot be (the lock took
longer than ``LOCK_WAIT_BOUND``, the clock went back) or there is a session to end first (its
worktree removed, its process gone), nothing was written yet and each caller takes the general path.
"""

from __future__ import annotations

import copy

from ..errors import NotFound
from .model import Grant, Overlap
from .overlap import claim_prefix, item_kind, normalized_overlap as items_overlap

__all__ = ["AUDIT_SQL", "GONE_SQL", "LOCK_WAIT_BOUND", "claim_group", "no_session", "run_claim_group"]

AUDIT_SQL = "INSERT INTO audit (at, session, action, subject, detail) VALUES (?, ?, ?, ?, ?)"
# this machine's live sessions that gave a process id or a folder: the ones a claim may have to end first
GONE_SQL = ("SELECT id, pid, worktree_path FROM sessions WHERE ended IS NULL AND machine = ? "
            "AND (pid IS NOT NULL OR worktree_path IS NOT NULL)")
# seconds the lock may take before the reads of batch 1 no longer cover the claim's time
LOCK_WAIT_BOUND = 5.0

_LIVE_SESSIONS = "SELECT id FROM sessions WHERE ended IS NULL AND id IN ("
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


def run_claim_group(coord, requests: list[tuple[str, str, float]]) -> list:
    """``claim_group`` in a write transaction of its own (the ``run`` of the coordinator's ``GroupCommit``).

    A failure before the writes were sent raises: nothing was written, and each caller takes the general
    path alone. A failure once they were sent (the connection lost around COMMIT) may have committed them:
    each caller gets the error, as a claim of its own would have, rather than a second claim."""
    sent = []
    try:
        with coord.backend.transaction() as tx:
            return claim_group(coord, _Sending(tx, sent), requests)
    except Exception as exc:
        if not sent:
            raise
        return [copy.copy(exc) for _ in requests]


class _Sending:
    """The transaction, noting in ``sent`` when a batch of writes goes out (every batch after the reads)."""

    def __init__(self, tx, sent: list) -> None:
        self.tx, self.sent, self.reads_done = tx, sent, False

    def batch(self, statements, *, commit: bool = False):
        if self.reads_done:
            self.sent.append(True)
        self.reads_done = True
        return self.tx.batch(statements, commit=commit)

    def notify(self, channel: str) -> None:
        self.tx.notify(channel)


def claim_group(coord, tx, requests: list[tuple[str, str, float]]) -> list:
    """Grant each ``(session, item, lease)`` in ``tx``, in order, as if claimed one after the other.

    One result per request: its ``Grant``, a ``NotFound`` for a session that is not live (nothing written
    for it; the others go on), or None for all (nothing written: each takes the general path alone).
    Two batches (three when a claim overlaps one granted earlier in the group: its audit row names that
    claim's id, known once inserted): the reads of every request with BEGIN and the lock, then the writes
    with COMMIT. The overlaps of each claim are the live ones read plus the group's earlier grants of
    other sessions, so each caller gets what it would have got from a transaction of its own."""
    before = coord.clock()
    sessions = list(dict.fromkeys(session for session, _, _ in requests))
    reads = [(_LIVE_SESSIONS + ", ".join("?" * len(sessions)) + ")", sessions),
             (_ENDING, (before + LOCK_WAIT_BOUND,)), (GONE_SQL, (coord.machine,)), (_FENCE, ())]
    spans = []
    for session, item, _ in requests:
        statements = coord._overlap_statements(item, session, before)
        spans.append(len(statements))
        reads += statements
    alive, ending, gone, counter, *candidates = tx.batch(reads)
    alive = {row[0] for row in alive}
    now = coord.clock()  # the lock is held
    removed, dead = coord._gone_from(gone)
    if removed or dead or not before <= now <= before + LOCK_WAIT_BOUND:
        return [None] * len(requests)
    results: list = []
    granted: list[tuple[str, str, float, int, list, list[int]]] = []  # session, item, lease, fence, read, group
    fence = int(counter[0][0]) if counter else 0
    at = 0
    for (session, item, lease), span in zip(requests, spans):
        rows = [r for part in candidates[at:at + span] for r in part]
        at += span
        if session not in alive:
            results.append(no_session(session))
            continue
        fence += 1
        read = [Overlap(s, i, cid) for cid, s, i, expires in sorted(rows) if expires > now and items_overlap(i, item)]
        earlier = [k for k, g in enumerate(granted) if g[0] != session and items_overlap(g[1], item)]
        results.append(len(granted))  # replaced by the Grant once its id is known
        granted.append((session, item, lease, fence, read, earlier))
    if not granted:
        return results
    expired = [row for row in ending if row[3] <= now]
    writes = [("UPDATE sessions SET last_seen = ? WHERE id = ? AND ended IS NULL", (now, session))
              for session in dict.fromkeys(g[0] for g in granted)]
    for cid, holder, held, _ in expired:
        writes += [("UPDATE claims SET state = 'expired', ended = ? WHERE id = ?", (now, cid)),
                   (AUDIT_SQL, coord._audit_row(holder, "expire", f"claim:{cid}", item=held))]
    writes.append((_SET_FENCE, (fence,)))
    first_insert = len(writes)
    writes += [(_INSERT, (session, item, item_kind(item), claim_prefix(item), g_fence, now, now + lease))
               for session, item, lease, g_fence, _, _ in granted]
    tx.notify("brain_claims")
    if not any(g[5] for g in granted):  # no claim overlaps another of the group: the audit rows name their fence
        audits = []
        for session, item, lease, g_fence, read, _ in granted:
            at_, _, action, _, detail = coord._audit_row(session, "grant", "claim:", item=item, fence=g_fence,
                                                         ttl=lease, overlaps=[o.to_dict() for o in read])
            audits.append((_AUDIT_GRANT, (at_, session, action, detail, g_fence)))
        done = tx.batch(writes + audits, commit=True)
        ids = [done[first_insert + k][0][0] for k in range(len(granted))]
        overlaps = [g[4] for g in granted]
    else:
        done = tx.batch(writes)
        ids = [done[first_insert + k][0][0] for k in range(len(granted))]
        overlaps, audits = [], []
        for cid, (session, item, lease, g_fence, read, earlier) in zip(ids, granted):
            found = read + [Overlap(granted[k][0], granted[k][1], ids[k]) for k in earlier]
            overlaps.append(found)
            audits.append((AUDIT_SQL, coord._audit_row(session, "grant", f"claim:{cid}", item=item, fence=g_fence,
                                                       ttl=lease, overlaps=[o.to_dict() for o in found])))
        tx.batch(audits, commit=True)
    return [r if not isinstance(r, int) else
            Grant(ids[r], granted[r][3], granted[r][1], granted[r][0], now + granted[r][2], overlaps[r])
            for r in results]
