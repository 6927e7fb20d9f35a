"""Printing for CLI handlers: JSON for scripts, text for people, errors to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

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


def read_input_text(file: str | None, what: str) -> str:
    """Text from a file (or '-' / nothing: standard input), refusing bad UTF-8 before anything is written."""
    from ..errors import InvalidInput, NotFound
    from ..memory.files import decode_text

    if file and file != "-":
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise NotFound(f"input file {file}") from None
        except IsADirectoryError:
            raise InvalidInput(f"{file} is a folder", field="file") from None
    else:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput(f"no {what} given", field="file", hint="pass --file F or pipe the text on standard input")
        data = sys.stdin.buffer.read()
    return decode_text(data, file if file and file != "-" else "standard input")
