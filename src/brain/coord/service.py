"""The coordination API: sessions, claims, signals, checkpoints, audit (asks in asks.py).

Every public method is one short transaction on the backend, written once in
portable SQL. Every call that names a session is also that session's heartbeat.
Time comes from an injectable clock, so expiry, stall windows and timeouts are
tested without sleeping. Pure rules (overlap, liveness, lease expiry) live in
``overlap.py`` and ``rules.py``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Callable

from ..bounds import MAX_COUNT, MAX_ID, bounded_int
from ..errors import ClaimLost, InvalidInput, NotFound
from ..livestate.store import LiveLimits, LiveState
from ..memory.files import pid_alive  # re-exported: one liveness check
from ..security.redact import Redactor, redact_fields, refuse_secret_name
from .asks import AsksMixin
from .claiming import AUDIT_SQL, GONE_SQL as _GONE_SQL, no_session, run_claim_group
from .groupcommit import GroupCommit
from .model import Checkpoint, ClaimInfo, Grant, Overlap, OverlapReport, SessionInfo, Signal, AuditEvent, Worktree
from .overlap import (candidate_prefixes, claim_prefix, item_kind, normalize_item,
                      normalized_overlap as items_overlap, overlapping_pairs, relative_to_root)
from .rules import ALIVE, GONE, CoordConfig, check_text, claim_live, clean_role, liveness, session_id

__all__ = ["Coordinator", "pid_alive"]


def _claim_id(claim) -> int:
    """A claim id from a caller, bounded to the stores' 64-bit integers (InvalidInput otherwise)."""
    return bounded_int(claim, "claim", low=0, high=MAX_ID)

log = logging.getLogger("brain.coord")


def _check_session(session) -> None:
    if not isinstance(session, str) or not session:
        raise InvalidInput("a session id is required (`brain session start --role R` gives one)", field="session")


_SESSION_COLS = ("id, role, machine, brain, started, last_seen, ended, waiting_ticket, waiting_until, pid, "
                 "worktree, branch, worktree_path")
_CLAIM_COLS = "id, session, item, fence, granted, expires, state"
# SQLite refuses a compound SELECT of more than 500 terms: a claim 400 characters deep has 200 ancestors
_BRANCHES_PER_STATEMENT = 100


