"""What each page of the web UI shows, gathered from the library as plain dicts.

No HTML here and no writes: every function reads through the library (``brain.coord``,
``brain.livestate``, ``brain.conversations``, cards, decisions, search, stats) and
returns what the templates display. Reads never heartbeat a session: a human
watching must not make a stalled agent look alive.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

from ..trees import walk as walk_tree
from ..coord.rules import ALIVE, GONE

__all__ = ["Row", "work_state", "claims_board", "recent_signals", "thread_list", "memory_overview", "card_view",
           "decisions_view", "notes_list", "usage_view", "RECENT_GONE_SECONDS", "DIVERGENCE_MARKS"]

RECENT_GONE_SECONDS = 3600.0   # gone sessions stay on the panel this long after their last sign of life
CLAIMS_SHOWN = 4               # claims listed on a session's card (the claims board has them all)
_LIVENESS_ORDER = {ALIVE: 0, "stalled": 1, GONE: 2}
DIVERGENCE_MARKS = ("**declared but missing in code**", "**declared routes missing in code**",
                    "**in code but undeclared**", "**routes in code but undeclared**")


class Row(dict):
    """A dict whose keys templates read as attributes without a failed getattr first (hot loops: 200 cards)."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _ago(now: float, at: float | None) -> str:
    if at is None:
        return "?"
    delta = now - at
    if delta < 0:
        delta = -delta
        suffix = "from now"
    else:
        suffix = "ago"
    if delta < 60:
        return f"{int(delta)}s {suffix}"
    if delta < 3600:
        return f"{int(delta // 60)}m {suffix}"
    if delta < 86400:
        return f"{int(delta // 3600)}h {int(delta % 3600 // 60)}m {suffix}"
    return f"{int(delta // 86400)}d {suffix}"


