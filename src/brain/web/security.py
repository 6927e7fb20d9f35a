"""Cross-site request protection for the web UI's write actions.

Every POST must carry (1) a CSRF token — the HMAC of the browser's random ``brain_csrf``
cookie under a per-process secret, sent as the ``csrf`` form field or the
``X-CSRF-Token`` header — and (2) an ``Origin`` (or, failing that, ``Referer``) naming
this very host. Every request must name an allowed ``Host`` (a rebinding attack
reaches 127.0.0.1 under a foreign host name). The cookie is ``SameSite=Strict`` and
``HttpOnly``. Pure functions; the middleware in ``app.py`` applies them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

__all__ = ["COOKIE", "HEADER", "FIELD", "new_secret", "new_cookie", "token_for", "token_ok", "host_allowed",
           "origin_ok", "LOOPBACK_HOSTS"]

COOKIE = "brain_csrf"
HEADER = "x-csrf-token"
FIELD = "csrf"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def new_cookie() -> str:
    return secrets.token_urlsafe(24)


def token_for(secret: bytes, cookie: str) -> str:
    return hmac.new(secret, cookie.encode("utf-8"), hashlib.sha256).hexdigest()


def token_ok(secret: bytes, cookie: str | None, token: str | None) -> bool:
    if not cookie or not token:
        return False
    return hmac.compare_digest(token_for(secret, cookie), token)


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host: str | None, allowed) -> bool:
    """Whether the request's Host header names this server (``allowed=None``: any host).

    ``allowed`` is a set of names (any port), or the ``HostAllowList`` of the bound address and
    port that `brain ui` passes (brain.team.hosts: name and port, loopback forms, extra names)."""
    if allowed is None:
        return True
    if hasattr(allowed, "allows"):
        return allowed.allows(host)
    if not host:
        return False
    return _hostname(host) in allowed


def origin_ok(origin: str | None, referer: str | None, host: str | None) -> bool:
    """The request comes from a page of this server: its Origin (else Referer) has our Host."""
    if not host:
        return False
    source = origin if origin and origin != "null" else referer
    if not source:
        return False
    parts = urlsplit(source)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()
