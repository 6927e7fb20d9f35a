"""ASGI middleware of the team server: every request authenticated, every body bounded.

Wraps any ASGI app (the MCP streamable-HTTP app, the web UI's ``create_app``):

- no ``Authorization: Bearer <token>``, an unknown or a revoked token: 401, with
  ``WWW-Authenticate: Bearer`` — checked before the body is read, so an anonymous
  client cannot make the server buffer anything;
- a body above ``max_body`` bytes: 413, whether announced by Content-Length or sent
  chunked (the body is read up to the limit and replayed to the app);
- otherwise the verified ``Principal`` is put in the scope (``brain.principal``) and
  in the ``PRINCIPAL`` context variable for the app's own code.

For a browser (the web UI), ``cookie=True`` also accepts the token from the
``brain_token`` cookie (HttpOnly, SameSite=Strict, set by the small ``/login`` form
this middleware serves), since a browser cannot add an Authorization header itself.
The MCP endpoint takes the header only.

Refusals are answered here: the app (and so the brain) never sees the request.
"""

from __future__ import annotations

import json
import logging

from .identity import PRINCIPAL, SCOPE_KEY, Principal
from .tokens import TokenStore

__all__ = ["TeamAuthMiddleware", "protect", "web_middleware", "COOKIE", "LOGIN_PATH"]

log = logging.getLogger("brain.team")


async def _respond(send, status: int, error: str, message: str, extra_headers: list | None = None) -> None:
    body = json.dumps({"error": error, "message": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra_headers or [])})
    await send({"type": "http.response.body", "body": body})


class TeamAuthMiddleware:
    def __init__(self, app, store: TokenStore | None, *, max_body: int = 1048576, realm: str = "brain",
                 cookie: bool = False, require: bool | None = True) -> None:
        """``store=None`` or ``require=False``: no authentication, only the body limit. ``require=None``:
        authentication as soon as the store exists, checked per request (the first `brain token create`
        protects a server that is already running)."""
        self.app = app
        self.require = require
        self.store = store
        self.max_body = max_body
        self.realm = realm
        self.cookie = cookie

    def _principal(self, scope) -> tuple[Principal | None, str]:
        raw = None
        for key, value in scope.get("headers") or ():
            if key == b"authorization":
                raw = value.decode("latin-1")
                break
        if raw is None and self.cookie:
            token = _cookie(scope, COOKIE)
            raw = f"Bearer {token}" if token else None
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
        return Principal(record.name, record.role, record.machine, record.session_prefix,
                         tuple(record.layers or ())), ""

    async def __call__(self, scope, receive, send):
        kind = scope.get("type")
        if kind == "lifespan":
            return await self.app(scope, receive, send)
        if kind != "http":  # websockets are not served
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return None
        guarded = self.store is not None and (self.require or (self.require is None and self.store.exists()))
        if self.cookie and guarded and scope.get("path") == LOGIN_PATH:
            return await self._login(scope, receive, send)
        principal, reason = self._principal(scope) if guarded else (None, "")
        if principal is None and guarded:
            if self.cookie and scope.get("method") == "GET":  # a browser: show the token form
                return await _html(send, 401, _login_page(self.store))
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
                                  f"request body of {length} bytes is above the limit of {self.max_body} bytes "
                                  "(setting server.max_request_bytes)")
        body = bytearray()
        more = scope.get("method") not in ("GET", "HEAD", "DELETE", "OPTIONS") or length
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_body:
                return await _respond(send, 413, "too_large",
                                      f"request body is above the limit of {self.max_body} bytes "
                                      "(setting server.max_request_bytes)")
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


    async def _login(self, scope, receive, send):
        """GET: the token form; POST token=...: set the HttpOnly cookie if the token is valid."""
        if scope.get("method") != "POST":
            return await _html(send, 200, _login_page(self.store))
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > 4096:
                return await _respond(send, 413, "too_large", "login form too large")
            if not message.get("more_body"):
                break
        from urllib.parse import parse_qs

        token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
        if self.store.verify(token) is None:
            return await _html(send, 401, _LOGIN_FORM.replace("<!--error-->", "<p>unknown or revoked token</p>"))
        secure = "; Secure" if scope.get("scheme") == "https" or _header(scope, b"x-forwarded-proto") == "https" else ""
        cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode("latin-1")),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return None


def _login_page(store) -> str:
    """The token form, or, when no active token is left, how to leave team mode or make a token: a form
    no token can pass would be a dead end."""
    try:
        left = any(r.active for r in store.list())
    except Exception:  # noqa: BLE001 - a damaged store: the form (and the refusal) as always
        left = True
    return _LOGIN_FORM if left else _NO_TOKEN_LEFT


COOKIE = "brain_token"
LOGIN_PATH = "/login"
_NO_TOKEN_LEFT = ("<!doctype html><meta charset=utf-8><title>brain: team mode without tokens</title>"
                  "<h1>No token is left</h1><p>This brain is in team mode (tokens were created for it), and every "
                  "token was revoked or deleted, so no one can sign in.</p><ul>"
                  "<li>Back to local mode: run <code>brain team leave --yes</code> in the project, then restart "
                  "<code>brain ui</code> on 127.0.0.1.</li>"
                  "<li>Or stay in team mode: <code>brain token create NAME --role human</code> prints a token to "
                  "sign in with, then reload this page.</li></ul>")
_LOGIN_FORM = ("<!doctype html><meta charset=utf-8><title>brain: sign in</title>"
               "<form method=post action=/login><p>Paste your brain token (<code>brain token create NAME</code>)</p>"
               "<!--error--><input name=token type=password autocomplete=off size=60> <button>sign in</button></form>")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key == name:
            return value.decode("latin-1")
    return None


def _cookie(scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name and value:
            return value
    return None


async def _html(send, status: int, page: str) -> None:
    body = page.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode("ascii")),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


def protect(app, brain, *, max_body: int | None = None, require_auth: bool | None = None, cookie: bool = False):
    """``app`` behind the team server's bearer tokens (``brain.tokens``) and body limit.

    ``require_auth=None`` (the default) requires a token as soon as any token was ever
    created for this brain, checked per request (revoking the last one does not open the server)."""
    limit = brain.settings["server.max_request_bytes"] if max_body is None else max_body
    return TeamAuthMiddleware(app, brain.tokens, max_body=limit, cookie=cookie, require=require_auth)


def web_middleware(brain, *, require_auth: bool | None = None) -> list:
    """The ``middleware=`` list for the web UI's ``create_app``: the same tokens, cookie sign-in for browsers."""
    from starlette.middleware import Middleware

    return [Middleware(TeamAuthMiddleware, store=brain.tokens, max_body=brain.settings["server.max_request_bytes"],
                       cookie=True, require=require_auth)]
