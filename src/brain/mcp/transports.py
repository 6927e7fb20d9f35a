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

__all__ = ["run_stdio", "run_stdio_unbound", "run_http", "event_loop_options", "LISTENING"]

log = logging.getLogger("brain.mcp")

LISTENING = "brain MCP server listening on "  # followed by the URL, on stderr


def run_stdio(brain) -> None:
    import anyio

    from .server import build_server

    from .stdio import serve_stdio

    server = build_server(brain, transport="stdio")
    log.debug("serving %s over stdio", brain.dir)
    if sys.stdin is not None and sys.stdin.isatty():  # a person ran it: say what it waits for
        sys.stderr.write("brain MCP server on stdio: an MCP client starts this command and speaks JSON-RPC on its "
                         "standard input (see `brain serve --help`; --http serves HTTP). Ctrl-D stops it.\n")
    anyio.run(serve_stdio, server, stdio_line_limit(brain.settings))


def stdio_line_limit(settings=None) -> int:
    """The longest line (one JSON-RPC message) the stdio server reads: the HTTP body limit, or room for the
    largest memory write once JSON-escaped (8 bytes per byte of text), whichever is larger."""
    from ..settings import SCHEMA

    def value(key: str) -> int:
        return settings[key] if settings is not None else SCHEMA[key].default

    return max(value("server.max_request_bytes"), 8 * value("limits.write_bytes"))


def run_stdio_unbound(error) -> None:
    """Serve over stdio in a folder without a brain: every tool answers ``error`` (server.build_unbound_server)."""
    import anyio

    from .server import build_unbound_server

    log.warning("%s: serving tools that say so (%s)", error.message, error.hint)
    from .stdio import serve_stdio

    anyio.run(serve_stdio, build_unbound_server(error), stdio_line_limit())


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


def run_http(brain, host: str = "127.0.0.1", port: int = 8765, *, path: str = "/mcp", workers: int = 1) -> None:
    """Serve streamable HTTP on ``host:port`` (``port`` 0 picks a free port, announced on stderr).

    ``workers`` > 1 forks that many server processes sharing the listening socket (the
    kernel spreads connections among them), each with its own ``Brain``: the HTTP
    transport keeps no per-connection state and a token's session is decided under the
    token store's file lock, so any worker can answer any request.
    """
    from ..team.server import check_exposure

    from ..team.connections import limits_from_settings

    check_exposure(brain, host)  # no tokens: loopback only
    limits_from_settings(brain.settings)  # a limit out of its range stops the server before it listens
    if workers > 1 and not brain.tokens.exists():
        from ..errors import InvalidInput

        raise InvalidInput(f"--workers {workers} needs bearer tokens: without one, each worker would start its own "
                           "session for the same caller", field="workers",
                           hint="create a token per agent first (`brain token create NAME --role R`), "
                                "or serve with one worker")
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
    sock.listen(1024)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    try:
        if workers <= 1:
            _announce(f"{LISTENING}http://{shown}:{bound_port}{path}")
            _serve_socket(brain, sock, host, path)
        else:
            from .prefork import run_workers

            def serve_in_child() -> None:  # a fresh Brain: no connection or lock crosses the fork
                _serve_socket(type(brain)(brain.dir, brain.settings, brain.env), sock, host, path)

            run_workers(workers, serve_in_child,
                        announce=lambda: _announce(f"{LISTENING}http://{shown}:{bound_port}{path}"))
    finally:
        sock.close()


def _announce(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _serve_socket(brain, sock: socket.socket, host: str, path: str) -> None:
    """One server process: the team app (bearer tokens once any exists, body limit) on ``sock``."""
    import anyio
    import uvicorn

    from ..team.connections import guarded_protocol, limits_from_settings
    from ..team.server import team_app

    app = team_app(brain, path=path, host=host, port=sock.getsockname()[1])
    _quiet_collector()
    debug = logging.getLogger("brain").isEnabledFor(logging.DEBUG)
    # request deadlines, a bound per client address and on a request's head (brain.team.connections), on
    # httptools when the speed extra installed it, else h11: uvicorn's own protocols have none of them
    limits = limits_from_settings(brain.settings)
    config = uvicorn.Config(app, log_config=_uvicorn_logging(debug), log_level="debug" if debug else "warning",
                            lifespan="on", http=guarded_protocol(limits), backlog=limits.backlog,
                            ws="none")  # no websockets are served: an upgrade stays a plain (guarded) request
    anyio.run(uvicorn.Server(config).serve, [sock], backend_options=event_loop_options())


def event_loop_options() -> dict:
    """anyio's options for the HTTP server's event loop: uvloop when the ``speed`` extra installed it.

    Why: under 64 clients a fifth of the server's CPU is the event loop and its sockets, and uvloop's
    loop (libuv, in C) does the same work for less (README, team server). It is optional and imported
    here only: without it, or when it cannot be imported on this platform, asyncio's own loop serves."""
    try:
        import uvloop  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed, or broken: asyncio's loop is always there
        return {}
    return {"use_uvloop": True}


def _quiet_collector() -> None:
    """Move what start-up built (modules, the app, its schemas: a few hundred thousand objects) out of the
    collector's sight, and collect the youngest generation 10x less often: a request allocates thousands of
    short-lived objects, and each collection walked them all again (about 5% of a server's CPU under 64
    clients, ``perf``). Freed memory is unaffected; only cycles wait longer to be collected."""
    import gc

    gc.collect()
    gc.freeze()
    first, second, third = gc.get_threshold()
    gc.set_threshold(max(first, 7000), second, third)
