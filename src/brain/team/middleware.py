"""ASGI middleware of the team server: every request authenticated, every body bounded.

Wraps any ASGI app (the MCP streamable-HTTP app, the web UI's ``create_app``):

- no ``Authorization: Bearer <token>``, an unknown or a revoked token: 401, with
  ``WWW-Authenticate: Bearer`` — checked before the body is read, so an anonymous
  client cannot make the server buffer anything;
- a body above ``max_body`` bytes: 413, whether announced by Content-Length or sent
  chunked (the body is read up to the limit and replayed to the app);
- otherwise the verified ``Principal`` is put in the scope (``brain.principal``) and
  in the ``PRINCIPAL`` context variable for the app's own code.

Refusals are answered here: the app (and so the brain) never sees the request.
"""

from __future__ import annotations

import json
import logging

from .identity import PRINCIPAL, SCOPE_KEY, Principal
from .tokens import TokenStore

__all__ = ["TeamAuthMiddleware", "protect"]

log = logging.getLogger("brain.team")


async def _respond(send, status: int, error: str, message: str, extra_headers: list | None = None) -> None:
    body = json.dumps({"error": error, "message": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra_headers or [])})
    await send({"type": "http.response.body", "body": body})


class TeamAuthMiddleware:
    def __init__(self, app, store: TokenStore | None, *, max_body: int = 1048576, realm: str = "brain") -> None:
        """``store=None``: no authentication (a loopback server without tokens), only the body limit."""
        self.app = app
        self.store = store
        self.max_body = max_body
        self.realm = realm

    def _principal(self, scope) -> tuple[Principal | None, str]:
        raw = None
        for key, value in scope.get("headers") or ():
            if key == b"authorization":
                raw = value.decode("latin-1")
                break
        if raw is None:
            return None, "no bearer token"
        scheme, _, token = raw.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None, "not a bearer token"
        try:
            record = self.store.verify(token.strip())
        except Exception as exc:  # noqa: BLE001 - a damaged store refuses everyone, never lets anyone in
            log.error("token store unreadable: %s", exc)
            return None, "the token store is unreadable"
        if record is None:
            return None, "unknown or revoked token"
        return Principal(record.name, record.role, record.machine, record.session_prefix), ""

    async def __call__(self, scope, receive, send):
        kind = scope.get("type")
        if kind == "lifespan":
            return await self.app(scope, receive, send)
        if kind != "http":  # websockets are not served
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return None
        principal, reason = self._principal(scope) if self.store is not None else (None, "")
        if principal is None and self.store is not None:
            log.info("401 %s %s: %s", scope.get("method"), scope.get("path"), reason)
            return await _respond(send, 401, "unauthorized", f"authentication required: {reason}",
                                  [(b"www-authenticate", f'Bearer realm="{self.realm}"'.encode("ascii"))])
        length = None
        for key, value in scope.get("headers") or ():
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    return await _respond(send, 400, "bad_request", "Content-Length is not a number")
        if length is not None and length > self.max_body:
            return await _respond(send, 413, "too_large",
                                  f"request body of {length} bytes is above the limit of {self.max_body} bytes")
        body = bytearray()
        more = scope.get("method") not in ("GET", "HEAD", "DELETE", "OPTIONS") or length
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_body:
                return await _respond(send, 413, "too_large",
                                      f"request body is above the limit of {self.max_body} bytes")
            more = message.get("more_body", False)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        if principal is None:
            return await self.app(scope, replay, send)
        scope = dict(scope)
        scope[SCOPE_KEY] = principal
        token = PRINCIPAL.set(principal)
        try:
            return await self.app(scope, replay, send)
        finally:
            PRINCIPAL.reset(token)


def protect(app, brain, *, max_body: int | None = None, require_auth: bool | None = None):
    """``app`` behind the team server's bearer tokens (``brain.tokens``) and body limit.

    ``require_auth=None`` (the default) requires a token as soon as any token was ever
    created for this brain (revoking the last one does not open the server)."""
    limit = brain.settings["server.max_request_bytes"] if max_body is None else max_body
    if require_auth is None:
        require_auth = brain.tokens.exists()
    return TeamAuthMiddleware(app, brain.tokens if require_auth else None, max_body=limit)
