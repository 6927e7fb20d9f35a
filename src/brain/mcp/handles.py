"""Session handles: an explicit identity for callers that have no connection of their own.

Why: under the 2026-07-28 stateless revision a request stands alone. Over HTTP, without a
bearer token, nothing tells one caller from another, so every anonymous caller used to act
as the server's one connection session: three agents' claims landed in one session and an
overlap between them could never be seen. ``brain_session_start`` now starts a session for
the caller and mints a *handle* for it; the caller passes the handle back on each request
(the ``Brain-Session`` HTTP header, the ``brain/session`` key of the request's ``_meta``, or
the ``session`` argument of a tool that has one) and acts as that session.

A handle is ``bsh_<payload>.<mac>``: the payload names the session and the token that minted
it (empty without a token), the mac is an HMAC-SHA256 under a 32-byte key kept 0600 beside
the coordination store (``session-handles.key``), so every worker process and every worktree
server of the repository verifies it without shared memory, and nobody can forge one or
turn one into another session's. It is refused (``SessionHandleRefused``) when it is
malformed or its mac does not verify (``unknown``), when it was minted under another token
than the caller's (``foreign``: a token acts only as its own session), or when its session
has ended or is gone (``expired``: a handle lives exactly as long as its session; the
session's process is the server, so a restarted server's handles expire with it).

SDK-free: the server adapter reads the handle off each request and puts the session in
``CALLER`` (a context variable, so it follows a sync tool onto its worker thread).
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import os
import secrets

from ..errors import DamagedStore, SessionHandleRefused

__all__ = ["PREFIX", "META_KEY", "HEADER", "CALLER", "REQUEST_CLIENT", "KEY_FILE", "MAX_HANDLE", "mint", "resolve", "is_handle",
           "caller_session", "handle_of_request"]

PREFIX = "bsh_"
META_KEY = "brain/session"  # the request `_meta` key carrying a handle (any transport, any revision)
HEADER = "brain-session"  # the HTTP header carrying a handle (`Brain-Session: bsh_...`)
KEY_FILE = "session-handles.key"
MAX_HANDLE = 600  # bytes: a token name and a session id encoded, and the mac; longer is not a handle
_MAC_BYTES = 24
_DOMAIN = b"brain session handle v1\0"

CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("brain_caller_session", default=None)
# the client name a 2026-07-28 request's envelope gives (its `_meta` client info), for a session's default role
REQUEST_CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("brain_request_client", default=None)


def caller_session() -> str | None:
    """The session the current request's handle names (None: the request carried none)."""
    return CALLER.get()


def is_handle(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key(brain) -> bytes:
    """The handle key of this repository's coordination store, created once (32 random bytes, 0600)."""
    cached = brain.__dict__.get("_handle_key")
    if cached is not None:
        return cached
    from ..memory.private import ensure_private_dir, open_private

    folder = ensure_private_dir(brain.store_dir)
    path = folder / KEY_FILE
    if not path.exists():
        tmp = folder / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
        try:
            os.write(fd, secrets.token_bytes(32))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # atomic and exclusive: two processes starting at once agree on one key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        key = os.read(fd, 64)
    finally:
        os.close(fd)
    if len(key) != 32:
        raise DamagedStore(str(path), "session-handle key", f"{len(key)} bytes instead of 32",
                           f"delete {path} (every handle minted so far stops working) and start the server again")
    brain.__dict__["_handle_key"] = key
    return key


def _mac(brain, payload: bytes) -> bytes:
    return hmac.new(_key(brain), _DOMAIN + payload, hashlib.sha256).digest()[:_MAC_BYTES]


def mint(brain, session: str, owner: str | None) -> str:
    """The handle of ``session`` for the caller ``owner`` (a token's name, None without a token)."""
    payload = f"{owner or ''}\n{session}".encode("utf-8")
    return f"{PREFIX}{_b64(payload)}.{_b64(_mac(brain, payload))}"


def _decode(brain, handle: str) -> tuple[str, str] | None:
    """(owner, session) of a handle whose mac verifies, else None. Linear in the handle's length."""
    if not isinstance(handle, str) or len(handle) > MAX_HANDLE or not handle.startswith(PREFIX):
        return None
    body, dot, mac = handle[len(PREFIX):].partition(".")
    if not dot or not body or not mac:
        return None
    try:
        payload, given = _unb64(body), _unb64(mac)
    except (ValueError, TypeError):
        return None
    if not hmac.compare_digest(given, _mac(brain, payload)):
        return None
    owner, newline, session = payload.decode("utf-8", "replace").partition("\n")
    return (owner, session) if newline and session else None


def resolve(brain, handle: str, owner: str | None) -> str:
    """The session ``handle`` names, for the caller ``owner``; ``SessionHandleRefused`` otherwise."""
    decoded = _decode(brain, handle)
    if decoded is None:
        raise SessionHandleRefused("unknown")
    minted_by, session = decoded
    if minted_by != (owner or ""):
        raise SessionHandleRefused("foreign")
    from ..errors import NotFound

    try:
        info = brain.coord.session(session)
    except NotFound:
        raise SessionHandleRefused("expired") from None
    if info.liveness == "gone":
        raise SessionHandleRefused("expired")
    return session


def handle_of_request(meta, request) -> str | None:
    """The handle a request carries: its ``_meta`` key first, else its ``Brain-Session`` header."""
    value = None
    if meta is not None:
        extra = meta if isinstance(meta, dict) else (getattr(meta, "model_extra", None) or {})
        value = extra.get(META_KEY)
    if value is None and request is not None:
        headers = getattr(request, "headers", None)
        if headers is not None:
            value = headers.get(HEADER)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SessionHandleRefused("unknown")
    return value.strip()
