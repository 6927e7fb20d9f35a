"""An ask delivered as an elicitation, where the asked agent's client declared it, never depending on it.

Why: an ask reaches its target through its inbox (``inbox`` / ``reply``), which the agent reads
only when it thinks of it. A client that declared the MCP *elicitation* capability can show a
question to its person the moment it arrives (Claude Code shows a dialog). So, over a stdio
connection of the handshake era whose client declared elicitation, the server watches the
session's pending asks (one read every ``POLL`` seconds, on the event loop, holding no thread
while it sleeps) and sends each new one as an ``elicitation/create`` request with one ``answer``
field, bounded by the ask's own deadline. An accepted answer is the reply (``coord.reply``:
the asker's wait returns ``reply``, as if the agent had called ``reply``); a decline, a cancel,
an error, a client that never answers, or a reply made meanwhile leave the ask where it was,
in the inbox, answered the existing way. The asker's wait is not changed: it stays bounded as
before. Each ask is elicited at most once per connection.

Not under the 2026-07-28 revision, which has no server-initiated requests outside a call (its
elicitation rides a tool result); not over HTTP (the team server answers plain JSON and holds no
stream to send on).
"""

from __future__ import annotations

import logging

import anyio

__all__ = ["POLL", "watch_asks", "client_elicits", "declared_elicitation", "ANSWER_SCHEMA"]

log = logging.getLogger("brain.mcp")

POLL = 0.5  # seconds between two reads of the session's pending asks
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "title": "Your answer",
                                                            "description": "The reply sent to the asking agent."}},
                 "required": ["answer"]}


def client_elicits(session) -> bool:
    """Whether the client of this SDK session declared the elicitation capability (form mode)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if session is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = session.client_capabilities
    return bool(capabilities is not None and capabilities.elicitation is not None)


def declared_elicitation(params: dict) -> bool:
    """Whether an ``initialize`` request's params declare the elicitation capability (form mode: an
    empty ``elicitation`` object, or one naming ``form``). Read at the handshake, before the SDK commits
    the connection's capabilities."""
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return not elicitation or "form" in elicitation


async def watch_asks(brain, session, sid: str) -> None:
    """Until cancelled (the connection closes): elicit each new ask made of ``sid`` through ``session``."""
    from .calls import in_thread

    delivered: set[str] = set()
    while True:
        try:
            pending = await in_thread(brain.coord.pending_asks, sid)
        except Exception as exc:  # noqa: BLE001 - the store is down or the session pruned: try again later
            log.debug("ask watcher of %s: %s", sid, exc)
            pending = []
        for ask in pending:
            if ask["ticket"] not in delivered and client_elicits(session):
                delivered.add(ask["ticket"])
                await _elicit(brain, session, sid, ask)
        if len(delivered) > 10000:  # bounded: tickets resolved long ago are not pending any more
            delivered &= {a["ticket"] for a in pending}
        await anyio.sleep(POLL)


async def _elicit(brain, session, sid: str, ask: dict) -> None:
    from ..errors import BrainError
    from .calls import ask_changed, in_thread

    left = float(ask["deadline"]) - brain.coord.clock() if ask.get("deadline") else None
    if left is not None and left <= 0:
        return
    try:
        with anyio.move_on_after(left if left is not None else 600.0) as scope:
            result = await session.elicit_form(f"{ask['from']} asks you: {ask['question']}", ANSWER_SCHEMA)
    except Exception as exc:  # noqa: BLE001 - the client refused or failed: the ask stays in the inbox
        log.debug("elicitation of %s failed: %s", ask["ticket"], exc)
        return
    if scope.cancelled_caught:
        return  # no answer before the ask's deadline: it has timed out for the asker anyway
    answer = (result.content or {}).get("answer") if result.action == "accept" else None
    if not isinstance(answer, str) or not answer.strip():
        return  # declined, cancelled or empty: the agent answers from its inbox
    try:
        await in_thread(brain.coord.reply, sid, ask["ticket"], answer)
    except BrainError as exc:  # replied meanwhile, or resolved: nothing to do
        log.debug("reply by elicitation to %s refused: %s", ask["ticket"], exc)
        return
    ask_changed()
