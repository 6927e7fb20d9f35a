"""The team server: the MCP streamable-HTTP app (and any web app) behind bearer tokens.

``brain serve --http`` uses this through ``brain.mcp.transports.run_http``: as soon as
a token exists for the brain every request needs one; without tokens the server
stays loopback-only (``check_exposure`` refuses any other address), so a brain is
never exposed to the network anonymously by accident.
"""

from __future__ import annotations

from ..errors import InvalidInput
from .hosts import is_loopback

__all__ = ["check_exposure", "is_loopback", "team_app", "host_allow_list", "refuse_versioned_runtime"]


def check_exposure(brain, host: str, *, command: str = "brain serve --http") -> None:
    """Refuse to listen beyond this machine when no token protects the server (`brain serve --http`, `brain ui`),
    or when brain's runtime state came with the repository (``refuse_versioned_runtime``)."""
    refuse_versioned_runtime(brain)
    if not is_loopback(host) and not brain.tokens.exists():
        raise InvalidInput(f"{command}: refusing to listen on {host} without bearer tokens: anyone who reaches it "
                           "could act as any agent", field="host",
                           hint="create a token first (`brain token create NAME --role R`), or bind 127.0.0.1 "
                                "behind a TLS reverse proxy (docs/team.md)")


def refuse_versioned_runtime(brain) -> None:
    """Refuse to serve when git tracks anything under `.brain/runtime/` (one `git ls-files` at start-up).

    runtime/ is never versioned (`.brain/.gitignore`); a file there that came with a clone was put
    there on purpose: a `tokens.json` holding the hash of a token its author knows, a `brain.db` of
    their making. A server started on it would accept the author's token."""
    from ..errors import SettingsError
    from ..gitsafe import project_repo

    repo = project_repo(brain.dir)
    if repo is None:
        return
    tracked = (repo.output("ls-files", "-z", "--", str(brain.runtime)) or "").strip("\0")
    if tracked:
        first = tracked.split("\0")[0]
        raise SettingsError(str(brain.runtime), None, "brain's own runtime state, never versioned",
                            f"files tracked by git ({first}...); run `git rm -r --cached {brain.runtime}`, "
                            f"delete the folder and create your own tokens")


def host_allow_list(brain, host: str, port: int, extra: list[str] | tuple[str, ...] = ()):
    """The Host headers a server bound to ``host:port`` answers: see brain.team.hosts (plus ``server.allowed_hosts``)."""
    from .hosts import allowed_hosts

    return allowed_hosts(host, port, [*brain.settings["server.allowed_hosts"], *extra])


def team_app(brain, *, path: str = "/mcp", host: str = "127.0.0.1", port: int = 8765,
             require_auth: bool | None = None):
    """The ASGI app of the team server: MCP at ``path``, Host-checked, authenticated, size- and depth-limited."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ..mcp.framing import DepthGuard
    from ..mcp.lane import ToolCallLane
    from ..mcp.server import build_server
    from .hosts import HostCheck
    from .middleware import protect

    server = build_server(brain, transport="http")
    # Plain JSON answers and no per-connection transport state: no tool streams or calls back, the
    # session follows the bearer token (not an Mcp-Session-Id), so any worker can answer any request
    # and each call skips the SSE framing and the session registry. The SDK's own Host check covers
    # 127.0.0.1/localhost binds only: HostCheck below covers every bind address, so the SDK's is off.
    app = server.streamable_http_app(streamable_http_path=path, host=host, json_response=True, stateless_http=True,
                                     transport_security=TransportSecuritySettings(
                                         enable_dns_rebinding_protection=False))
    if require_auth is None and not is_loopback(host):
        require_auth = True  # beyond this machine a token is always needed, even if the tokens are deleted later
    # DepthGuard: a body nested deeper than the SDK's parser goes is answered with the JSON-RPC error (its id);
    # PostOnly: no stream is ever held open for a GET; ToolCallLane: an ordinary tools/call skips the SDK's
    # per-request session (the same tool, checks and result shape; anything else goes to the SDK)
    return HostCheck(protect(PostOnly(DepthGuard(ToolCallLane(app, server, path))), brain, require_auth=require_auth),
                     host_allow_list(brain, host, port), check_origin=True)


class PostOnly:
    """ASGI: ``GET`` (the SDK's server-to-client SSE stream) is answered 405 rather than held open.

    The team server answers every request with plain JSON and never sends a message of its own
    (``json_response``, ``stateless_http``), so that stream would carry nothing, for as long as the
    client keeps it: a token could hold connections open by the hundred for free. The MCP
    specification lets a server without such a stream answer 405; clients then go on with POST."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "http" and scope.get("method") == "GET":
            body = b'{"error": "method_not_allowed", "message": "this server sends no stream: POST requests"}'
            await send({"type": "http.response.start", "status": 405,
                        "headers": [(b"allow", b"POST, DELETE"), (b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode("ascii"))]})
            await send({"type": "http.response.body", "body": body})
            return None
        return await self.app(scope, receive, send)
