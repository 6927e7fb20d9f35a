"""Whom an ask goes to: a session id, or a role whose agent may still be cold-starting.

An agent is a session from its MCP handshake (brain.mcp.tools.coord). An orchestrator that
has just started one cannot know its session id yet, so it may ask by role (``codex``,
``claude-code``, ``review``): the ask waits for that role's agent to connect, within the
ask's own bound (``timeout``, the absolute ask timeout), then is armed as any ask with the
time left. A session id is never waited for: an id names a session that exists (or a typo,
refused at once by ``arm`` as before). The ask's outcomes are unchanged: reply, stalled,
timeout, and pending when a caller's wait turn ends first.
"""

from __future__ import annotations

from ..errors import InvalidInput
from .model import Ask, AskResult
from .rules import ALIVE, check_text, resolve_turn_timeout, role_of_session

__all__ = ["is_role_target", "await_target", "arm_addressed"]

_ROLE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def is_role_target(target: object) -> bool:
    """A role name (1-40 letters, digits, '-', '_'), not a session id (``sess-...@machine``)."""
    return (isinstance(target, str) and 0 < len(target) <= 40 and set(target) <= _ROLE_CHARS
            and role_of_session(target) is None and not target.startswith("sess-"))


def _live_of_role(coord, role: str) -> list[str]:
    return [s.id for s in coord.sessions() if s.role == role and s.liveness == ALIVE]


def await_target(coord, target: str, bound: float, *, asker: str | None = None) -> str | None:
    """The session to ask: ``target`` itself when it is not a role; else the role's one live session,
    waiting up to ``bound`` seconds for it to connect. None when none connected in time.

    Several live sessions of the role are ambiguous: InvalidInput naming them (ask one by id).
    The waiting ``asker`` keeps its heartbeat, as in an armed ask's wait."""
    from .asks import HEARTBEAT_EVERY

    if not is_role_target(target):
        return target
    started = coord.clock()
    last_beat = started
    while True:
        live = _live_of_role(coord, target)
        if len(live) == 1:
            return live[0]
        if len(live) > 1:
            raise InvalidInput(f"{len(live)} live sessions have the role {target}: ask one of them by its id",
                               field="target", hint="ask one of: " + ", ".join(live[:10]))
        now = coord.clock()
        if now - started >= bound:
            return None
        if asker is not None and now - last_beat >= HEARTBEAT_EVERY:
            last_beat = now
            coord.heartbeat(asker)
        coord.backend.wait(("brain_session",), bound - (now - started))  # re-read within the backend's poll


def arm_addressed(coord, session: str, target: str, question: str, *, timeout: float | None = None,
                  wait_seconds: float | None = None) -> Ask | AskResult:
    """Arm an ask of ``target`` (a session id or a role, see ``await_target``) once it is connected.

    Returns the armed ``Ask``, or the outcome when no agent of the role connected in time: ``timeout``
    when the ask's own bound passed, ``pending`` (no ticket: ask again) when ``wait_seconds`` passed first.
    The time spent waiting for the handshake counts against the ask's bound."""
    check_text(question, "question", coord.config.text_max)  # refuse a bad question before any wait
    coord.heartbeat(session)  # an unknown asker is refused at once (NotFound)
    limit = resolve_turn_timeout(timeout, coord.ask_timeout())
    turn = limit if wait_seconds is None else min(limit, resolve_turn_timeout(wait_seconds, limit))
    started = coord.clock()
    resolved = await_target(coord, target, turn, asker=session)
    if resolved is None:
        return AskResult("timeout" if turn >= limit else "pending", None, None)
    left = limit - (coord.clock() - started)
    if left <= 0:
        return AskResult("timeout", None, None)
    return coord.arm(session, resolved, question, timeout=left)
