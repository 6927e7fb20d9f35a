"""Running the MCP server: stdio (one client, the default) or streamable HTTP.

Over stdio, stdout carries protocol and nothing else: the SDK's stdio transport
moves the protocol onto a private copy of file descriptor 1 and points fd 1 at
stderr, so a stray ``print`` or a child process cannot corrupt the stream; brain's
own logging goes to stderr or a file (``brain.logs``).

Over HTTP, the socket is bound and listening before the address is announced on
stderr, so a client (or a test) may connect as soon as it reads that line.
"""

from __future__ import annotations

import logging
import socket
import sys

__all__ = ["run_stdio", "run_http", "LISTENING"]

log = logging.getLogger("brain.mcp")

LISTENING = "brain MCP server listening on "  # followed by the URL, on stderr


def run_stdio(brain) -> None:
    import anyio

    from .server import build_server

    server = build_server(brain, transport="stdio")
    log.debug("serving %s over stdio", brain.dir)
    if sys.stdin is not None and sys.stdin.isatty():  # a person ran it: say what it waits for
        sys.stderr.write("brain MCP server on stdio: an MCP client starts this command and speaks JSON-RPC on its "
                         "standard input (see `brain serve --help`; --http serves HTTP). Ctrl-D stops it.\n")
    anyio.run(server.run_stdio_async)


def _uvicorn_logging(debug: bool) -> dict:
    """uvicorn's loggers, all on stderr (its default sends access lines to stdout)."""
    level = "DEBUG" if debug else "WARNING"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"}},
        "loggers": {name: {"handlers": ["stderr"], "level": level, "propagate": False}
                    for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
    }


def run_http(brain, host: str = "127.0.0.1", port: int = 8765, *, path: str = "/mcp") -> None:
    """Serve streamable HTTP on ``host:port`` (``port`` 0 picks a free port, announced on stderr)."""
    import anyio
    import uvicorn

    from ..team.server import check_exposure, team_app

    check_exposure(brain, host)  # no tokens: loopback only
    app = team_app(brain, path=path, host=host)  # bearer tokens once any exists (401), body limit (413)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        from ..errors import InvalidInput

        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="port",
                           hint="choose another --port (0 picks a free one) or stop what uses this one") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it: no 40 ms Nagle stalls
    sock.listen(128)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    debug = logging.getLogger("brain").isEnabledFor(logging.DEBUG)
    config = uvicorn.Config(app, log_config=_uvicorn_logging(debug), log_level="debug" if debug else "warning",
                            lifespan="on")
    sys.stderr.write(f"{LISTENING}http://{shown}:{bound_port}{path}\n")
    sys.stderr.flush()
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    finally:
        sock.close()