class Coordinator(AsksMixin):
    """Coordination of the sessions of one brain on one backend."""

    def __init__(self, backend, *, brain_name: str = "brain", machine: str = "localhost",
                 clock: Callable[[], float] = time.time, config: CoordConfig = CoordConfig(),
                 live_limits: LiveLimits = LiveLimits(), redact: Callable[[str], str] | None = None,
                 worktree: Worktree | None = None, repo_root: str | None = None) -> None:
        self.backend = backend
        # the working tree this process runs in (recorded on the sessions it starts), and the folder claim
        # paths are relative to: an absolute path inside it is stored relative, the same item in every worktree
        self.worktree = worktree
        self.repo_root = repo_root
        self.brain_name = brain_name
        self.machine = machine
        self.clock = clock
        self.config = config
        # every text a session stores (claim items, signals, checkpoints, asks, replies, overlap
        # decisions) passes here before its row is written; the brain's redactor, else the built-in one
        self.redact = redact if redact is not None else Redactor()
        self.livestate = LiveState(backend, clock=clock, limits=live_limits, redact=self.redact)
        self._claims = GroupCommit(lambda requests: run_claim_group(self, requests))

    def _clean(self, value, field: str, limit: int, *, allow_empty: bool = False) -> str:
        """Checked (type, size of what was sent), then redacted: what a row of this store may hold."""
        return self.redact(check_text(value, field, limit, allow_empty=allow_empty))

    def _liveness(self, now: float, last_seen: float, ended, waiting_until, pid=None, machine=None,
                  worktree_path=None) -> str:
        """Liveness from heartbeats, plus, for sessions of this machine, a dead-process check (when they gave
        a pid) and a removed-worktree check (`git worktree remove` took their folder: gone at once)."""
        alive = pid_alive(int(pid)) if pid and machine == self.machine and ended is None else None
        if ended is None and self._worktree_removed(worktree_path, machine):
            alive = False
        return liveness(now, last_seen, ended, waiting_until, self.config, alive)

    def _worktree_removed(self, worktree_path, machine) -> bool:
        """Whether a session's recorded working tree, on this machine, no longer exists."""
        return bool(worktree_path) and machine == self.machine and not os.path.isdir(worktree_path)

    def _gone_sessions(self, tx) -> tuple[list[str], list[str]]:
        """Sessions of this machine, not ended, that are gone for sure: ``(removed, dead)``.

        ``removed``: their working tree folder no longer exists (`git worktree remove`). ``dead``: the others
        holding a claim whose registered process no longer exists (an MCP server killed with SIGKILL), so
        their claims stop counting at once instead of at the end of their lease. One read of the live sessions
        of this machine that gave a pid or a folder (one round trip: every claim pays it, and on PostgreSQL
        a round trip is what serialized writers wait on), a stat of each distinct folder, a signal-0 probe
        of each pid; kept off the claims table (hundreds of rows when the sessions hold tens of folders)."""
        removed, dead = self._gone_from(tx.execute(_GONE_SQL, (self.machine,)))
        # then whether each dead one holds a claim, by (session, state): never a join over every held claim
        return removed, [sid for sid in dead if tx.execute("SELECT 1 FROM claims WHERE session = ? AND "
                                                           "state = 'held' LIMIT 1", (sid,))]

    def _gone_from(self, rows) -> tuple[list[str], list[str]]:
        """``(removed, dead)`` from the rows of ``_GONE_SQL``: ``dead`` not yet narrowed to claim holders."""
        if not rows:
            return [], []
        folders = {path for _, _, path in rows if path}
        missing = {path for path in folders if not os.path.isdir(path)}
        removed = [sid for sid, _, path in rows if path in missing]
        return removed, [sid for sid, pid, path in rows if pid is not None and path not in missing
                         and not pid_alive(int(pid))]

    @property
    def broadcast_address(self) -> str:
        return f"{self.brain_name}@{self.machine}"

    # -- audit -------------------------------------------------------------------
    def _audit(self, tx, session: str | None, action: str, subject: str, **detail) -> None:
        """One audit row; its subject and every field of its detail pass the redactor here, whatever the caller
        cleaned already: the audit is kept longest, so it is the last place a forgotten field may leak."""
        tx.execute(AUDIT_SQL, self._audit_row(session, action, subject, **detail))

    def _audit_row(self, session: str | None, action: str, subject: str, **detail) -> tuple:
        """The parameters of ``AUDIT_SQL`` for one audit row (``_audit``'s redaction)."""
        detail = redact_fields(json.loads(json.dumps(detail, default=str)), self.redact)
        return (self.clock(), session, action, self.redact(subject), json.dumps(detail, sort_keys=True))

    def history(self, *, limit: int = 100, subject: str | None = None, session: str | None = None,
                action: str | None = None) -> list[AuditEvent]:
        """Audit events, newest first."""
        sql, params = "SELECT id, at, session, action, subject, detail FROM audit WHERE 1 = 1", []
        for column, value in (("subject", subject), ("session", session), ("action", action)):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(sql + " ORDER BY id DESC LIMIT ?",
                              (*params, bounded_int(limit, "limit", low=1, high=MAX_COUNT)))
        return [AuditEvent(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    # -- sessions ------------------------------------------------------------------
    def start_session(self, role: str, *, pid: int | None = None) -> SessionInfo:
        """A new live session; its id is unique even when several start in the same minute."""
        role = clean_role(role)
        now = self.clock()
        with self.backend.transaction() as tx:
            sid = self._insert_session(tx, role, pid, now)
        log.debug("session %s started", sid)
        return self._new_info(sid, role, now)

    def _new_info(self, sid: str, role: str, now: float) -> SessionInfo:
        wt = self.worktree
        return SessionInfo(sid, role, self.machine, self.brain_name, now, now, ALIVE,
                           worktree=wt.name if wt else None, branch=wt.branch if wt else None)

    def join_or_start_session(self, role: str, *, pid: int | None,
                              joinable: Callable[[int, float], bool]) -> tuple[SessionInfo, bool]:
        """A live session of this machine and role that ``joinable(its pid, its start)`` accepts, else a
        new one recording ``pid``; returns (info, joined).

        For the processes of one client (its hooks, its MCP server) that act as one agent: one write
        transaction, so two of them racing here end with one session.
        """
        role = clean_role(role)
        now = self.clock()
        with self.backend.transaction() as tx:  # one client works in one working tree: never join another's
            rows = tx.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE role = ? AND machine = ? AND brain = ? "
                              "AND ended IS NULL AND pid IS NOT NULL AND COALESCE(worktree_path, '') = ? "
                              "ORDER BY started DESC, id DESC",
                              (role, self.machine, self.brain_name, self.worktree.path if self.worktree else ""))
            for row in rows:
                info = self._session_info(row, now)
                if info.liveness != GONE and joinable(int(row[9]), info.started):
                    self._touch(tx, info.id)
                    self._audit(tx, info.id, "session_join", info.id, role=role, pid=pid)
                    return info, True
            sid = self._insert_session(tx, role, pid, now)
        log.debug("session %s started", sid)
        return self._new_info(sid, role, now), False

    def _insert_session(self, tx, role: str, pid: int | None, now: float) -> str:
        refuse_secret_name(self.redact, role, "role")  # the role is part of the session id, kept everywhere
        n = 1
        while True:
            sid = session_id(now, role, self.machine, n)
            wt = self.worktree
            tx.execute("INSERT INTO sessions (id, role, machine, brain, pid, started, last_seen, worktree, branch, "
                       "worktree_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                       (sid, role, self.machine, self.brain_name, pid, now, now, wt.name if wt else None,
                        wt.branch if wt else None, wt.path if wt else None))
            if tx.rowcount() == 1:
                break
            n += 1
        self._audit(tx, sid, "session_start", sid, role=role, pid=pid)
        self._prune_sessions(tx, now)  # each start tidies the list: the cost stays with the writers
        return sid

    # a session "did something" when any of these rows names it; a health check leaves none
    _DID_SOMETHING = ("EXISTS (SELECT 1 FROM claims c WHERE c.session = sessions.id) "
                      "OR EXISTS (SELECT 1 FROM asks a WHERE a.asker = sessions.id OR a.target = sessions.id) "
                      "OR EXISTS (SELECT 1 FROM checkpoints k WHERE k.session = sessions.id) "
                      "OR EXISTS (SELECT 1 FROM signals g WHERE g.sender = sessions.id) "
                      "OR EXISTS (SELECT 1 FROM livestate v WHERE v.writer = sessions.id)")

    def _prune_sessions(self, tx, now: float) -> int:
        """Delete sessions gone or ended long enough (settings coord.prune_idle_seconds for those that never
        did anything, coord.prune_gone_seconds for all). Never one holding a claim or in an open ask."""
        idle, gone = self.config.prune_idle_seconds, self.config.prune_gone_seconds
        if idle <= 0 and gone <= 0:
            return 0
        far = now + 1.0  # a cutoff no session reaches: that rule is off
        idle_cut = now - idle if idle > 0 else -far
        gone_cut = now - gone if gone > 0 else -far
        over = "COALESCE(sessions.ended, sessions.last_seen + ?)"  # when it ended, or went Gone without ending
        tx.execute(f"DELETE FROM signal_cursors WHERE session IN (SELECT id FROM sessions WHERE brain = ? AND "
                   f"(({over} < ? AND NOT ({self._DID_SOMETHING})) OR {over} < ?) "
                   "AND NOT EXISTS (SELECT 1 FROM claims h WHERE h.session = sessions.id AND h.state = 'held') "
                   "AND NOT EXISTS (SELECT 1 FROM asks w WHERE (w.asker = sessions.id OR w.target = sessions.id) "
                   "AND w.state = 'pending'))",
                   (self.brain_name, self.config.gone_seconds, idle_cut, self.config.gone_seconds, gone_cut))
        tx.execute(f"DELETE FROM sessions WHERE brain = ? AND (({over} < ? AND NOT ({self._DID_SOMETHING})) "
                   f"OR {over} < ?) "
                   "AND NOT EXISTS (SELECT 1 FROM claims h WHERE h.session = sessions.id AND h.state = 'held') "
                   "AND NOT EXISTS (SELECT 1 FROM asks w WHERE (w.asker = sessions.id OR w.target = sessions.id) "
                   "AND w.state = 'pending')",
                   (self.brain_name, self.config.gone_seconds, idle_cut, self.config.gone_seconds, gone_cut))
        return tx.rowcount()

    def prune_sessions(self) -> int:
        """Delete the sessions the prune settings say are done with (see ``_prune_sessions``); returns how many."""
        with self.backend.transaction() as tx:
            return self._prune_sessions(tx, self.clock())

    def _touch(self, tx, session: str) -> None:
        """The heartbeat carried by every call naming a session."""
        _check_session(session)
        tx.execute("UPDATE sessions SET last_seen = ? WHERE id = ? AND ended IS NULL", (self.clock(), session))
        if tx.rowcount() != 1:
            raise no_session(session)

    def heartbeat(self, session: str) -> None:
        with self.backend.transaction() as tx:
            self._touch(tx, session)

    def end_session(self, session: str) -> list[int]:
        """End a session: its claims are released, asks waiting on it resolve as silent."""
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            released = self._release_in(tx, session, None, None, reason="session_end")
            tx.execute("UPDATE sessions SET ended = ? WHERE id = ?", (self.clock(), session))
            self._audit(tx, session, "session_end", session)
            tx.notify("brain_ask")
        return released

    def discard_session(self, session: str) -> bool:
        """End a session that only said hello (a health check) and delete it, so it never lingers on the
        board; True if deleted. Kept, only ended, when it left any trace: a claim, an ask made of it or by
        it, a checkpoint, a signal, a live-state write, or another process joining it."""
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            self._release_in(tx, session, None, None, reason="session_end")
            tx.execute("UPDATE sessions SET ended = ? WHERE id = ?", (self.clock(), session))
            self._audit(tx, session, "session_end", session)
            tx.execute(f"DELETE FROM sessions WHERE id = ? AND NOT ({self._DID_SOMETHING}) AND NOT EXISTS "
                       "(SELECT 1 FROM audit j WHERE j.subject = sessions.id AND j.action = 'session_join')",
                       (session,))
            deleted = tx.rowcount() == 1
            if deleted:
                tx.execute("DELETE FROM signal_cursors WHERE session = ?", (session,))
            tx.notify("brain_ask")
        return deleted

    def _session_info(self, row, now: float) -> SessionInfo:
        sid, role, machine, brain, started, last_seen, ended, waiting_ticket, waiting_until, pid, \
            worktree, branch, worktree_path = row
        return SessionInfo(sid, role, machine, brain, started, last_seen,
                           self._liveness(now, last_seen, ended, waiting_until, pid, machine, worktree_path),
                           waiting_ticket if waiting_until else None, worktree, branch)

    def session(self, session: str) -> SessionInfo:
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session,))
        if not rows:
            raise NotFound(f"session {session}")
        return self._session_info(rows[0], self.clock())

    def sessions(self, *, include_gone: bool = False) -> list[SessionInfo]:
        now = self.clock()
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE ended IS NULL OR ? = 1 "
                              "ORDER BY started, id", (1 if include_gone else 0,))
        infos = [self._session_info(r, now) for r in rows]
        return infos if include_gone else [s for s in infos if s.liveness != GONE]

    # -- claims --------------------------------------------------------------------
    def _ttl(self, ttl: float | None) -> float:
        if ttl is None:
            return self.config.claim_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl <= self.config.max_claim_ttl:
            raise InvalidInput(f"ttl must be 1 to {int(self.config.max_claim_ttl)} seconds, not {ttl!r}", field="ttl")
        return float(ttl)

    def _expire_in(self, tx, now: float) -> list[int]:
        rows = tx.execute("SELECT id, session, item FROM claims WHERE state = 'held' AND expires <= ?", (now,))
        for cid, session, item in rows:
            tx.execute("UPDATE claims SET state = 'expired', ended = ? WHERE id = ?", (now, cid))
            self._audit(tx, session, "expire", f"claim:{cid}", item=item)
        removed, dead = self._gone_sessions(tx)
        for session in removed:  # `git worktree remove`: its claims stop counting
            self._release_in(tx, session, None, None, reason="worktree_removed", expire=False)
            tx.execute("UPDATE sessions SET ended = ? WHERE id = ?", (now, session))
            self._audit(tx, session, "session_end", session, reason="worktree_removed")
            tx.notify("brain_ask")
        for session in dead:  # killed: its claims expire now, not at lease end
            for cid, item in tx.execute("SELECT id, item FROM claims WHERE session = ? AND state = 'held'",
                                        (session,)):
                tx.execute("UPDATE claims SET state = 'expired', ended = ? WHERE id = ?", (now, cid))
                self._audit(tx, session, "expire", f"claim:{cid}", item=item, reason="process_gone")
            tx.notify("brain_claims")
        return [r[0] for r in rows]

    def _live_claims(self, tx, now: float) -> list[ClaimInfo]:
        rows = tx.execute(f"SELECT {_CLAIM_COLS} FROM claims WHERE state = 'held' AND expires > ? ORDER BY id", (now,))
        removed = set(sum(self._gone_sessions(tx), [])) if rows else set()
        return [ClaimInfo(*r) for r in rows if r[1] not in removed]

    def _overlapping(self, tx, now: float, session: str, item: str) -> list[Overlap]:
        """The live claims of other sessions that overlap ``item``, in id order.

        The database narrows them to the candidates through the index on (state, kind, prefix): the claims
        whose literal prefix is an ancestor of ``item``'s (by equality) or a descendant (one range); only
        those take the exact glob test. So a claim reads the few rows near its own path, not the board."""
        rows = [r for sql, params in self._overlap_statements(item, session, now) for r in tx.execute(sql, params)]
        return [Overlap(s, i, cid) for cid, s, i, _ in sorted(rows) if items_overlap(i, item)]

    def _overlap_statements(self, item: str, session: str, after: float) -> list[tuple[str, list]]:
        """The statements ``_overlapping`` runs: ``(id, session, item, expires)`` of the candidate claims of
        other sessions held with ``expires > after``, one statement unless the path is deep."""
        equal, low, high = candidate_prefixes(item)
        kind = item_kind(item)
        # one search of the index per ancestor (by equality) and one range for the descendants: each an
        # index lookup whatever the planner's statistics say (an OR, or an IN list, is planned as a scan of
        # every held claim by SQLite, and by PostgreSQL on a table it has not analysed yet); `+expires`
        # keeps SQLite off the (state, expires) index, which holds every live claim
        select = "SELECT id, session, item, expires FROM claims WHERE state = 'held' AND kind = ? AND "
        live = " AND +expires > ? AND session <> ?"
        branches = [(select + "prefix > ? AND prefix < ?" + live, (kind, low, high, after, session))]
        branches += [(select + "prefix = ?" + live, (kind, prefix, after, session)) for prefix in equal]
        chunks = [branches[start:start + _BRANCHES_PER_STATEMENT]
                  for start in range(0, len(branches), _BRANCHES_PER_STATEMENT)]
        return [(" UNION ALL ".join(sql for sql, _ in chunk), [v for _, ps in chunk for v in ps]) for chunk in chunks]

    def claim(self, session: str, item: str, *, ttl: float | None = None) -> Grant:
        """Grant a claim on a path (glob-aware) or ``name:ITEM``; overlapping claims come back with it."""
        if not isinstance(item, str) or not self._item(item) or self._item(item) == "name:":
            raise InvalidInput("a claim needs an item: a path, a glob, or name:ITEM", field="item")
        item = self._clean(self._item(item), "item", self.config.item_max)
        lease = self._ttl(ttl)
        _check_session(session)
        # claims arriving together (a team server's tool threads) share one transaction: brain.coord.groupcommit
        grant = self._claims.submit((session, item, lease))
        if isinstance(grant, Exception):
            raise grant
        if grant is not None:
            return grant
        with self.backend.transaction() as tx:
            # the general path (a removed worktree or a killed process to end first, a long wait for the lock)
            self._touch(tx, session)
            now = self.clock()
            self._expire_in(tx, now)
            overlaps = self._overlapping(tx, now, session, item)
            fence = self._next_fence(tx)
            rows = tx.execute("INSERT INTO claims (session, item, kind, prefix, fence, granted, expires) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                              (session, item, item_kind(item), claim_prefix(item), fence, now, now + lease))
            cid = rows[0][0]
            self._audit(tx, session, "grant", f"claim:{cid}", item=item, fence=fence, ttl=lease,
                        overlaps=[o.to_dict() for o in overlaps])
            tx.notify("brain_claims")
        return Grant(cid, fence, item, session, now + lease, overlaps)

    def _item(self, item: str) -> str:
        """A claimed item as stored: normalised, and an absolute path inside this working tree made relative
        to it, so `src/parser.py` is one item in every worktree of the repository."""
        return normalize_item(relative_to_root(item, self.repo_root))

    def _next_fence(self, tx) -> int:
        return int(tx.execute("INSERT INTO counters (name, value) VALUES ('fence', 1) "
                              "ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value")[0][0])

    def renew(self, session: str, claim: int, *, ttl: float | None = None) -> Grant:
        """Extend a held claim; an expired or released claim is never revived (ClaimLost)."""
        lease = self._ttl(ttl)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            now = self.clock()
            self._expire_in(tx, now)
            rows = tx.execute(f"SELECT {_CLAIM_COLS} FROM claims WHERE id = ?", (_claim_id(claim),))
            if not rows or rows[0][1] != session:
                raise NotFound(f"claim {claim} of {session}")
            info = ClaimInfo(*rows[0])
            if not claim_live(info.state, info.expires, now):
                raise ClaimLost(info.claim, info.state)
            tx.execute("UPDATE claims SET expires = ? WHERE id = ?", (now + lease, info.claim))
            overlaps = self._overlapping(tx, now, session, info.item)
            self._audit(tx, session, "renew", f"claim:{info.claim}", item=info.item, fence=info.fence, ttl=lease)
        return Grant(info.claim, info.fence, info.item, session, now + lease, overlaps)

    def claim_owner(self, claim: int) -> str | None:
        """The session that holds (or held) claim ``claim``; None for an unknown id."""
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute("SELECT session FROM claims WHERE id = ?", (_claim_id(claim),))
        return rows[0][0] if rows else None

    def check_fence(self, claim: int, fence: int) -> bool:
        """True while ``claim`` is held with this fencing number; a holder checks before acting."""
        now = self.clock()
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {_CLAIM_COLS} FROM claims WHERE id = ?", (_claim_id(claim),))
        if not rows:
            return False
        info = ClaimInfo(*rows[0])
        return info.fence == fence and claim_live(info.state, info.expires, now)

    def _release_in(self, tx, session: str, claim: int | None, item: str | None, reason: str = "release",
                    expire: bool = True) -> list[int]:
        sql, params = "SELECT id, item FROM claims WHERE session = ? AND state = 'held'", [session]
        if claim is not None:
            sql += " AND id = ?"
            params.append(_claim_id(claim))
        if item is not None:
            sql += " AND item = ?"
            params.append(self.redact(self._item(item)))  # items are stored redacted
        now = self.clock()
        if expire:
            self._expire_in(tx, now)
        rows = tx.execute(sql, params)
        for cid, citem in rows:
            tx.execute("UPDATE claims SET state = 'released', ended = ? WHERE id = ?", (now, cid))
            self._audit(tx, session, "release", f"claim:{cid}", item=citem, reason=reason)
        if rows:
            tx.notify("brain_claims")
        return [r[0] for r in rows]

    def release(self, session: str, claim: int | None = None, *, item: str | None = None,
                all_claims: bool = False) -> list[int]:
        """Release one claim (by id or item) or, with ``all_claims``, every claim of the session."""
        if claim is None and item is None and not all_claims:
            raise InvalidInput("say what to release: a claim id, --item ITEM, or --all", field="claim")
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            if claim is not None:
                rows = tx.execute("SELECT session, state FROM claims WHERE id = ?", (_claim_id(claim),))
                if not rows or rows[0][0] != session:
                    raise NotFound(f"claim {claim} of {session}")
            return self._release_in(tx, session, claim, item)

    def claims(self, *, session: str | None = None, include_ended: bool = False) -> list[ClaimInfo]:
        """Claims (held ones by default), expiring the overdue ones first."""
        with self.backend.transaction() as tx:
            now = self.clock()
            self._expire_in(tx, now)
            sql, params = f"SELECT {_CLAIM_COLS} FROM claims WHERE 1 = 1", []
            if not include_ended:
                sql += " AND state = 'held'"
            if session is not None:
                sql += " AND session = ?"
                params.append(session)
            rows = tx.execute(sql + " ORDER BY id", params)
        return [ClaimInfo(*r) for r in rows]

    def overlaps(self, *, expire: bool = True) -> list[OverlapReport]:
        """Every pair of live claims of different sessions that overlap, with any recorded decision.

        ``expire=False`` only reads (the boot uses it: it must never queue behind writers);
        overdue claims are left out either way.
        """
        with self.backend.transaction(write=expire) as tx:
            now = self.clock()
            if expire:
                self._expire_in(tx, now)
            live = self._live_claims(tx, now)
            decisions = {}
            for a, b, decision, by in tx.execute("SELECT claim_a, claim_b, decision, decided_by FROM overlap_decisions "
                                                 "ORDER BY id"):
                decisions[(a, b)] = (decision, by)
        reports = []
        for a, b in overlapping_pairs(live):
            decision, by = decisions.get((a.claim, b.claim), (None, None))
            reports.append(OverlapReport(a, b, decision, by))
        return reports

    def decide_overlap(self, claim_a: int, claim_b: int, decision: str, *, by: str = "human") -> dict:
        """Record a human decision on an overlap (the watchdog shows it next to the pair)."""
        decision = self._clean(decision, "decision", 1000)
        a, b = sorted((_claim_id(claim_a), _claim_id(claim_b)))
        with self.backend.transaction() as tx:
            found = {r[0] for r in tx.execute("SELECT id FROM claims WHERE id IN (?, ?)", (a, b))}
            if found != {a, b}:
                raise NotFound(f"claims {a} and {b}")
            tx.execute("INSERT INTO overlap_decisions (claim_a, claim_b, decision, decided_by, at) VALUES (?, ?, ?, ?, ?)",
                       (a, b, decision, by, self.clock()))
            self._audit(tx, None, "decide", f"overlap:{a}:{b}", decision=decision, by=by)
        return {"claim_a": a, "claim_b": b, "decision": decision, "decided_by": by}

    # -- signals -------------------------------------------------------------------
    def signal(self, session: str, target: str, body: str, *, kind: str = "note") -> dict:
        """Send to one session, or broadcast to ``<brain>@<machine>`` (its live sessions, not the sender)."""
        body = self._clean(body, "body", self.config.text_max)
        kind = self._clean(kind, "kind", 40)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            now = self.clock()
            if not isinstance(target, str) or not target:
                raise InvalidInput("a signal needs a target session or <brain>@<machine>", field="target")
            if target.startswith("sess-"):
                if not tx.execute("SELECT 1 FROM sessions WHERE id = ?", (target,)):
                    raise NotFound(f"session {target}")
                recipients = [target]
            else:
                brain, _, machine = target.partition("@")
                if not brain or not machine:
                    raise InvalidInput(f"target {target!r} is neither a session id nor <brain>@<machine>",
                                       field="target")
                rows = tx.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE brain = ? AND machine = ? "
                                  "AND ended IS NULL ORDER BY id", (brain, machine))
                recipients = [r[0] for r in rows if r[0] != session
                              and self._liveness(now, r[5], r[6], r[8], r[9], r[2], r[12]) != GONE]
            ids = []
            for recipient in recipients:
                rows = tx.execute("INSERT INTO signals (recipient, sender, target, kind, body, created, expires) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                                  (recipient, session, target, kind, body, now, now + self.config.signal_ttl))
                ids.append(rows[0][0])
                self._prune_signals(tx, recipient, now)
            self._audit(tx, session, "signal", f"signal:{target}", kind=kind, recipients=recipients, ids=ids)
            tx.notify("brain_signals")
        return {"signals": ids, "recipients": recipients}

    def _prune_signals(self, tx, recipient: str, now: float) -> None:
        tx.execute("DELETE FROM signals WHERE recipient = ? AND expires <= ?", (recipient, now))
        tx.execute("DELETE FROM signals WHERE recipient = ? AND id NOT IN (SELECT id FROM signals WHERE recipient = ? "
                   "ORDER BY id DESC LIMIT ?)", (recipient, recipient, self.config.signal_max))

    def signals(self, session: str, *, include_acked: bool = False, limit: int = 100, ack: bool = False) -> list[Signal]:
        """Signals for ``session`` in order: those after its cursor (or all kept ones); ``ack`` moves the cursor."""
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            now = self.clock()
            cursor = self._cursor(tx, session)
            rows = tx.execute("SELECT id, sender, recipient, target, kind, body, created FROM signals "
                              "WHERE recipient = ? AND id > ? AND expires > ? ORDER BY id LIMIT ?",
                              (session, -1 if include_acked else cursor, now,
                               bounded_int(limit, "limit", low=1, high=MAX_COUNT)))
            if ack and rows:
                self._set_cursor(tx, session, max(cursor, rows[-1][0]))
        return [Signal(*r) for r in rows]

    def _cursor(self, tx, session: str) -> int:
        rows = tx.execute("SELECT acked FROM signal_cursors WHERE session = ?", (session,))
        return int(rows[0][0]) if rows else 0

    def _set_cursor(self, tx, session: str, value: int) -> None:
        tx.execute("INSERT INTO signal_cursors (session, acked) VALUES (?, ?) ON CONFLICT (session) "
                   "DO UPDATE SET acked = excluded.acked", (session, value))

    def ack(self, session: str, upto: int) -> int:
        """Acknowledge every signal of ``session`` up to id ``upto``; the cursor never moves back."""
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            cursor = self._cursor(tx, session)
            top = tx.execute("SELECT MAX(id) FROM signals WHERE recipient = ?", (session,))[0][0] or 0
            new = max(cursor, min(int(upto), int(top)))
            self._set_cursor(tx, session, new)
            self._audit(tx, session, "ack", f"signal_cursor:{session}", upto=new)
        return new

    # -- checkpoints ------------------------------------------------------------------
    def checkpoint(self, session: str, step: str, *, note: str = "") -> Checkpoint:
        """Snapshot the session: step, open claims, pending asks, signal cursor, free text."""
        step = self._clean(step, "step", 400)
        note = self._clean(note, "note", self.config.text_max, allow_empty=True)
        with self.backend.transaction() as tx:
            self._touch(tx, session)
            now = self.clock()
            self._expire_in(tx, now)
            role, machine = tx.execute("SELECT role, machine FROM sessions WHERE id = ?", (session,))[0]
            claims = [{"claim": c[0], "item": c[1], "fence": c[2], "expires": c[3]} for c in tx.execute(
                "SELECT id, item, fence, expires FROM claims WHERE session = ? AND state = 'held' ORDER BY id", (session,))]
            asks = [{"ticket": a[0], "asker": a[1], "target": a[2], "question": a[3][:200]} for a in tx.execute(
                "SELECT ticket, asker, target, question FROM asks WHERE state = 'pending' AND (asker = ? OR target = ?) "
                "ORDER BY created, ticket", (session, session))]
            cursor = self._cursor(tx, session)
            tx.execute("INSERT INTO checkpoints (session, role, machine, step, claims, asks, signal_cursor, note, created) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET step = excluded.step, "
                       "claims = excluded.claims, asks = excluded.asks, signal_cursor = excluded.signal_cursor, "
                       "note = excluded.note, created = excluded.created",
                       (session, role, machine, step, json.dumps(claims), json.dumps(asks), cursor, note, now))
            self._audit(tx, session, "checkpoint", f"checkpoint:{session}", step=step)
        return Checkpoint(session, role, machine, step, claims, asks, cursor, note, now)

    def read_checkpoint(self, session: str, *, heir_of: Callable[[str], bool] | None = None) -> Checkpoint | None:
        """The session's own checkpoint, else its predecessor's (same role and machine, no longer alive).

        ``heir_of``: which sessions ``session`` may inherit from (under a team token, only the token's
        own: role and machine are chosen when a token is made, so two tokens may share them)."""
        now = self.clock()
        cols = "c.session, c.role, c.machine, c.step, c.claims, c.asks, c.signal_cursor, c.note, c.created"
        with self.backend.transaction(write=False) as tx:
            rows = tx.execute(f"SELECT {cols} FROM checkpoints c WHERE c.session = ?", (session,))
            inherited = False
            if not rows:
                me = tx.execute("SELECT role, machine, started FROM sessions WHERE id = ?", (session,))
                if not me:
                    return None
                role, machine, started = me[0]
                candidates = tx.execute(
                    f"SELECT {cols}, s.last_seen, s.ended, s.waiting_until, s.pid, s.machine FROM checkpoints c "
                    "JOIN sessions s ON s.id = c.session WHERE c.role = ? AND c.machine = ? AND c.session <> ? "
                    "AND s.started <= ? ORDER BY c.created DESC", (role, machine, session, started))
                rows = [r[:9] for r in candidates if self._liveness(now, *r[9:14]) != ALIVE
                        and (heir_of is None or heir_of(r[0]))][:1]
                inherited = True
        if not rows:
            return None
        r = rows[0]
        return Checkpoint(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), int(r[6]), r[7], r[8], inherited)
