"""Helpers of the team-server tests: a real `brain serve --http` process and authenticated SDK clients."""

from __future__ import annotations

import anyio

from test_mcp_helpers import BOUND, serve_http as team_server  # noqa: F401 - the team tests' name for it


def client_for(url: str, token: str | None, name: str = "agent"):
    """An SDK client whose every request carries ``Authorization: Bearer <token>``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp_types import Implementation

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, client_info=Implementation(name=name, version="1"))


def run(body, bound: float = BOUND):
    """``await body()`` bounded in time (``bound`` seconds)."""
    async def main():
        with anyio.fail_after(bound):
            return await body()

    return anyio.run(main)


def post(url: str, token: str | None, body: bytes, headers: dict | None = None):
    """A raw HTTP POST (status, body) — for what an SDK client would never send."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=BOUND)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
    if token:
        h["Authorization"] = f"Bearer {token}"
    try:
        conn.request("POST", parts.path, body=body, headers=h)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()
