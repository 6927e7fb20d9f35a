"""Pure coordination rules: session ids, liveness, lease expiry, ask timeouts.

Kept free of I/O so they are tested directly (and with hypothesis) and so both
backends apply exactly the same rules to the rows they read.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from ..errors import InvalidInput, SettingsError

__all__ = [
    "CoordConfig", "ALIVE", "STALLED", "GONE", "liveness", "claim_live", "session_id", "clean_role",
    "role_of_session", "resolve_ask_timeout", "resolve_turn_timeout", "check_text", "DEFAULT_ASK_TIMEOUT",
]

ALIVE, STALLED, GONE = "alive", "stalled", "gone"
DEFAULT_ASK_TIMEOUT = 600.0


@dataclass(frozen=True)
class CoordConfig:
    """Windows and bounds of the coordination store (settings `coord.*`)."""

    stall_seconds: float = 120.0      # no heartbeat for this long: Stalled
    gone_seconds: float = 900.0       # no heartbeat for this long: Gone
    claim_ttl: float = 1800.0         # default claim lease
    max_claim_ttl: float = 7 * 86400.0
    signal_ttl: float = 7 * 86400.0
    signal_max: int = 500             # per recipient
    ask_timeout: float = DEFAULT_ASK_TIMEOUT
    text_max: int = 8000              # question, answer, signal body, checkpoint note
    item_max: int = 400
    prune_idle_seconds: float = 3600.0        # gone/ended this long and never did anything: deleted (0 = never)
    prune_gone_seconds: float = 7 * 86400.0   # gone/ended this long, whatever it did: deleted (0 = never)


def liveness(now: float, last_seen: float, ended: float | None, waiting_until: float | None,
             config: CoordConfig, process_alive: bool | None = None) -> str:
    """Alive -> Stalled -> Gone from the last heartbeat.

    A session blocked in an ask (``waiting_until`` in the future) is idle but waiting,
    not stalled: it stays Alive until the Gone window, so a long ask never makes the
    asker look dead; a process killed mid-wait still ends Gone. ``process_alive``
    False (the session's recorded process is known dead on this machine) is Gone at once.
    """
    if ended is not None or process_alive is False:
        return GONE
    age = now - last_seen
    if age <= config.stall_seconds:
        return ALIVE
    if age <= config.gone_seconds:
        return ALIVE if waiting_until is not None and waiting_until > now else STALLED
    return GONE


def claim_live(state: str, expires: float, now: float) -> bool:
    """A lease counts only while held and not past its expiry; nothing revives it after."""
    return state == "held" and expires > now


def clean_role(role: str) -> str:
    if not isinstance(role, str) or not role.strip():
        raise InvalidInput("a session needs a role, e.g. `--role build`", field="role")
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", role.strip()).strip("-")
    if not cleaned or len(cleaned) > 40:
        raise InvalidInput(f"role {role!r} must be 1-40 letters, digits, '-' or '_'", field="role")
    return cleaned


def session_id(now: float, role: str, machine: str, n: int = 1) -> str:
    """``sess-YYYYMMDD-HHMM-<role>@<machine>``; the n-th session of one minute gets ``.n`` on the role."""
    stamp = time.strftime("%Y%m%d-%H%M", time.gmtime(now))
    suffix = "" if n <= 1 else f".{n}"
    return f"sess-{stamp}-{role}{suffix}@{machine}"


_SESSION_ID = re.compile(r"sess-[0-9]{8}-[0-9]{4}-([A-Za-z0-9_-]{1,40})(?:\.[0-9]+)?@[^@\s]+")


def role_of_session(session: str | None) -> str | None:
    """The role written in a session id (``sess-YYYYMMDD-HHMM-<role>[.n]@<machine>``), else None."""
    match = _SESSION_ID.fullmatch(session) if isinstance(session, str) and len(session) <= 300 else None
    return match.group(1) if match else None


def resolve_ask_timeout(env_value: str | None, default: float = DEFAULT_ASK_TIMEOUT) -> float:
    """The absolute ask timeout: BRAIN_ASK_TIMEOUT when set and > 0, else the default; never infinite."""
    from ..bounds import MAX_ASK_TIMEOUT

    if default > MAX_ASK_TIMEOUT:
        raise SettingsError("brain.yml", "coord.ask_timeout", f"at most {MAX_ASK_TIMEOUT:g} seconds (one day)",
                            repr(default))
    if env_value is None or not str(env_value).strip():
        return default
    try:
        value = float(env_value) if len(str(env_value)) <= 40 else float("inf")
    except ValueError:
        raise SettingsError("BRAIN_ASK_TIMEOUT", None, "a number of seconds", repr(env_value)[:60]) from None
    if math.isnan(value) or math.isinf(value) or value < 0 or value > MAX_ASK_TIMEOUT:
        raise SettingsError("BRAIN_ASK_TIMEOUT", None, f"a number of seconds from 0 to {MAX_ASK_TIMEOUT:g} (one day)",
                            repr(env_value)[:60])
    return default if value == 0 else value


def resolve_turn_timeout(requested: float | None, absolute: float) -> float:
    """One wait turn's bound: finite, positive, never above the absolute timeout."""
    if requested is None:
        return absolute
    from ..bounds import MAX_SECONDS, bounded_seconds

    return min(bounded_seconds(requested, "timeout", high=MAX_SECONDS), absolute)


def check_text(value, field: str, limit: int, *, allow_empty: bool = False) -> str:
    from ..errors import TooLarge

    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text", field=field)
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{field} is empty", field=field)
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL character (\\x00)", field=field,
                           hint="remove it: brain stores text, identically on SQLite and PostgreSQL")
    size = len(value.encode("utf-8"))
    if size > limit:
        raise TooLarge(field, size, limit)
    return value
