"""What a tool argument names, and the one check that a token may name it.

A tool declares, in the annotation of each argument that refers to something owned
(a session, a claim, an ask, a live-state key, a memory layer), what it names:

    session: Annotated[str | None, Field(...), ActsAs(SESSION)] = None

The MCP dispatch layer (``brain.mcp.server``) calls ``authorize`` with the validated
arguments before every tool function, so on the team server no tool can act as
another token's session, whatever it does with the argument afterwards: the check
is made once, here, for every tool, and a tool cannot skip it. Arguments that name
another session on purpose (the target of a signal or an ask) or a board everyone
reads are declared too (``Addresses``, ``ReadsBoard``): the registry refuses a tool
whose argument has one of the ``REFERENCE_NAMES`` without a declaration, so a new
tool cannot forget it.

Without a token (stdio, a local user) nothing is checked: the local user owns the
brain. See docs/team.md ("What a token may do").
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Any

from ..errors import Forbidden

__all__ = ["ActsAs", "Addresses", "ReadsBoard", "SESSION", "CLAIM", "ASK_MADE", "ASK_RECEIVED", "LIVE_KEY",
           "LAYER_READ", "LAYER_WRITE", "MEMORY_PATH", "REFERENCE_NAMES", "KERNEL_SCRIBE", "USER_LAYERS", "declarations",
           "authorize"]

SESSION = "session"  # a session id the tool acts as
CLAIM = "claim"  # a claim id: acting on it acts as the session holding it
ASK_MADE = "ask_made"  # an ask ticket the caller made (keep waiting on it)
ASK_RECEIVED = "ask_received"  # an ask ticket made of the caller (answer it)
LIVE_KEY = "live_key"  # a live-state key written: a session's key is that session's
LAYER_READ = "layer_read"  # a memory layer read
LAYER_WRITE = "layer_write"  # a memory layer written
MEMORY_PATH = "memory_path"  # a memory file read or changed: another thread's local handoff is not the caller's

KERNEL_SCRIBE = "kernel-scribe"  # the token role that may write the kernel layer
USER_LAYERS = ("instance", "personal")  # served to a token only when its `layers` setting names them

# argument names that always refer to something: a tool argument of one of these names
# must declare what it names (ActsAs / Addresses / ReadsBoard), or the registry refuses the tool
REFERENCE_NAMES = frozenset({"session", "target", "ticket", "claim", "renew", "key", "layer", "asker", "recipient"})


@dataclass(frozen=True)
class ActsAs:
    """The argument names something the caller acts as or on: checked against the token."""

    kind: str


@dataclass(frozen=True)
class Addresses:
    """The argument names another session on purpose (whom to signal or ask): never acted as."""


@dataclass(frozen=True)
class ReadsBoard:
    """The argument selects from a board every session reads (live state, the list of sessions)."""


_MARKERS = (ActsAs, Addresses, ReadsBoard)


def declarations(fn, skip_first: bool = True) -> dict[str, Any]:
    """``{argument: marker}`` of a tool function, from its ``Annotated`` metadata.

    Raises TypeError for an argument of ``REFERENCE_NAMES`` with no marker, or one with two."""
    hints = typing.get_type_hints(fn, include_extras=True)
    names = list(inspect.signature(fn).parameters)[1 if skip_first else 0:]
    found: dict[str, Any] = {}
    for name in names:
        markers = [m for m in getattr(hints.get(name), "__metadata__", ()) if isinstance(m, _MARKERS)]
        if len(markers) > 1:
            raise TypeError(f"argument {name!r} declares {len(markers)} access markers; give one")
        if markers:
            found[name] = markers[0]
        elif name in REFERENCE_NAMES:
            raise TypeError(f"argument {name!r} names a session, claim, ask, key or layer: declare what it names "
                            "with ActsAs(...), Addresses() or ReadsBoard() from brain.mcp.access")
    return found


def _owns(brain, principal, session: str) -> bool:
    """The token started ``session`` (its record lists it) or its ``session_prefix`` covers it.

    Decided without starting anything: a refused call leaves the store as it was."""
    if brain.__dict__.get("_team_sessions", {}).get(principal.name) == session:
        return True
    return brain.tokens.owns(principal.name, session)


def _refuse(principal, tool: str, argument: str, what: str, hint: str | None = None) -> Forbidden:
    return Forbidden(what, principal.name, argument=argument, tool=tool, hint=hint)


def _check(brain, principal, tool: str, argument: str, kind: str, value) -> None:
    if kind == SESSION:
        if not _owns(brain, principal, str(value)):
            raise _refuse(principal, tool, argument, f"session {value}")
    elif kind == LIVE_KEY:
        key = brain.livestate.canonical_key(str(value))  # ` sess-…`, `SESS-…` are that session's key
        if key.casefold().startswith("sess-") or _is_session(brain, key):
            if not _owns(brain, principal, key):
                raise _refuse(principal, tool, argument, f"live-state key {key} (a session)",
                              "leave key empty to write your own session's entry, or use a key that names no "
                              "session (a workstream)")
        elif key.casefold() != (principal.session_role or "").casefold() \
                and key.casefold() in {r.casefold() for r in _token_roles(brain)}:
            raise _refuse(principal, tool, argument, f"live-state key {key} (another token's role)",
                          "a role's key is written by that role's tokens; use your session or a workstream key")
    elif kind == CLAIM:
        owner = brain.coord.claim_owner(int(value))
        if owner is not None and not _owns(brain, principal, owner):
            raise _refuse(principal, tool, argument, f"claim {value}", "act only on the claims of your own session")
    elif kind in (ASK_MADE, ASK_RECEIVED):
        ask = brain.coord.get_ask(str(value))  # NotFound for an unknown ticket
        party = ask.asker if kind == ASK_MADE else ask.target
        if not _owns(brain, principal, party):
            raise _refuse(principal, tool, argument, f"ask {value}",
                          "only the asker may keep waiting on an ask, and only its target may answer it")
    elif kind in (LAYER_READ, LAYER_WRITE):
        layer = value or "project"
        if layer in USER_LAYERS and layer not in principal.layers:
            raise _refuse(principal, tool, argument, f"the {layer} layer",
                          f"a token reads the {layer} layer only when it was created with --layer {layer}")
        if layer == "kernel" and kind == LAYER_WRITE and principal.session_role != KERNEL_SCRIBE:
            raise _refuse(principal, tool, argument, "write access to the kernel layer",
                          f"the kernel is read-only to tokens whose role is not {KERNEL_SCRIBE}")
    elif kind == MEMORY_PATH:
        from ..team.identity import memory_visible

        if not memory_visible(brain, value, principal):
            raise _refuse(principal, tool, argument, f"memory file {value} (the local handoff of a thread none of "
                                                     "its sessions takes part in)",
                          "a thread's handoff is its own sessions' working memory; read promoted handoffs/ files")
    else:  # an unknown kind is a bug in a declaration: refuse rather than let it through
        raise _refuse(principal, tool, argument, f"{argument} (undeclared kind {kind!r})")


def _token_roles(brain) -> set[str]:
    return {r.role or r.name for r in brain.tokens.list() if r.active}


def _is_session(brain, key: str) -> bool:
    from ..errors import NotFound

    try:
        brain.coord.session(key)
        return True
    except NotFound:
        return False


def authorize(brain, tool: str, declared: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse (``Forbidden``) a call whose arguments name what the calling token does not own.

    A no-op without a token principal (a local stdio client)."""
    from ..team.identity import current_principal

    principal = current_principal()
    if principal is None:
        return
    for argument, marker in declared.items():
        value = arguments.get(argument)
        if value is None or value == "" or not isinstance(marker, ActsAs):
            continue
        _check(brain, principal, tool, argument, marker.kind, value)
