"""Fold a working tree's own coordination store (earlier versions) into the repository's shared one.

Before stores were shared, every checkout kept its own `.brain/runtime/brain.db`. The first
brain process that opens a checkout holding one imports every row into the shared store
(``<common git dir>/brain/<key>/brain.db``) and renames the old file `brain.db.imported-<inode>`:

- **once**: the source (its path and inode) is recorded in ``store_imports`` in the same
  transaction as the rows, so a second opener, or a rerun after a crash between the commit
  and the rename, imports nothing twice;
- **crash-safe**: all rows go in one write transaction on the shared store; a process
  killed half-way leaves nothing (SQLite's journal) and the old file where it was;
- **every row kept**: ids that another store already used are renumbered — sessions get the
  next free ``.n`` of their minute (the id format stays ``sess-...-<role>.n@<machine>``),
  claims new ids and fences from the shared counter, signals new ids in their order (cursors
  follow) — and every reference (claims, signals, cursors, checkpoints, asks, live state,
  audit) is rewritten with them. Sessions that recorded no working tree get this one's.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from .model import Worktree
from .overlap import claim_prefix
from .rules import role_of_session, session_id

__all__ = ["import_worktree_store", "source_key"]

log = logging.getLogger("brain.coord")

_TABLES = {
    "sessions": "id, role, machine, brain, pid, started, last_seen, ended, waiting_ticket, waiting_until, "
                "worktree, branch, worktree_path",
    "claims": "id, session, item, kind, fence, granted, expires, ended, state",
    "overlap_decisions": "id, claim_a, claim_b, decision, decided_by, at",
    "signals": "id, recipient, sender, target, kind, body, created, expires",
    "signal_cursors": "session, acked",
    "checkpoints": "session, role, machine, step, claims, asks, signal_cursor, note, created",
    "asks": "ticket, asker, target, question, state, answer, created, deadline, resolved",
    "livestate": "key, intent, progress, delegation, status, revision, writer, updated",
    "audit": "id, at, session, action, subject, detail",
}


def source_key(path: Path) -> str:
    """The identity of an old store file: its path and inode (a new file made there later is another source)."""
    st = os.stat(path)
    return f"{Path(path).resolve()}#{st.st_dev}:{st.st_ino}"


def _read_source(path: Path) -> dict[str, list[tuple]]:
    """Every row of the old store, its schema brought up to date first (an old file may predate migrations)."""
    from ..backends.sqlite import SqliteBackend

    source = SqliteBackend(path)
    try:
        source.migrate()
        with source.transaction(write=False) as tx:
            order = {"audit": "id", "claims": "id", "signals": "id", "overlap_decisions": "id"}
            return {table: tx.execute(f"SELECT {cols} FROM {table}" + (f" ORDER BY {order[table]}"
                                                                         if table in order else ""))
                    for table, cols in _TABLES.items()}
    finally:
        source.close()


def import_worktree_store(backend, path: Path, worktree: Worktree | None) -> int | None:
    """Import the old store at ``path`` into ``backend`` once; returns the rows imported (None: done before).

    The old file is renamed afterwards, whether this call or an earlier one imported it."""
    key = source_key(path)
    with backend.transaction(write=False) as tx:
        done = bool(tx.execute("SELECT 1 FROM store_imports WHERE source = ?", (key,)))
    count = None
    if not done:
        rows = _read_source(path)
        with backend.transaction() as tx:
            if not tx.execute("SELECT 1 FROM store_imports WHERE source = ?", (key,)):  # another opener won
                count = _merge(tx, rows, worktree)
                tx.execute("INSERT INTO store_imports (source, at, rows) VALUES (?, ?, ?)", (key, time.time(), count))
        if count is not None:
            log.info("imported %d coordination rows from %s into the repository's shared store", count, path)
    _retire(path)
    return count


def _retire(path: Path) -> None:
    """Rename the imported file (and any -wal/-shm left) so no process reads it as a store again."""
    try:
        suffix = f".imported-{os.stat(path).st_ino}"
    except FileNotFoundError:
        return  # another opener renamed it
    for extra in ("-wal", "-shm", ""):  # the main file last: its presence is what starts an import
        try:
            os.replace(f"{path}{extra}", f"{path}{suffix}{extra}")
        except FileNotFoundError:
            pass


def _free_session_id(tx, sid: str, started: float, role: str, machine: str, taken: set[str]) -> str:
    """A session id not used in the shared store nor by this import: the next ``.n`` of its minute."""
    role = role_of_session(sid) or role
    n = 2
    while True:
        candidate = session_id(started, role, machine, n)
        if candidate not in taken and not tx.execute("SELECT 1 FROM sessions WHERE id = ?", (candidate,)):
            return candidate
        n += 1


def _merge(tx, rows: dict[str, list[tuple]], worktree: Worktree | None) -> int:
    count = 0
    taken = {r[0] for r in rows["sessions"]}
    sid_map: dict[str, str] = {}
    for row in rows["sessions"]:
        sid, role, machine, brain, pid, started, last_seen, ended, wticket, wuntil, wt, branch, wpath = row
        existing = tx.execute("SELECT role, machine, started FROM sessions WHERE id = ?", (sid,))
        if existing and tuple(existing[0]) == (role, machine, started):
            sid_map[sid] = sid  # the same session (a copied file imported twice): one row
            continue
        new = _free_session_id(tx, sid, started, role, machine, taken) if existing else sid
        taken.add(new)
        sid_map[sid] = new
        if wt is None and worktree is not None:  # it was this checkout's, before sessions named theirs
            wt, branch, wpath = worktree.name, branch or worktree.branch, worktree.path
        tx.execute("INSERT INTO sessions (id, role, machine, brain, pid, started, last_seen, ended, waiting_ticket, "
                   "waiting_until, worktree, branch, worktree_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (new, role, machine, brain, pid, started, last_seen, ended, wticket, wuntil, wt, branch, wpath))
        count += 1

    def sess(value):
        return sid_map.get(value, value) if isinstance(value, str) else value

    claim_map: dict[int, int] = {}
    for cid, session, item, kind, fence, granted, expires, ended, state in rows["claims"]:
        new_fence = int(tx.execute("INSERT INTO counters (name, value) VALUES ('fence', 1) ON CONFLICT (name) "
                                   "DO UPDATE SET value = counters.value + 1 RETURNING value")[0][0])
        claim_map[cid] = tx.execute("INSERT INTO claims (session, item, kind, prefix, fence, granted, expires, ended, "
                                    "state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                                    (sess(session), item, kind, claim_prefix(item), new_fence, granted, expires, ended,
                                     state))[0][0]
        count += 1
    for _, a, b, decision, by, at in rows["overlap_decisions"]:
        tx.execute("INSERT INTO overlap_decisions (claim_a, claim_b, decision, decided_by, at) VALUES (?, ?, ?, ?, ?)",
                   (claim_map.get(a, a), claim_map.get(b, b), decision, by, at))
        count += 1
    signal_map: dict[int, int] = {}
    by_recipient: dict[str, list[tuple[int, int]]] = {}
    for gid, recipient, sender, target, kind, body, created, expires in rows["signals"]:
        new = tx.execute("INSERT INTO signals (recipient, sender, target, kind, body, created, expires) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                         (sess(recipient), sess(sender), sess(target), kind, body, created, expires))[0][0]
        signal_map[gid] = new
        by_recipient.setdefault(sess(recipient), []).append((gid, new))
        count += 1

    def cursor(session: str, acked: int) -> int:
        """The cursor after renumbering: past the same signals as before, before the same unread ones."""
        pairs = by_recipient.get(session, [])
        read = [new for old, new in pairs if old <= acked]
        if read:
            return max(read)
        unread = [new for old, new in pairs if old > acked]
        return min(unread) - 1 if unread else 0

    for session, acked in rows["signal_cursors"]:
        new_session = sess(session)
        value = cursor(new_session, int(acked))
        have = tx.execute("SELECT acked FROM signal_cursors WHERE session = ?", (new_session,))
        if have:
            tx.execute("UPDATE signal_cursors SET acked = ? WHERE session = ?", (max(value, int(have[0][0])), new_session))
        else:
            tx.execute("INSERT INTO signal_cursors (session, acked) VALUES (?, ?)", (new_session, value))
        count += 1
    for session, role, machine, step, claims, asks, signal_cursor, note, created in rows["checkpoints"]:
        new_session = sess(session)
        if tx.execute("SELECT 1 FROM checkpoints WHERE session = ?", (new_session,)):
            continue
        held = [{**c, "claim": claim_map.get(c.get("claim"), c.get("claim"))} for c in json.loads(claims)]
        waits = [{**a, "asker": sess(a.get("asker")), "target": sess(a.get("target"))} for a in json.loads(asks)]
        tx.execute("INSERT INTO checkpoints (session, role, machine, step, claims, asks, signal_cursor, note, created) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (new_session, role, machine, step, json.dumps(held), json.dumps(waits),
                    cursor(new_session, int(signal_cursor)), note, created))
        count += 1
    for ticket, asker, target, question, state, answer, created, deadline, resolved in rows["asks"]:
        if tx.execute("SELECT 1 FROM asks WHERE ticket = ?", (ticket,)):
            continue  # tickets are random: the same ask, imported from a copy
        tx.execute("INSERT INTO asks (ticket, asker, target, question, state, answer, created, deadline, resolved) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (ticket, sess(asker), sess(target), question, state, answer, created, deadline, resolved))
        count += 1
    for key, intent, progress, delegation, status, revision, writer, updated in rows["livestate"]:
        key = sess(key)  # live state is keyed by session id, mostly
        have = tx.execute("SELECT revision, updated FROM livestate WHERE key = ?", (key,))
        if have and have[0][1] >= updated:
            continue  # last writer wins, as for any write
        if have:
            tx.execute("UPDATE livestate SET intent = ?, progress = ?, delegation = ?, status = ?, revision = ?, "
                       "writer = ?, updated = ? WHERE key = ?",
                       (intent, progress, delegation, status, max(int(revision), int(have[0][0])) + 1, sess(writer),
                        updated, key))
        else:
            tx.execute("INSERT INTO livestate (key, intent, progress, delegation, status, revision, writer, updated) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, intent, progress, delegation, status, revision, sess(writer), updated))
        count += 1
    for _, at, session, action, subject, detail in rows["audit"]:
        kind, _, ref = subject.partition(":")
        if kind == "claim" and ref.isdigit():
            subject = f"claim:{claim_map.get(int(ref), int(ref))}"
        elif kind in ("checkpoint", "signal_cursor") and ref:
            subject = f"{kind}:{sess(ref)}"
        tx.execute("INSERT INTO audit (at, session, action, subject, detail) VALUES (?, ?, ?, ?, ?)",
                   (at, sess(session), action, subject, detail))
        count += 1
    return count
