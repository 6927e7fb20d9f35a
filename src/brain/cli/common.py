"""Shared pieces of command handlers."""

from __future__ import annotations

import argparse

__all__ = ["open_from_args", "add_json"]


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def open_from_args(args):
    from ..workspace import open_brain

    return open_brain(getattr(args, "dir", None))
