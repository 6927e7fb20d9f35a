"""The team server: the MCP streamable-HTTP app (and any web app) behind bearer tokens.

``brain serve --http`` uses this through ``brain.mcp.transports.run_http``: as soon as
a token exists for the brain every request needs one; without tokens the server
stays loopback-only (``check_exposure`` refuses any other address), so a brain is
never exposed to the network anonymously by accident.
"""

from __future__ import annotations

import ipaddress

from ..errors import InvalidInput

__all__ = ["check_exposure", "is_loopback", "team_app"]


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(brain, host: str) -> None:
    """Refuse to listen beyond this machine when no token protects the server."""
    if not is_loopback(host) and not brain.tokens.exists():
        raise InvalidInput(f"refusing to serve on {host} without bearer tokens: anyone who reaches it could act "
                           "as any agent", field="host",
                           hint="create a token first (`brain token create NAME --role R`), or bind 127.0.0.1 "
                                "behind a TLS reverse proxy (docs/team.md)")


def team_app(brain, *, path: str = "/mcp", host: str = "127.0.0.1", require_auth: bool | None = None):
    """The ASGI app of the team server: MCP at ``path``, authenticated and size-limited."""
    from ..mcp.server import build_server
    from .middleware import protect

    server = build_server(brain, transport="http")
    # Plain JSON answers and no per-connection transport state: no tool streams or calls back, the
    # session follows the bearer token (not an Mcp-Session-Id), so any worker can answer any request
    # and each call skips the SSE framing and the session registry.
    app = server.streamable_http_app(streamable_http_path=path, host=host, json_response=True, stateless_http=True)
    if require_auth is None and not is_loopback(host):
        require_auth = True  # beyond this machine a token is always needed, even if the tokens are deleted later
    return protect(app, brain, require_auth=require_auth)
