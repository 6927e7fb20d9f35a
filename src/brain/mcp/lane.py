"""The team server's fast lane: a plain ``tools/call`` answered without the SDK's per-request session.

In stateless JSON mode the SDK serves every POST by building a transport, two memory-stream
pairs, a JSON-RPC dispatcher and a server connection, starting a task for them in its own task
group, passing the message through the streams and tearing it all down again: about 1.5 ms of
CPU a request on this project's 2-core benchmark machine, five times the claim it carries
(``bench/bench_team.py``; a claim in the library costs about 0.3 ms). This lane answers the one
request an agent makes all day, ``tools/call``, by calling the same tool the SDK would (the
``MCPServer`` built by ``brain.mcp.server``: argument validation, unknown arguments refused,
``access.authorize``, the per-token call limit, error mapping) and shaping the result with the
SDK's own per-version serializer (``mcp_types.methods``, its public API).

It takes a request only when everything about it is ordinary; anything else (another method,
a notification, a batch, a ``_meta`` envelope, a 2026-07-28 request, a header the SDK would
refuse, a body that does not parse or validate) goes to the SDK's app unchanged, body replayed,
so every refusal keeps the SDK's wording. Nothing runs before the decision, so a request the
lane passes on has had no effect. Authentication, the Host check, the body limit and the depth
guard sit in front of it (``brain.team.server.team_app``); the lane sees only what they let in.
"""

from __future__ import annotations

import logging
from typing import Any

from .framing import read_body, replaying, send_json

__all__ = ["ToolCallLane", "LANE_KEYS"]

log = logging.getLogger("brain.mcp")

LANE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})  # a request with any other member goes to the SDK
_JSON = "application/json"


def _headers(scope) -> dict[bytes, bytes]:
    """The request's headers, the first of each name (ASGI gives them lowercased)."""
    out: dict[bytes, bytes] = {}
    for key, value in scope.get("headers") or ():
        out.setdefault(key, value)
    return out


def _accepts_json(accept: str) -> bool:
    """The SDK's Accept rule for JSON answers (``check_accept_headers``, RFC 7231 wildcards)."""
    types = [part.strip().split(";")[0].strip().lower() for part in accept.split(",")]
    return any(t in (_JSON, "application/*", "*/*") for t in types)


def _json_content(content_type: str) -> bool:
    """Both of the SDK's Content-Type rules (the transport's and its security middleware's)."""
    parts = [part.strip() for part in content_type.split(";")[0].split(",")]
    return content_type.lower().startswith(_JSON) and _JSON in parts


class _HeadersOf:
    """What ``server.count_tool_call`` reads of a request: its headers (a Starlette ``Headers``)."""

    def __init__(self, scope) -> None:
        from starlette.datastructures import Headers

        self.headers = Headers(scope=scope)


class ToolCallLane:
    """ASGI: POST ``path`` carrying one ordinary ``tools/call`` is answered here; everything else by ``app``."""

    def __init__(self, app, server, path: str) -> None:
        from mcp_types import CallToolRequestParams
        from mcp_types import methods
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from mcp.server.streamable_http import MCP_PROTOCOL_VERSION_HEADER
        from mcp_types import DEFAULT_NEGOTIATED_VERSION

        self.app = app
        self.server = server
        self.path = path
        self._params = CallToolRequestParams
        self._methods = methods
        self._versions = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
        self._default_version = DEFAULT_NEGOTIATED_VERSION
        self._version_header = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") != self.path:
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        if body is None:
            return None
        call = self._ordinary(scope, body)
        if call is None:
            return await self.app(scope, replaying(body, receive), send)
        version, request_id, params = call
        return await send_json(send, 200, await self._answer(scope, version, request_id, params))

    def _ordinary(self, scope, body: bytes):
        """``(version, id, typed params)`` when the lane may answer this request, else None (the SDK will)."""
        import pydantic_core
        from pydantic import ValidationError

        headers = _headers(scope)
        if not _accepts_json(headers.get(b"accept", b"").decode("latin-1")):
            return None
        if not _json_content(headers.get(b"content-type", b"").decode("latin-1")):
            return None
        raw_version = headers.get(self._version_header)
        version = self._default_version if raw_version is None else raw_version.decode("latin-1")
        if version not in self._versions:  # 2026-07-28 (or unknown): the SDK's modern path decides
            return None
        try:
            message = pydantic_core.from_json(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or not set(message) <= LANE_KEYS or message.get("jsonrpc") != "2.0":
            return None
        request_id = message.get("id")
        if message.get("method") != "tools/call" or isinstance(request_id, bool) \
                or not isinstance(request_id, (int, str)):
            return None
        params = message.get("params")
        if not isinstance(params, dict) or "_meta" in params:
            return None
        try:
            self._methods.validate_client_request("tools/call", version, params)
            typed = self._params.model_validate(params, by_name=False)
        except (ValidationError, KeyError, ValueError):
            return None
        return version, request_id, typed

    async def _answer(self, scope, version: str, request_id, params) -> bytes:
        """The JSON-RPC response to one tool call, as the SDK would have written it."""
        import pydantic_core

        from .server import count_tool_call

        arguments = params.arguments or {}
        count_tool_call(self.server._brain, {"name": params.name, "arguments": arguments}, _HeadersOf(scope))
        try:
            result = await self.server.answer_tool_call(params.name, arguments, scope)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            answer = {"jsonrpc": "2.0", "id": request_id,
                      "result": self._methods.serialize_server_result("tools/call", version, dumped)}
        except Exception as exc:  # noqa: BLE001 - as the SDK's dispatcher: a JSON-RPC error, never a dropped call
            from mcp.shared.exceptions import MCPError

            if isinstance(exc, MCPError):
                error = exc.error.model_dump(by_alias=True, mode="json", exclude_none=True)
            else:
                log.exception("tools/call %s failed outside the tool", params.name)
                error = {"code": -32603, "message": "Internal error"}
            answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
        return pydantic_core.to_json(answer)
