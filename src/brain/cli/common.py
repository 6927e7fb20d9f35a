"""Shared pieces of command handlers."""

from __future__ import annotations

import argparse

__all__ = ["open_from_args", "add_json", "add_role", "writer_role"]

ROLE_HELP = ("the writer's role, checked against the territories of brain.yml (default: $BRAIN_ROLE, else the role "
             "in $BRAIN_SESSION's id, else `agent`); named in the commit when sync.commit_on_write is on")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def add_role(parser: argparse.ArgumentParser, help: str = ROLE_HELP) -> None:
    parser.add_argument("--role", metavar="R", help=help)


def writer_role(brain, args) -> str:
    """The role a CLI write is made as: ``--role``, else $BRAIN_ROLE, else the role written in $BRAIN_SESSION's
    id, else the default role. Never None: a command without ``--role`` is checked like any writer, so a
    territory holds against it (brain.security.territories.surface_role)."""
    from ..coord.rules import role_of_session
    from ..security.territories import surface_role

    return surface_role(getattr(args, "role", None), brain.env.get("BRAIN_ROLE"),
                        role_of_session(brain.env.get("BRAIN_SESSION")))


def open_from_args(args):
    from ..workspace import open_brain

    return open_brain(getattr(args, "dir", None))
