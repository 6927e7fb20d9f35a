"""Who a request acts as: the bearer token's principal and the session its handle names, for one request.

Why here and once: a tool call, a resource read and a prompt all run as their caller, and each must
see the same identity before any of their code runs (``server._BrainMCPServer`` wraps all three in
``request_identity``). A handle that cannot be used (``SessionHandleRefused``) is reported as
``refused`` so the caller's surface answers it its own way (a tool error, a JSON-RPC error).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

from mcp_types import CLIENT_INFO_META_KEY

from ..errors import BrainError

__all__ = ["request_identity", "caller_of", "client_of"]


async def caller_of(brain, rctx, arguments: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(the session the request's handle names or None, the arguments with a handle given as ``session``
    replaced by its session id). A handle is checked against the calling token before any tool code runs."""
    from ..team.identity import current_principal
    from . import handles

    carried = handles.handle_of_request(getattr(rctx, "meta", None), getattr(rctx, "request", None))
    in_argument = arguments.get("session") if handles.is_handle(arguments.get("session")) else None
    if carried is None and in_argument is None:
        return None, arguments
    principal = current_principal()
    owner = principal.name if principal is not None else None

    def resolve() -> tuple[str | None, dict[str, Any]]:
        caller = handles.resolve(brain, carried, owner) if carried is not None else None
        if in_argument is not None:
            session = handles.resolve(brain, in_argument, owner)
            caller, arguments_now = caller or session, {**arguments, "session": session}
        else:
            arguments_now = arguments
        brain.coord.heartbeat(caller)  # each call is its session's heartbeat
        return caller, arguments_now

    from .calls import in_thread

    return await in_thread(resolve)


def client_of(rctx) -> str | None:
    meta = getattr(rctx, "meta", None)
    info = meta.get(CLIENT_INFO_META_KEY) if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


class _Identity:
    def __init__(self, arguments: dict[str, Any] | None) -> None:
        self.arguments = arguments
        self.refused: BrainError | None = None


@asynccontextmanager
async def request_identity(brain, rctx, arguments: dict[str, Any] | None = None):
    """For the span of one request: the bearer token's principal (team server) and the session its handle
    names (``handles.CALLER``), or ``refused`` (a handle that cannot be used: nothing may run).

    ``brain`` None (a server without a brain) sets only the principal; ``arguments`` None: the request
    has no tool arguments (a resource, a prompt)."""
    from ..team.identity import PRINCIPAL, principal_of_scope
    from .handles import CALLER, REQUEST_CLIENT

    request = getattr(rctx, "request", None)
    identity = _Identity(arguments if arguments is not None else {})
    bound = [(PRINCIPAL, PRINCIPAL.set(principal_of_scope(request)))] if request is not None else []
    try:
        if brain is not None:
            try:
                caller, identity.arguments = await caller_of(brain, rctx, identity.arguments)
            except BrainError as error:
                identity.refused, caller = error, None
            client = client_of(rctx)
            bound += [(var, var.set(value)) for var, value in ((CALLER, caller), (REQUEST_CLIENT, client))
                      if value is not None]
        yield identity
    finally:
        for var, token in reversed(bound):
            var.reset(token)
