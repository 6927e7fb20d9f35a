"""Reading a user's JSON settings file (refusing a broken one) and writing a new one in its style.

Brain's entries go into an existing file as text (``jsonedit``); ``dump_json`` is only
for a file brain creates, or one it must normalize after the user edited brain's own
entries. What install found is kept in the install record, so an uninstall of an
untouched install restores the original bytes exactly.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import InvalidInput
from ..inputs import loads_json

__all__ = ["read_json_file", "parse_json_text", "dump_json", "sha256_text"]


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
    return parse_json_text(text, path), text


def parse_json_text(text: str | None, path) -> dict:
    """The object a settings file's text holds (``{}`` for none or blank); anything else is refused."""
    if text is None or not text.strip():
        return {}
    try:
        data = loads_json(text)  # a file nested 100,000 deep is invalid JSON here, not a RecursionError
    except ValueError as exc:
        where = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(exc)[:200]
        raise InvalidInput(f"{path} is not valid JSON ({where}); nothing was changed",
                           field="file", hint="fix the file, then install again") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed", field="file")
    return data


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
