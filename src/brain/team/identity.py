"""Who is calling: the token's principal for the span of one request, and its bound session.

The team server's middleware puts the verified principal into the ASGI scope; the
MCP adapter copies it into ``PRINCIPAL`` (a context variable, so it follows the call
onto the worker thread of a sync tool) before each tool call. Coordination tools
then resolve "my session" through ``bound_session``: the token's own session, started
on first use with the token's role and machine, and only sessions the token started
(or that match its ``session_prefix``) may be named — anything else is ``Forbidden``.
"""

from __future__ import annotations

import contextvars
import re
import threading

from ..errors import Forbidden
from ..records import record
from ..lazyre import lazy

__all__ = ["Principal", "PRINCIPAL", "current_principal", "principal_of_scope", "bound_session", "writer_role",
           "role_of_session", "read_own_checkpoint", "memory_visible", "SCOPE_KEY"]

SCOPE_KEY = "brain.principal"


@record(frozen=True)
class Principal:
    """An authenticated caller: a token's name, role and machine."""

    name: str
    role: str | None = None
    machine: str | None = None
    session_prefix: str | None = None
    layers: tuple[str, ...] = ()  # user-level layers (instance, personal) this token may be served

    @property
    def session_role(self) -> str:
        return self.role or re.sub(r"[^A-Za-z0-9_-]+", "-", self.name)[:40]


PRINCIPAL: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("brain_principal", default=None)

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
_SESSION_ROLE = lazy(r"^sess-\d{8}-\d{4}-(?P<role>[A-Za-z0-9_-]+?)(?:\.\d+)?@")


def current_principal() -> Principal | None:
    return PRINCIPAL.get()


def principal_of_scope(scope) -> Principal | None:
    """The principal the team middleware left in an ASGI scope (or a Starlette request)."""
    scope = getattr(scope, "scope", scope)
    if isinstance(scope, dict):
        value = scope.get(SCOPE_KEY)
        return value if isinstance(value, Principal) else None
    return None


def role_of_session(session: str | None) -> str | None:
    match = _SESSION_ROLE.match(session or "")
    return match.group("role") if match else None


def writer_role(brain) -> str:
    """The role a memory write over MCP is made as: the token's, else the connection session's.

    The session's role comes from BRAIN_ROLE or the client's name (see the coordination
    tools). Never None: before the connection has a session (or a client name) the write is
    checked as the default role (``brain.security.territories.surface_role``), never unchecked.
    """
    from ..mcp.tools.coord import connection_role, own_session
    from ..security.territories import surface_role

    principal = current_principal()
    if principal is not None:
        return principal.session_role
    session = own_session(brain)  # a session handle's (brain.mcp.handles), else the connection's
    return surface_role(role_of_session(session), connection_role(brain))


def bound_session(brain, principal: Principal, requested: str | None = None) -> str:
    """The session ``principal`` acts as: ``requested`` if it is the token's, else its own (started on demand)."""
    store = brain.tokens
    if requested:
        if store.owns(principal.name, requested):
            return requested
        raise Forbidden(f"session {requested}", principal.name)
    with _locks_guard:
        lock = _locks.setdefault(f"{id(brain)}:{principal.name}", threading.Lock())
    with lock:
        cache = brain.__dict__.setdefault("_team_sessions", {})
        sid = cache.get(principal.name)
        if sid:
            return sid

        def alive(candidate: str) -> bool:  # resume the token's last live session after a restart
            try:
                return brain.coord.session(candidate).liveness == "alive"
            except Exception:  # noqa: BLE001 - unknown or pruned: start a new one
                return False

        def start() -> str:
            import copy  # here: a boot only asks who is calling

            coord = copy.copy(brain.coord)  # same backend, the token's machine in the session id
            coord.machine = principal.machine or principal.name
            return coord.start_session(principal.session_role).id

        sid = store.session_for(principal.name, alive, start)
        cache[principal.name] = sid
        return sid


def read_own_checkpoint(brain, session: str):
    """``session``'s checkpoint, or the one it inherits: under a token, only from the token's own sessions.

    A successor inherits the checkpoint of a finished session with the same role and machine; a
    token's role and machine are chosen when it is made, so two tokens can share them, and one
    must never resume (read the step, note, claims and asks of) the other's work."""
    principal = current_principal()
    if principal is None:
        return brain.coord.read_checkpoint(session)
    return brain.coord.read_checkpoint(session, heir_of=lambda predecessor: brain.tokens.owns(principal.name,
                                                                                             predecessor))


def memory_visible(brain, path: object, principal: Principal | None = None) -> bool:
    """Whether the caller may see (read, list, find, change) the memory file ``path``.

    Everything but a thread's local handoff (``handoffs/local/<thread>.md``): that is the working
    memory of the thread's own sessions, a distilled conversation log, and conversation logs never
    reach another token. Decided on the normalized path, folded for case (a case-folding file system
    opens ``HANDOFFS/Local/...`` as the same file). Always true without a token (the local user).
    A path the memory rule refuses is let through: the memory API refuses it with its own reason."""
    principal = principal or current_principal()
    if principal is None:
        return True
    from ..errors import InvalidInput
    from ..memory.paths import normalize_memory_path

    try:
        parts = normalize_memory_path(path)
    except InvalidInput:
        return True
    folded = [part.casefold() for part in parts]
    if len(parts) < 3 or folded[:2] != ["handoffs", "local"]:
        return True
    thread = parts[2][:-3] if folded[2].endswith(".md") else parts[2]
    return thread in _own_threads(brain, principal)


def _own_threads(brain, principal: Principal) -> set[str]:
    """The threads any session of ``principal`` takes part in (the `index.json` of ``brain.conversations_dir``)."""
    import json

    try:
        index = json.loads((brain.conversations_dir / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(index, dict):
        return set()
    own: set[str] = set()
    for session, threads in index.items():
        if isinstance(threads, list) and brain.tokens.owns(principal.name, session):
            own.update(t for t in threads if isinstance(t, str))
    return own
