"""What a JSON-RPC message must be before the SDK parses it: nested at most ``MAX_DEPTH`` deep, of bounded size.

The SDK's parser stops at its own recursion limit (about 250 levels) and the stdio transport
then drops the message without a word: a tool argument nested 200,000 deep (valid JSON) got no
answer at all, and the client waited forever. Here the nesting is measured first, in one
linear pass that never recurses, and a message above the bound is answered with a JSON-RPC
error (``-32600``) carrying the request's own ``id`` (found in the same pass), so the client's
call ends with an error instead of hanging. Over stdio a line longer than the size bound is
answered the same way without being held whole (``stdio.py``); over HTTP the team server's
body limit already applies and ``DepthGuard`` checks the nesting before the SDK's app.
"""

from __future__ import annotations

import json
import re

__all__ = ["MAX_DEPTH", "Refusal", "check_message", "request_id", "nesting_exceeds", "DepthGuard", "error_line",
           "read_body", "replaying", "send_json"]

MAX_DEPTH = 64  # far above any MCP message (tool arguments are flat records), far below the parser's limit

_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')
_ID_VALUE = re.compile(r'\s*+:\s*+("(?:[^"\\]++|\\.)*+"|-?\d{1,19}(?![\d.eE]))')


class Refusal:
    """Why a message is answered with an error rather than parsed, and the id to answer."""

    def __init__(self, code: int, message: str, request_id: str | int | None) -> None:
        self.code = code
        self.message = message
        self.request_id = request_id


def _scan(text: str, bound: int) -> tuple[bool, str | int | None]:
    """(whether the nesting goes deeper than ``bound``, the top-level ``"id"`` if one was seen): one pass."""
    depth = 0
    deepest = 0
    found: str | int | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
        elif depth == 1 and found is None and token == '"id"':
            value = _ID_VALUE.match(text, match.end())
            if value:
                try:
                    parsed = json.loads(value.group(1))
                except ValueError:
                    parsed = None
                found = parsed if isinstance(parsed, (str, int)) else None
        if deepest > bound and found is not None:
            break  # both known: the rest cannot change the answer
    return deepest > bound, found


def nesting_exceeds(text: str, bound: int = MAX_DEPTH) -> bool:
    """Whether ``text`` (JSON) nests arrays and objects deeper than ``bound``: linear, no recursion."""
    if text.count("[") + text.count("{") <= bound:  # the common case, at C speed: cannot be deeper
        return False
    return _scan(text, bound)[0]


def request_id(text: str) -> str | int | None:
    """The top-level ``"id"`` of a JSON-RPC message, read without parsing it (None when there is none)."""
    return _scan(text, MAX_DEPTH)[1]


def check_message(text: str, bound: int = MAX_DEPTH) -> Refusal | None:
    """None for a message the SDK may parse; else the error to answer it with."""
    if text.count("[") + text.count("{") <= bound:
        return None
    too_deep, found = _scan(text, bound)
    if not too_deep:
        return None
    return Refusal(-32600, f"Invalid request: JSON nested deeper than {bound} levels", found)


def error_line(refusal: Refusal) -> bytes:
    """The JSON-RPC error answering ``refusal``, serialized."""
    return json.dumps({"jsonrpc": "2.0", "id": refusal.request_id,
                       "error": {"code": refusal.code, "message": refusal.message}}).encode("utf-8")


class DepthGuard:
    """ASGI: a POSTed body nested deeper than ``MAX_DEPTH`` is answered 400 with the JSON-RPC error, unparsed.

    Sits behind the team middleware, which has already bounded the body's size and buffered it."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        if body is None:
            return None
        refusal = check_message(body.decode("utf-8", "replace"))
        if refusal is not None:
            return await send_json(send, 400, error_line(refusal))
        return await self.app(scope, replaying(body, receive), send)


async def read_body(receive) -> bytes | None:
    """A request's whole body (an outer layer already bounded its size), or None when the client left."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def replaying(body: bytes, receive):
    """An ASGI ``receive`` that gives the app ``body`` (already read) first, then the client's next messages."""
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def send_json(send, status: int, payload: bytes) -> None:
    """One whole JSON response."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": payload})
