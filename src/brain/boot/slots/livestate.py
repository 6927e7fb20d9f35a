"""A lean project-state block: live sessions, live state, asks waiting on this session.

Bounded by construction (a few lines per entry, capped counts): the agent surface
gets distilled coordination, the human surface (`brain workstate`, the UI) the rest.
"""

from __future__ import annotations

from ...logs import debug
from ..parts import Part

__all__ = ["collect"]


MAX_ENTRIES = 8
MAX_SESSIONS = 8


def _where(session) -> str:
    """`, in wt-2 on feature-x`: the working tree and branch of a session that recorded them."""
    if not session.worktree:
        return ""
    return f", in {session.worktree}" + (f" on {session.branch}" if session.branch else "")


def collect(brain, request) -> list[Part]:
    if not brain.has_coordination_store():
        return []
    from ...errors import BrainError
    from ...livestate.store import render_lean

    try:
        coord = brain.coord
        now = coord.clock()
        sessions = coord.sessions()
        entries = coord.livestate.read()
        inbox = [a for a in coord.asks(session=request.session) if a.target == request.session and a.deadline > now] \
            if request.session else []
        overlaps = coord.overlaps(expire=False)  # read-only: a boot never waits for the write lock
    except BrainError as exc:
        debug("brain.boot", "live-state slot skipped: %s", exc)
        return []
    if not (sessions or entries or inbox):
        return []
    lines = []
    if sessions:
        shown = [f"`{s.id}` ({s.liveness}{_where(s)}{', waiting on an ask' if s.waiting_on else ''})"
                 for s in sessions[:MAX_SESSIONS]]
        more = f" and {len(sessions) - MAX_SESSIONS} more" if len(sessions) > MAX_SESSIONS else ""
        lines.append("Sessions: " + ", ".join(shown) + more)
    if overlaps:
        lines.append(f"Overlapping claims: {len(overlaps)} (see `brain claims`)")
    if inbox:
        lines.append(f"Asks waiting on you ({len(inbox)}): " + "; ".join(
            f"{a.ticket} from {a.asker}" for a in inbox[:5]) + " — answer with `brain reply TICKET ANSWER`")
    if entries:
        lines.append(render_lean(entries, now, limit=MAX_ENTRIES))
    return [Part("livestate", "livestate", "Project state", "\n".join(lines), "brain workstate")]
