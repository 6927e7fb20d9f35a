"""The session's checkpoint, right after now.md: where it (or its predecessor) stopped.

Read only when the boot names a session and a coordination store exists; a backend
that cannot be reached costs the boot this slot, never the boot itself.
"""

from __future__ import annotations

from ...logs import debug
from ..parts import Part

__all__ = ["collect", "render"]



# How an ask the checkpoint saw pending ended since (the ticket's state now).
ENDED = {"replied": "answered", "timeout": "timed out, no reply", "stalled": "target stalled, no reply",
         "abandoned": "asker gone, no reply"}
MAX_ASKS = 10


def render(cp, ask_states: dict[str, str] | None = None) -> str:
    """The checkpoint as lines; ``ask_states`` (ticket -> state now) tells which of its asks ended since:
    a checkpoint is a snapshot, and an ask it saw pending must not read as open on every later boot."""
    who = f"predecessor {cp.session}" if cp.inherited else cp.session
    lines = [f"Checkpoint of {who}: **{cp.step}**"]
    for c in cp.claims[:20]:
        lines.append(f"- claim {c['claim']} on `{c['item']}` (fence {c['fence']})"
                     + (" — claimed by the predecessor: claim it again if you continue" if cp.inherited else ""))
    for a in cp.asks[:MAX_ASKS]:
        ended = ENDED.get((ask_states or {}).get(a["ticket"], "pending"))
        what = f"ask {a['ticket']} (ended since: {ended})" if ended else f"pending ask {a['ticket']}"
        lines.append(f"- {what}: {a['asker']} -> {a['target']}: {a['question']}")
    lines.append(f"- signal cursor: {cp.signal_cursor}")
    if cp.note.strip():
        lines += ["", cp.note.strip()]
    return "\n".join(lines)


def collect(brain, request) -> list[Part]:
    if not request.session or not brain.has_coordination_store():
        return []
    from ...errors import BrainError

    try:
        from ...team.identity import read_own_checkpoint

        cp = read_own_checkpoint(brain, request.session)
    except BrainError as exc:
        debug("brain.boot", "checkpoint slot skipped: %s", exc)
        return []
    if cp is None:
        return []
    states: dict[str, str] = {}
    for ask in cp.asks[:MAX_ASKS]:
        try:
            states[ask["ticket"]] = brain.coord.get_ask(ask["ticket"]).state
        except BrainError:  # pruned or unreadable: shown as the checkpoint saw it
            continue
    return [Part("checkpoint", f"checkpoint:{cp.session}", "Checkpoint", render(cp, states),
                 f"brain checkpoint --session {request.session}")]
