"""Session MCP tools for callers without a connection of their own: brain_session_start, brain_session_end.

Why: a 2026-07-28 stateless caller (and any HTTP caller without a bearer token) has no
connection the server could tell apart from another's, so it would act as the server's one
shared session. ``brain_session_start`` starts a session for the caller and mints its handle
(brain.mcp.handles); the caller passes the handle back on every request and is then that
session: its claims, its overlaps, its asks, its territories (the session's role). With a
bearer token the session is the token's own, as for every other tool, and the handle is bound
to the token.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Annotated

from pydantic import Field

from ...errors import Forbidden
from ..access import SESSION, ActsAs
from .. import outputs
from ..registry import ToolOutput, ToolRegistry

__all__ = ["register", "MINTED_KEPT"]

MINTED_KEPT = 4096  # sessions this server started for handles and ends when it stops (older ones are gone anyway)


def _minted(brain) -> deque:
    return brain.__dict__.setdefault("_mcp_minted", deque(maxlen=MINTED_KEPT))


def register(tools: ToolRegistry) -> None:
    @tools.on_close
    def _end_minted_sessions(brain) -> None:
        for sid in list(_minted(brain)):
            try:
                brain.coord.end_session(sid)
            except Exception:  # noqa: BLE001 - pruned or ended meanwhile
                pass

    @tools.tool(title="Start your own session", output=outputs.SessionStarted)
    def brain_session_start(
        brain,
        role: Annotated[str | None, Field(description="Your role (e.g. backend, review): the session's role, which "
                                                      "territories check your writes as. Default: BRAIN_ROLE, else "
                                                      "your client's name, else agent. With a bearer token the "
                                                      "role is the token's.", max_length=40)] = None,
    ) -> ToolOutput:
        """Start a coordination session of your own and get its handle. Call it first when you reach this server
        without a connection of your own (the 2026-07-28 stateless revision, or HTTP without a bearer token):
        otherwise every such caller acts as one shared session and nobody sees your claims overlap theirs. Pass
        the handle back on every later request: the `Brain-Session` HTTP header, the `brain/session` key of the
        request's _meta, or the `session` argument of a tool. It works until the session ends (brain_session_end,
        the server stopping) and only for the token that minted it. Structured content: {session, handle, role}."""
        from ...coord.clients import client_role
        from ...team.identity import bound_session, current_principal
        from ..handles import REQUEST_CLIENT, mint

        principal = current_principal()
        if principal is not None:
            if role and role.strip() != principal.session_role:
                raise Forbidden(f"role {role.strip()!r}", principal.name, argument="role", tool="brain_session_start",
                                hint=f"a token's session has the token's role ({principal.session_role}): leave "
                                     "role empty")
            sid, chosen = bound_session(brain, principal), principal.session_role
        else:
            hello = getattr(brain, "_mcp_hello", None)
            chosen = client_role(role or brain.env.get("BRAIN_ROLE") or REQUEST_CLIENT.get()
                                 or (hello.client_name if hello is not None and hello.transport == "stdio" else None))
            sid = brain.coord.start_session(chosen, pid=os.getpid()).id  # the server's process is its life
            _minted(brain).append(sid)
            brain.tidy_after_session_start()
        handle = mint(brain, sid, principal.name if principal is not None else None)
        return ToolOutput(f"session {sid} (role {chosen}); pass this handle on every request: {handle}",
                          {"session": sid, "handle": handle, "role": chosen})

    @tools.tool(title="End your session", idempotent=True, output=outputs.SessionEnded)
    def brain_session_end(
        brain,
        session: Annotated[str | None, Field(description="The handle (or session id) to end; default: the session "
                                                         "this request's handle names."), ActsAs(SESSION)] = None,
    ) -> dict:
        """End the session brain_session_start gave you when you are done: its claims are released, asks waiting
        on it end, and its handle stops working. Structured content: {session, released: [claim ids]}."""
        from ...errors import InvalidInput
        from ..handles import caller_session

        sid = session or caller_session()
        if not sid:
            raise InvalidInput("brain_session_end needs a session handle (the Brain-Session header, the "
                               "brain/session _meta key, or the session argument)", field="session")
        released = brain.coord.end_session(sid)
        from ...team.identity import current_principal

        principal = current_principal()
        if principal is not None and brain.__dict__.get("_team_sessions", {}).get(principal.name) == sid:
            del brain._team_sessions[principal.name]  # the token's next call starts (or resumes) a live session
        return {"session": sid, "released": released}