def stamp(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if at else "?"


# -- work state ------------------------------------------------------------------------------------------------
def work_state(brain) -> dict:
    """Sessions with liveness, live state, claims and pending asks (who waits on whom, and how it ends)."""
    if not brain.has_coordination_store():  # nothing to show, and watching must not create the database
        return {"sessions": [], "asks": [], "counts": {ALIVE: 0, "stalled": 0, GONE: 0}, "other_live": [],
                "now": stamp(time.time()), "stall_seconds": 0}
    coord = brain.coord
    now = coord.clock()
    sessions = [s for s in coord.sessions(include_gone=True)
                if s.liveness != GONE or now - s.last_seen <= RECENT_GONE_SECONDS]
    live = {e.key: e for e in coord.livestate.read()}
    claims_by = defaultdict(list)
    for claim in coord.claims():
        claims_by[claim.session].append(claim)

    def working(s) -> bool:  # claims, live state or an ask in flight: work, not an idle connection
        return bool(claims_by.get(s.id) or s.id in live or s.waiting_on)

    # live work first: alive, then stalled, then gone; within each, sessions at work first, latest seen first
    sessions.sort(key=lambda s: (_LIVENESS_ORDER.get(s.liveness, 3), not working(s), -s.last_seen, s.id))
    by_id = {s.id: s for s in sessions}
    asks = []
    stall = coord.config.stall_seconds
    for ask in coord.asks(pending_only=True):
        target = by_id.get(ask.target)
        exits = [{"exit": "reply", "when": f"when {ask.target} replies"}]
        stall_at = None
        if target is not None and target.liveness == ALIVE:
            stall_at = target.last_seen + stall
            exits.append({"exit": "stall", "when": f"if {ask.target} stays silent until {stamp(stall_at)}",
                          "at": stall_at})
        elif target is not None:
            exits.append({"exit": "stall", "when": f"{ask.target} is {target.liveness}: resolves as silent "
                                                   "at the next sweep", "at": now})
        exits.append({"exit": "timeout", "when": f"at {stamp(ask.deadline)}", "at": ask.deadline})
        first = min((e for e in exits if "at" in e), key=lambda e: e["at"])
        asks.append({"ticket": ask.ticket, "asker": ask.asker, "target": ask.target, "question": ask.question,
                     "since": stamp(ask.created), "since_ago": _ago(now, ask.created), "deadline": stamp(ask.deadline),
                     "deadline_in": _ago(now, ask.deadline), "overdue": now >= ask.deadline, "exits": exits,
                     "next_exit": first["exit"], "target_liveness": target.liveness if target else "unknown"})
    rows = []
    for s in sessions:
        entry = live.get(s.id)
        rows.append(Row({"id": s.id, "role": s.role, "machine": s.machine, "liveness": s.liveness,
                     "worktree": s.worktree or "", "branch": s.branch or "",
                     "started": stamp(s.started), "last_seen": _ago(now, s.last_seen), "waiting_on": s.waiting_on,
                     "intent": entry.intent if entry else "", "progress": entry.progress if entry else "",
                     "status": entry.status if entry else "", "queue": entry.queue if entry else 0,
                     "claims": [Row(claim=c.claim, item=c.item) for c in claims_by.get(s.id, [])[:CLAIMS_SHOWN]],
                     "claim_count": len(claims_by.get(s.id, []))}))
    counts = {k: sum(1 for s in sessions if s.liveness == k) for k in (ALIVE, "stalled", GONE)}
    others = [{"key": e.key, "intent": e.intent, "progress": e.progress, "status": e.status,
               "updated": _ago(now, e.updated)} for k, e in live.items() if k not in by_id]
    return {"sessions": rows, "asks": asks, "counts": counts, "other_live": others, "now": stamp(now),
            "stall_seconds": stall}


def _where(worktree: str | None, branch: str | None) -> str:
    """`wt-2 · feature-x`: where a session works, as the board shows it ('' when it recorded nothing)."""
    return f"{worktree} · {branch}" if worktree and branch else worktree or ""


# -- claims board ------------------------------------------------------------------------------------------------
OVERLAPS_SHOWN = 100


def claims_board(brain, *, session: str | None = None, page: int = 1, size: int = 100) -> dict:
    """Overlaps (undecided first, with any recorded human decision) and one page of the held claims."""
    from .overlaps import board_overlaps

    if not brain.has_coordination_store():
        return {"overlaps": [], "overlap_total": 0, "open": 0, "claims": [], "total": 0, "page": 1, "pages": 1,
                "session": session or ""}
    coord = brain.coord
    now = coord.clock()
    held = coord.claims()
    found = board_overlaps(brain, held)
    places = {s.id: _where(s.worktree, s.branch) for s in coord.sessions(include_gone=True)}
    if session:
        found = [o for o in found if session in (o.a.session, o.b.session)]
    found.sort(key=lambda o: o.decision is not None)
    overlaps = [Row(a=o.a, b=o.b, decision=o.decision, decided_by=o.decided_by, where_a=places.get(o.a.session, ""),
                    where_b=places.get(o.b.session, "")) for o in found[:OVERLAPS_SHOWN]]
    claims = [c for c in held if c.session == session] if session else held
    pages = max(1, -(-len(claims) // size))
    page = min(max(1, page), pages)
    shown = [Row(claim=c.claim, session=c.session, item=c.item, fence=c.fence, where=places.get(c.session, ""),
                 granted=_ago(now, c.granted),
                 expires=_ago(now, c.expires)) for c in claims[(page - 1) * size: page * size]]
    return {"overlaps": overlaps, "overlap_total": len(found), "open": sum(1 for o in found if o.decision is None),
            "claims": shown,
            "total": len(claims), "page": page, "pages": pages, "session": session or ""}


# -- signals ------------------------------------------------------------------------------------------------------
def recent_signals(brain, *, session: str | None = None, limit: int = 200) -> dict:
    """Recent signals, a broadcast shown once with its recipients; read without touching any session."""
    if not brain.has_coordination_store():
        return {"signals": [], "session": session or "", "broadcast": f"{brain.name}@{brain.settings.machine}"}
    coord = brain.coord
    now = coord.clock()
    sql = ("SELECT id, sender, recipient, target, kind, body, created FROM signals WHERE expires > ?")
    params: list = [now]
    if session:
        sql += " AND (recipient = ? OR sender = ?)"
        params += [session, session]
    with coord.backend.transaction(write=False) as tx:
        rows = tx.execute(sql + " ORDER BY id DESC LIMIT ?", (*params, int(limit)))
    grouped: dict[tuple, dict] = {}
    for sid, sender, recipient, target, kind, body, created in rows:
        broadcast = not target.startswith("sess-")
        key = (sender, target, kind, body, created) if broadcast else (sid,)
        item = grouped.get(key)
        if item is None:
            item = grouped[key] = Row(id=sid, sender=sender, target=target, kind=kind, body=body,
                                      broadcast=broadcast, recipients=[], at=stamp(created), ago=_ago(now, created))
        item["recipients"].append(recipient)
    return {"signals": list(grouped.values()), "session": session or "", "broadcast": coord.broadcast_address}


# -- threads ------------------------------------------------------------------------------------------------------
def thread_list(brain) -> dict:
    conv = brain.conversations
    threads = [{"thread": t.thread, "parties": t.parties, "bytes": t.bytes, "updated": stamp(t.updated)}
               for t in conv.threads()]
    parties = sorted({p for t in threads for p in t["parties"]}
                     | {s.id for s in brain.coord.sessions()} if brain.has_coordination_store()
                     else {p for t in threads for p in t["parties"]})
    from ..log.worktrees import worktree_logs

    elsewhere = [{"worktree": w.name, "branch": w.branch or "", "key": w.key, "removed": w.removed,
                  "threads": [{"thread": t.thread, "parties": t.parties, "bytes": t.bytes, "updated": stamp(t.updated)}
                              for t in w.log.threads()]} for w in worktree_logs(brain)]
    return {"threads": threads, "parties": parties, "elsewhere": [w for w in elsewhere if w["threads"]]}


# -- memory -------------------------------------------------------------------------------------------------------
def _card_modules(brain) -> list[tuple[str, str]]:
    """(module, path relative to .brain/) of every card file."""
    root = brain.dir / "modules"
    found = []
    if root.is_symlink():
        return found
    for folder, dirs, files in walk_tree(root):  # links to folders are not descended, links to files not listed
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith(".") and not os.path.islink(os.path.join(folder, name)):
                rel = (Path(folder) / name).relative_to(brain.dir).as_posix()
                module = rel[len("modules/"):-3]
                found.append(("." if module == "_root" else module, rel))
    return found


def _diverges(text: str) -> bool:
    return any(mark in text for mark in DIVERGENCE_MARKS)


def memory_overview(brain) -> dict:
    """now, focus, the cards (stale and diverging ones marked), decisions, notes and workflows."""
    now = brain.memory.read_or_none("now.md")
    focus = brain.memory.read_or_none("focus.md")
    cards = _card_modules(brain)
    stale: set[str] = set()
    if cards:
        try:
            report = brain.map(check=True)
            stale = set(report.stale) | set(report.orphans)
        except Exception:  # a broken layout must not take the browser down: show the cards unchecked
            stale = set()
    card_rows = []
    for module, rel in cards:
        doc = brain.memory.read_or_none(rel)
        card_rows.append({"module": module, "path": rel, "stale": module in stale,
                          "diverges": bool(doc and _diverges(doc.text))})
    return {"now": now.text if now else "", "focus": focus.text if focus else "", "cards": card_rows,
            "decisions": decisions_view(brain)["decisions"], "notes": notes_list(brain),
            "workflows": brain.workflows()}


def card_view(brain, module: str) -> dict | None:
    from ..cards import card_body

    card = brain.card(module)
    if card is None:
        return None
    contract = card.section("Contract")
    return {"module": card.module, "path": card.path, "stale": bool(card.stale), "body": card_body(card),
            "contract": contract, "diverges": _diverges(contract), "human": bool(card.human),
            "dependencies": card.dependencies, "files": list(card.files)}


def decisions_view(brain) -> dict:
    from ..decisions import load_decisions

    records = load_decisions(brain)
    by_number = {r.number: r for r in records}
    rows = []
    for r in records:
        chain = []
        cur, seen = r, {r.number}
        while cur.superseded_by is not None and cur.superseded_by in by_number and cur.superseded_by not in seen:
            cur = by_number[cur.superseded_by]
            seen.add(cur.number)
            chain.append(cur.number)
        rows.append({"number": r.number, "label": f"{r.number:04d}", "title": r.title, "status": r.status,
                     "superseded_by": r.superseded_by, "supersedes": r.supersedes, "current": r.current,
                     "chain": chain, "chain_error": r.chain_error, "modules": r.modules, "date": r.date,
                     "path": r.path, "text": r.text})
    return {"decisions": rows}


def notes_list(brain) -> list[str]:
    return brain.memory.list("notes")


# -- usage --------------------------------------------------------------------------------------------------------
class UsageCache:
    """``brain stats`` figures, recomputed only when a transcript changed (a page load must stay fast).

    The install date (a `git log` run) is looked up again at most every ``install_ttl`` seconds."""

    def __init__(self, install_ttl: float = 300.0) -> None:
        self._key = None
        self._report = None
        self._installed = None
        self._installed_at = 0.0
        self.install_ttl = install_ttl

    def report(self, brain):
        from ..log.stats import compute, discover, installed_at

        paths = discover(brain.repo, brain.env)
        key = []
        for path, fmt in paths:
            try:
                st = Path(path).stat()
            except OSError:
                continue
            key.append((str(path), fmt, st.st_size, st.st_mtime_ns))
        key = tuple(key)
        if self._installed is None or time.monotonic() - self._installed_at > self.install_ttl:
            self._installed, self._installed_at = installed_at(brain), time.monotonic()
        key = (key, self._installed)
        if self._report is None or key != self._key:
            self._report = compute(paths, self._installed)
            self._key = key
        return self._report


def usage_view(report) -> dict:
    periods = report.periods
    rows = [{"label": label, **periods[key]} for key, label in
            (("all", "all sessions"), ("before", "before brain"), ("after", "with brain")) if key in periods]
    return {"files": report.files, "sessions": len(report.sessions), "tasks": len(report.tasks),
            "installed": stamp(report.installed_at) if report.installed_at else "", "installed_source":
            report.installed_source or "", "periods": rows, "days": report.days[-30:],
            "recent_tasks": [t.to_dict() for t in report.tasks[-20:]][::-1]}
