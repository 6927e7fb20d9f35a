"""`brain serve`: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

from ..bounds import MAX_COUNT, cli_int
from .common import open_from_args

__all__ = ["register", "DEFAULT_PORT"]

DEFAULT_PORT = 8765


def register(sub) -> None:
    p = sub.add_parser(
        "serve", help="run the MCP server (stdio by default, or --http)",
        description="Serve this project's brain to MCP clients (Claude Code, Codex, Cursor...). Over stdio "
                    "(the default) the client starts `brain serve` itself and stdout carries only protocol; "
                    "logs go to stderr (BRAIN_LOG=debug). With --http, serve streamable HTTP at "
                    "http://HOST:PORT/mcp, bound to 127.0.0.1 unless --host says otherwise; once a token exists "
                    "(`brain token create`) every request needs `Authorization: Bearer <token>` and each token acts "
                    "as its own session (team mode, docs/team.md), and without tokens only loopback addresses are "
                    "served. The brain is the one "
                    "of the current folder (or -C DIR). Without .brain/, --http fails before serving, and the "
                    "stdio server still starts (a client with a global config, such as Codex, opens it in every "
                    "folder) and answers every tool with not_initialized: run `brain init`.",
        epilog="Client config example: {\"command\": \"brain\", \"args\": [\"-C\", \"/path/to/repo\", \"serve\"]}")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", help="HTTP address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=cli_int(-MAX_COUNT, MAX_COUNT, "--port"), help="HTTP port (default 8765; 0 picks a free port, announced on stderr)")
    p.add_argument("--workers", type=cli_int(-MAX_COUNT, MAX_COUNT, "--workers"), metavar="N",
                   help="HTTP server processes sharing the port (default 1; one per core serves a busy team)")
    p.set_defaults(handler=cmd_serve)


def cmd_serve(args) -> int:
    from ..errors import InvalidInput

    if not args.http and (args.host is not None or args.port is not None or args.workers is not None):
        raise InvalidInput("--host, --port and --workers apply to --http only", field="http",
                           hint="add --http, or drop them to serve over stdio")
    workers = 1 if args.workers is None else args.workers
    if not 1 <= workers <= 64:
        raise InvalidInput(f"--workers {workers} must be between 1 and 64", field="workers")
    host = "127.0.0.1" if args.host is None else args.host
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port {port} is not a TCP port", field="port")
    from ..errors import NotInitialized

    try:
        brain = open_from_args(args)
    except NotInitialized as error:
        if args.http:
            raise  # no .brain/: NotInitialized on stderr, before any protocol
        brain, missing = None, error
    try:
        import mcp  # noqa: F401 - the SDK, an optional extra
    except ImportError:
        raise InvalidInput("the MCP server needs the `mcp` extra", field="http",
                           hint="pip install 'agent-brain[mcp]'") from None
    from ..mcp.transports import run_http, run_stdio, run_stdio_unbound

    if brain is None:  # a client with a global config (Codex) opened a folder without a brain
        run_stdio_unbound(missing)
        return 0

    if args.http:
        run_http(brain, host, port, workers=workers)
    else:
        run_stdio(brain)
    return 0
