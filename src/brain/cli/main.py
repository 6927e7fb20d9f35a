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


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, asking for the terminal width only when it formats text.

    argparse makes a formatter for every ``add_argument`` (to check the metavar) and each one asks
    ``shutil.get_terminal_size``; importing shutil (bz2, lzma, zlib) is 2-3 ms of a cold `brain boot`
    that prints no help. The width, and the help column that depends on it, are computed as argparse
    does, at the moment text is formatted, so help and usage come out the same."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None, **kwargs):
        self._asked = (max_help_position, width)
        super().__init__(prog, indent_increment, max_help_position, width=80 if width is None else width, **kwargs)

    def format_help(self) -> str:
        max_help_position, width = self._asked
        if width is None:
            import shutil

            width = shutil.get_terminal_size().columns - 2
        self._width = width
        self._max_help_position = min(max_help_position, max(width - 20, self._indent_increment * 2))
        return super().format_help()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # usage errors: exit 2 with the subcommand's usage
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


class _Skipped:
    """What a group's ``register`` gets for a command other than the one asked: every call on it
    (``add_argument``, ``set_defaults``, ``add_subparsers``...) is accepted and builds nothing."""

    def __getattr__(self, name: str):
        return self._accept

    def _accept(self, *args, **kwargs) -> "_Skipped":
        return self


class _OneCommand:
    """The subparsers action as ``register`` sees it when the command is known: only that command's
    parser is built (a group registers up to 13; argparse costs about 0.3 ms a parser and 0.1 ms an
    argument at every cold start, and `brain boot` needs one), the others go to ``_Skipped``."""

    def __init__(self, sub, command: str):
        self._sub, self._command = sub, command

    def add_parser(self, name: str, **kwargs):
        if name == self._command or self._command in kwargs.get("aliases", ()):
            return self._sub.add_parser(name, **kwargs)
        return _Skipped()

    def __getattr__(self, name: str):
        return getattr(self._sub, name)


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
    """The parser with every command group, or only ``command``'s own parser when it is known."""
    from .. import __version__

    parser = _Parser(
        prog="brain",
        description="Local-first memory and coordination for AI coding-agent sessions.",
        epilog="Start with `brain init`, then `brain boot`. Every command has --help.",
    )
    parser.add_argument("--version", action="version", version=f"brain {__version__}")
    parser.add_argument("-C", "--dir", metavar="PATH", help="run as if started in PATH (a repository or its .brain/)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging to stderr (or set BRAIN_LOG)")
    # prog given: argparse would format the usage of `brain` to find it (the same word, and a terminal query)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, prog=parser.prog)
    group = COMMAND_INDEX.get(command or "")
    for name in [group] if group else COMMAND_MODULES:
        importlib.import_module(f".{name}", __package__).register(_OneCommand(sub, command) if group else sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    process_ends = argv is None  # the `brain` command itself (console script, `python -m brain`)
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    args.process_ends = process_ends
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
