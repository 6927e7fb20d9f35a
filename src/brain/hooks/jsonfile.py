"""Editing a user's JSON settings file without clobbering it.

The file is parsed, brain's entries are added or removed, and it is written back with
the user's indentation and key order. What install found is kept in the install
record, so an uninstall of an untouched install restores the original bytes exactly;
when the user edited the file meanwhile, only brain's entries are taken out.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import InvalidInput
from ..memory.files import atomic_write_bytes

__all__ = ["read_json_file", "dump_json", "write_json_file", "sha256_text"]


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_json_file(path: Path) -> tuple[dict, str | None]:
    """(parsed object, original text or None when the file does not exist). A broken file is refused."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}, None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed", field="file") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); nothing was changed",
                           field="file", hint="fix the file, then install again") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed", field="file")
    return data, text


def _indent_of(text: str | None) -> int | str:
    if text:
        match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
        if match:
            unit = match.group(1)
            return "\t" if unit.startswith("\t") else len(unit)
    return 2


def dump_json(data: dict, like: str | None) -> str:
    out = json.dumps(data, indent=_indent_of(like), ensure_ascii=False)
    return out + ("\n" if like is None or like.endswith("\n") else "")


def write_json_file(path: Path, data: dict, like: str | None) -> str:
    text = dump_json(data, like)
    atomic_write_bytes(path, text.encode("utf-8"))
    return text
