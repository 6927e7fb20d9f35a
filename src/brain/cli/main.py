"""Entry point: builds the parser from the command modules and maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from ..errors import BrainError
from ..logs import configure_logging
from .output import emit_error

__all__ = ["main", "build_parser", "COMMAND_MODULES"]

# each module registers its subcommands; a new command group adds one name here
COMMAND_MODULES = ["core", "serve", "coord", "cards", "search", "install", "log", "team", "web", "notes", "demo"]

# command -> the module that registers it, so one command builds one group's parsers, not all
# fifty (argparse costs ~1 ms a parser at every cold start); a test keeps it equal to the modules
COMMAND_INDEX = {
    **dict.fromkeys(["init", "write", "read", "boot", "state", "doctor", "export-template", "settings"], "core"),
    "serve": "serve",
    **dict.fromkeys(["session", "claim", "release", "claims", "signal", "signals", "checkpoint", "ask", "inbox",
                     "reply", "workstate", "audit"], "coord"),
    **dict.fromkeys(["map", "report-done", "decisions", "decision"], "cards"),
    **dict.fromkeys(["search", "index", "related"], "search"),
    "install": "install",
    **dict.fromkeys(["log", "handoff", "record-turn", "import-turns", "stats", "hook", "uninstall"], "log"),
    **dict.fromkeys(["token", "sync", "team"], "team"),
    "ui": "web",
    **dict.fromkeys(["notes", "rm", "mv", "edit", "remember"], "notes"),
    "demo": "demo",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: exit 2 with the subcommand's usage
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def _command_of(argv: list[str]) -> str | None:
    """The first positional word of ``argv`` (skipping global options and their values)."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in ("-C", "--dir"):
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command group, or only the group of ``command`` when it is known."""
    from .. import __version__

    parser = _Parser(
        prog="brain",
        description="Local-first memory and coordination for AI coding-agent sessions.",
        epilog="Start with `brain init`, then `brain boot`. Every command has --help.",
    )
    parser.add_argument("--version", action="version", version=f"brain {__version__}")
    parser.add_argument("-C", "--dir", metavar="PATH", help="run as if started in PATH (a repository or its .brain/)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging to stderr (or set BRAIN_LOG)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    group = COMMAND_INDEX.get(command or "")
    for name in [group] if group else COMMAND_MODULES:
        importlib.import_module(f".{name}", __package__).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    configure_logging(verbose=args.verbose)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        try:
            result = args.handler(args)
        finally:
            _report_too_deep(getattr(args, "json", False))
        return int(result or 0)
    except BrainError as error:
        emit_error(error, getattr(args, "json", False))
        return error.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:  # a path the user gave (or BRAIN_HOME, -C) that the system refuses: one line
        from ..errors import FileSystemError

        mapped = FileSystemError(error.filename and str(error.filename), error.strerror or type(error).__name__)
        emit_error(mapped, getattr(args, "json", False))
        return mapped.exit_code


def _report_too_deep(as_json: bool) -> None:
    """One stderr line per folder a walk did not descend because it was too deep (brain.trees)."""
    trees = sys.modules.get("brain.trees")
    if trees is None:
        return
    for path in trees.take_notices():
        if as_json:
            sys.stderr.write(json.dumps({"warning": "too_deep", "path": path, "limit": trees.MAX_DEPTH}) + "\n")
        else:
            sys.stderr.write(f"warning: skipped the folders below {trees.shown(path)}: deeper than the "
                             f"{trees.MAX_DEPTH} levels brain reads\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
