"""`brain install TARGET`: wire a client or git to the brain.

Each target is one entry of TARGETS: a function that adds its own subparser (options,
help, handler). A new integration (claude-code, codex, ...) adds a `_register_x(sub)`
function and one line in TARGETS; `brain install --help` then lists it.
"""

from __future__ import annotations

from .common import add_json, open_from_args
from .output import emit

__all__ = ["register", "TARGETS"]


def _register_git_hook(sub) -> None:
    p = sub.add_parser("git-hook", help="pre-commit hook: refresh and stage the cards of staged modules",
                       description="Install .git/hooks/pre-commit (or core.hooksPath) so that each commit refreshes "
                                   "the module cards of the staged files and stages them with the code. An existing "
                                   "hook written by someone else is never replaced silently: the install refuses, or "
                                   "with --chain keeps it as pre-commit.local and runs it first. Set BRAIN_SKIP_HOOK=1 "
                                   "to skip the refresh for one commit.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--chain", action="store_true", help="keep an existing hook and run it before brain's")
    mode.add_argument("--force", action="store_true", help="replace an existing hook")
    mode.add_argument("--uninstall", action="store_true", help="remove brain's hook (restoring a chained one)")
    add_json(p)
    p.set_defaults(handler=_cmd_git_hook)


def _cmd_git_hook(args) -> int:
    from ..cards.githook import install_git_hook, uninstall_git_hook

    brain = open_from_args(args)
    if args.uninstall:
        data = uninstall_git_hook(brain)
        emit(data, args.json, lambda d: (f"removed {d['hook']}" + (f" (restored the chained hook)" if d["restored"] else ""))
             if d["removed"] else f"no brain hook at {d['hook']}")
        return 0
    data = install_git_hook(brain, chain=args.chain, force=args.force)
    emit(data, args.json, lambda d: f"installed {d['hook']}" + (f" (runs {d['chained']} first)" if d["chained"] else ""))
    return 0


# target name -> function adding its subparser
TARGETS = {
    "git-hook": _register_git_hook,
    "claude-code": lambda sub: _clients().register_install_claude_code(sub),
    "codex": lambda sub: _clients().register_install_codex(sub),
}


def _clients():
    from . import log  # the client integrations live with the log and hooks (issue 6)

    return log


def register(sub) -> None:
    p = sub.add_parser("install", help="wire a client or git to the brain (" + ", ".join(TARGETS) + ")",
                       description="Install an integration. Targets: " + ", ".join(TARGETS) + ".")
    targets = p.add_subparsers(dest="target", metavar="TARGET")
    for name in TARGETS:
        TARGETS[name](targets)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])
