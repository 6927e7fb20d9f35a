"""The live-state store over a coordination backend.

Why LWW with an optional expected revision: live state is a dashboard, not a log;
the newest write is the truth, and a writer that must not clobber a concurrent one
passes the revision it read. Fields are bounded (a write over a bound is refused,
never truncated silently) and the table is pruned by TTL and max-N on every write.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

from ..errors import InvalidInput, NotFound, RevisionConflict, TooLarge

__all__ = ["LiveState", "LiveEntry", "LiveLimits", "STATUSES", "render_lean", "normalize_live_key", "fold_live_key"]

STATUSES = ("idle", "working", "done", "blocked", "stalled")
_FIELDS = ("intent", "progress", "delegation")


@dataclass(frozen=True)
class LiveLimits:
    intent: int = 200
    progress: int = 400
    delegation: int = 300
    key: int = 120
    ttl: float = 7 * 86400.0
    max_keys: int = 200


@dataclass
class LiveEntry:
    key: str
    intent: str
    progress: str
    delegation: str
    status: str
    revision: int
    writer: str | None
    updated: float
    busy: bool = False   # computed: asks are waiting on this key
    queue: int = 0       # computed: how many

    def to_dict(self) -> dict:
        return asdict(self)


def normalize_live_key(key: object) -> str:
    """The one spelling of a live-state key: Unicode NFKC, outer spaces dropped, inner runs of spaces one.

    Keys are compared in this form and folded (``fold_live_key``), so `` sess-1@box`` (a leading
    space), ``SESS-1@box`` or ``ｓｅｓｓ-1@box`` are the session ``sess-1@box`` and not a look-alike row
    beside it on the board; a key holding an invisible (format) or control character is refused."""
    import unicodedata

    if not isinstance(key, str) or not key.strip():
        raise InvalidInput("a live-state key is required", field="key")
    text = " ".join(unicodedata.normalize("NFKC", key).split())
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
            raise InvalidInput(f"a live-state key may not hold the invisible or control character U+{ord(ch):04X}",
                               field="key")
    return text


def fold_live_key(key: str) -> str:
    """The form two keys are compared in: normalized, then case-folded."""
    return normalize_live_key(key).casefold()


def _bounded(value: str, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text", field=field)
    value = " ".join(value.split())  # one line: live state is lean by construction
    size = len(value.encode("utf-8"))
    if size > limit:
        raise TooLarge(f"live-state {field}", size, limit)
    return value


class LiveState:
    def __init__(self, backend, *, clock: Callable[[], float] = time.time, limits: LiveLimits = LiveLimits(),
                 redact: Callable[[str], str] | None = None) -> None:
        self.backend = backend
        self.clock = clock
        self.limits = limits
        if redact is None:
            from ..security.redact import Redactor

            redact = Redactor()
        self.redact = redact  # intent, progress and delegation are redacted in ``set_in`` before they are stored

    # -- writes ------------------------------------------------------------------
    def set(self, key: str, *, intent: str | None = None, progress: str | None = None,
            delegation: str | None = None, status: str | None = None, expected_revision: int | None = None,
            writer: str | None = None) -> LiveEntry:
        """Write the given fields of ``key`` (others keep their value); last writer wins."""
        values = self._validate(key, intent, progress, delegation, status)
        with self.backend.transaction() as tx:
            entry = self.set_in(tx, key, values, expected_revision=expected_revision, writer=writer)
        return entry

    def _validate(self, key, intent, progress, delegation, status) -> dict:
        key = normalize_live_key(key)
        _bounded(key, "key", self.limits.key)
        from ..security.redact import refuse_secret_name

        refuse_secret_name(self.redact, key, "key")  # a key is a name (a session id), never redacted text
        values: dict = {}
        for name, value in (("intent", intent), ("progress", progress), ("delegation", delegation)):
            if value is not None:
                values[name] = _bounded(value, name, getattr(self.limits, name))
        if status is not None:
            if status not in STATUSES:
                raise InvalidInput(f"status must be one of {', '.join(STATUSES)}", field="status")
            values["status"] = status
        if not values:
            raise InvalidInput("nothing to write: give --intent, --progress, --delegation or --status", field="intent")
        return values

    def set_in(self, tx, key: str, values: dict, *, expected_revision: int | None = None,
               writer: str | None = None) -> LiveEntry:
        """The one write path, inside a caller's transaction (asks use it to set Working/Done).

        One upsert that changes only the given fields and bumps the revision; with an
        expected revision the row is read first (writers are serialised, so the check holds).
        """
        values = {name: self.redact(value) if name in _FIELDS and isinstance(value, str) else value
                  for name, value in values.items()}
        key = self.canonical_key_in(tx, key)
        now = self.clock()
        if expected_revision is not None:
            from ..bounds import MAX_ID, bounded_int

            expected_revision = bounded_int(expected_revision, "expected_revision", low=0, high=MAX_ID)
            rows = tx.execute("SELECT revision FROM livestate WHERE key = ?", (key,))
            actual = rows[0][0] if rows else None
            if expected_revision != (actual or 0):
                raise RevisionConflict(key, expected_revision, actual)
        fresh = {"intent": "", "progress": "", "delegation": "", "status": "idle", **values}
        updates = "".join(f"{name} = excluded.{name}, " for name in ("intent", "progress", "delegation", "status")
                          if name in values)
        row = tx.execute(
            "INSERT INTO livestate (key, intent, progress, delegation, status, revision, writer, updated) "
            f"VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (key) DO UPDATE SET {updates}"
            "revision = livestate.revision + 1, writer = excluded.writer, updated = excluded.updated "
            "RETURNING intent, progress, delegation, status, revision",
            (key, fresh["intent"], fresh["progress"], fresh["delegation"], fresh["status"], writer, now))[0]
        if row[4] == 1 or row[4] % 32 == 0:  # only a new key can exceed max-N; TTL-expired rows are hidden by reads
            self._prune(tx, now)
        tx.notify("brain_live")
        return LiveEntry(key, row[0], row[1], row[2], row[3], int(row[4]), writer, now)

    def canonical_key_in(self, tx, key: str) -> str:
        """``key`` as it is already spelled on the board, inside a caller's transaction: the session id or
        the existing key it equals once normalized and case-folded, else its normalized form. Both
        backends: sessions are matched with SQL ``lower`` (ids are ASCII after NFKC), keys in Python."""
        key = normalize_live_key(key)
        folded = key.casefold()
        rows = tx.execute("SELECT id FROM sessions WHERE lower(id) = ? ORDER BY id LIMIT 1", (key.lower(),))
        if rows:
            return rows[0][0]
        for (existing,) in tx.execute("SELECT key FROM livestate ORDER BY key"):
            if existing == key or existing.casefold() == folded:
                return existing
        return key

    def canonical_key(self, key: str) -> str:
        """``canonical_key_in`` in its own read transaction (the MCP access check compares this form)."""
        with self.backend.transaction(write=False) as tx:
            return self.canonical_key_in(tx, key)

    def _prune(self, tx, now: float) -> None:
        tx.execute("DELETE FROM livestate WHERE updated < ? OR key NOT IN (SELECT key FROM livestate "
                   "ORDER BY updated DESC, key LIMIT ?)", (now - self.limits.ttl, self.limits.max_keys))

    def delete(self, key: str) -> bool:
        with self.backend.transaction() as tx:
            tx.execute("DELETE FROM livestate WHERE key = ?", (key,))
            return tx.rowcount() > 0

    # -- reads -------------------------------------------------------------------
    def read(self, key: str | None = None) -> list[LiveEntry]:
        """Entries (newest first) not past their TTL, with busy/queue computed from pending asks."""
        now = self.clock()
        with self.backend.transaction(write=False) as tx:
            sql = ("SELECT key, intent, progress, delegation, status, revision, writer, updated FROM livestate "
                   "WHERE updated >= ?")
            params: list = [now - self.limits.ttl]
            if key is not None:
                key = self.canonical_key_in(tx, key)
                sql += " AND key = ?"
                params.append(key)
            rows = tx.execute(sql + " ORDER BY updated DESC, key LIMIT ?", (*params, self.limits.max_keys))
            queues = dict(tx.execute("SELECT target, COUNT(*) FROM asks WHERE state = 'pending' AND deadline > ? "
                                     "GROUP BY target", (now,)))
        entries = [LiveEntry(*row) for row in rows]
        for entry in entries:
            entry.queue = int(queues.get(entry.key, 0))
            entry.busy = entry.queue > 0
        if key is not None and not entries:
            raise NotFound(f"live state {key!r}")
        return entries


def render_lean(entries: list[LiveEntry], now: float, limit: int = 12, *, timestamps: bool = False) -> str:
    """A few lines: who intends what, how far, who is waited on.

    ``timestamps`` is for humans only (the CLI): the boot never carries activity times,
    which make agents guess the time of day."""
    lines = []
    for e in entries[:limit]:
        bits = [f"**{e.key}** [{e.status}{', busy: ' + str(e.queue) + ' waiting' if e.busy else ''}]"]
        if e.intent:
            bits.append(f"intent: {e.intent}")
        if e.progress:
            bits.append(f"progress: {e.progress}")
        if e.delegation:
            bits.append(f"last delegation: {e.delegation}")
        if timestamps:
            bits.append(time.strftime("(updated %Y-%m-%d %H:%M UTC)", time.gmtime(e.updated)))
        lines.append("- " + " — ".join(bits))
    if len(entries) > limit:
        lines.append(f"- … {len(entries) - limit} more: `brain workstate`")
    return "\n".join(lines)
