"""`brain demo`: the product on a small generated project, in a temp folder (brain.demo)."""

from __future__ import annotations

from ..bounds import MAX_COUNT, cli_int
from .common import add_json

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser(
        "demo", help="see what brain does, on a small generated project in a temp folder",
        description="Make a small shop project (a git repository with a real bug) in a temp folder, give it a "
                    "brain, and show what an agent meets: the module card `brain map` writes, a task boot that "
                    "ranks the file and function a bug report is about, and two sessions whose claims overlap. "
                    "Nothing is written outside the folder (BRAIN_HOME points into it). --ui then serves the "
                    "web UI over the demo brain (needs the `web` extra).",
        epilog="The folder is kept so you can explore it; its path is printed. Delete it when done.")
    p.add_argument("--dir", metavar="FOLDER", help="a new or empty folder for the demo (default: a new temp folder)")
    p.add_argument("--ui", action="store_true", help="afterwards, serve the web UI over the demo brain (Ctrl-C stops)")
    p.add_argument("--port", type=cli_int(0, MAX_COUNT, "--port"), default=0,
                   help="with --ui: the port (default 0: a free one, printed)")
    add_json(p)
    p.set_defaults(handler=cmd_demo)


def cmd_demo(args) -> int:
    import json
    import os
    import subprocess
    import sys

    from ..demo import run_demo

    data = run_demo(args.dir, say=(lambda line: None) if args.json else print)
    if args.json:
        print(json.dumps(data, indent=2))
    if args.ui:
        sys.stdout.flush()
        env = {**os.environ, "BRAIN_HOME": data["brain_home"]}
        argv = [sys.executable, "-m", "brain", "-C", data["project"], "ui", "--port", str(args.port)]
        if os.name == "posix":  # become the server: a signal to `brain demo` stops the UI, no orphan left
            sys.stderr.flush()
            os.execve(sys.executable, argv, env)
        return subprocess.call(argv, env=env)
    return 0
