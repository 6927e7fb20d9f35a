"""Printing for CLI handlers: JSON for scripts, text for people, errors to stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a cold CLI start
if TYPE_CHECKING:
    from typing import Any

__all__ = ["emit", "emit_error", "read_input_text"]


def emit(data: Any, as_json: bool, render: Callable[[Any], str] | None = None) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        text = render(data) if render else str(data)
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")


def emit_error(error, as_json: bool) -> None:
    if as_json:
        sys.stderr.write(json.dumps(error.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {error.message}\n")
        if error.hint:
            sys.stderr.write(f"  hint: {error.hint}\n")


def read_input_text(file: str | None, what: str, limit: int, setting: str | None = None) -> str:
    """Text from a file (or '-' / nothing: standard input), refusing bad UTF-8 before anything is written.

    Read in bounded memory (brain.inputs): more than ``limit`` bytes is refused while reading
    (InputTooLarge naming ``setting``), so a huge file, /dev/zero or an endless pipe costs at most
    the limit."""
    from ..errors import InvalidInput
    from ..inputs import read_bounded, read_file_bounded
    from ..memory.files import decode_text

    if file and file != "-":
        data = read_file_bounded(file, limit, what, setting=setting)
    else:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput(f"no {what} given", field="file", hint="pass --file F or pipe the text on standard input")
        data = read_bounded(sys.stdin.buffer, limit, what, setting=setting)
    return decode_text(data, file if file and file != "-" else "standard input")
