"""`brain ui`: the web UI for humans (work state, claims, signals, threads, memory, usage)."""

from __future__ import annotations

from ..bounds import MAX_COUNT, MAX_SECONDS, cli_int, cli_seconds
from .common import open_from_args

__all__ = ["register", "DEFAULT_PORT"]

DEFAULT_PORT = 8766


def register(sub) -> None:
    p = sub.add_parser(
        "ui", help="serve the web UI for humans (127.0.0.1 by default)",
        description="Serve this project's brain to a browser: live sessions and who waits on whom, claims and "
                    "their overlaps (record a decision), signals (send one), conversation threads replayed "
                    "turn by turn with their handoff, the memory (now, focus, cards, decisions, notes, search) "
                    "and the usage figures. Binds 127.0.0.1 unless --host says otherwise; write actions are "
                    "protected against cross-site requests. Needs the `web` extra.",
        epilog="Then open the printed address. Ctrl-C stops the server (and ends its human session).")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; a non-loopback address needs team "
                        "tokens, `brain token create`)")
    p.add_argument("--port", type=cli_int(-MAX_COUNT, MAX_COUNT, "--port"), default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 picks a free one, announced on stderr)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also accept requests whose Host header names NAME (repeatable; needed when binding "
                        "a non-loopback address and browsing by machine name or IP; the server.allowed_hosts "
                        "setting adds names for every run)")
    p.add_argument("--poll", type=cli_seconds(MAX_SECONDS, "--poll"), default=2.0, metavar="SECONDS",
                   help="how often live panels refresh in the browser (default 2)")
    p.set_defaults(handler=cmd_ui)


def cmd_ui(args) -> int:
    import socket
    import sys

    from ..errors import InvalidInput

    if not 0 <= args.port <= 65535:
        raise InvalidInput(f"--port {args.port} is not a TCP port", field="port")
    if not 0.2 <= args.poll <= 3600:
        raise InvalidInput("--poll must be between 0.2 and 3600 seconds", field="poll")
    brain = open_from_args(args)  # no .brain/: NotInitialized before anything is bound
    from ..team.server import check_exposure, host_allow_list

    check_exposure(brain, args.host, command="brain ui")  # no tokens: loopback only, like `brain serve --http`
    try:
        import jinja2  # noqa: F401
        import markdown_it  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise InvalidInput("the web UI needs the `web` extra", field="ui",
                           hint="pip install 'agent-brain[web]'") from None
    from ..web import create_app

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", field="port",
                           hint="pick another --port, or 0 for a free one") from None
    sock.listen(128)  # connections queue from now on: the address printed below is usable at once
    port = sock.getsockname()[1]
    hosts = host_allow_list(brain, args.host, port, args.allow_host)  # every bind address, loopback included
    if args.host in ("0.0.0.0", "::") and not args.allow_host:
        sys.stderr.write("brain ui: bound to every interface; pass --allow-host NAME for each name or IP "
                         "browsers will use (other Host headers are refused)\n")
    from ..team.middleware import web_middleware

    # team mode: once a token exists, the UI needs one too (Authorization header or the /login cookie)
    from ..team.hosts import HostCheck

    # the Host check first, before the sign-in: a rebound name never even gets the login form
    app = HostCheck(create_app(brain, middleware=web_middleware(brain), allowed_hosts=hosts, poll_seconds=args.poll),
                    hosts)
    from ..team.connections import guarded_protocol, limits_from_settings

    limits = limits_from_settings(brain.settings)  # request deadlines, connections per address (as brain serve --http)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    sys.stderr.write(f"brain ui: serving {brain.name} at http://{shown}:{port}/\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="on", http=guarded_protocol(limits),
                            backlog=limits.backlog, ws="none")
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0
