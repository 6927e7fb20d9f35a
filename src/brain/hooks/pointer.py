"""The one pointer line in the file a client reads its instructions from, added and removed.

Each client reads a different file (Claude Code: CLAUDE.md; Codex: AGENTS.md). Install
adds the line there unless a line with its marker is already present, and records what
the file was; uninstall puts the original bytes back when nobody touched the file since,
else cuts only the marked line out. A line the user (or `brain init`) added is never
removed, because install did not add it.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from ..memory.files import atomic_write_bytes
from ..memory.scaffold import POINTER_MARKER, add_pointer_line

__all__ = ["add_pointer", "remove_pointer", "read_utf8", "INSTRUCTION_FILES"]

# client -> (the file it reads instructions from, the title of that file when brain creates it)
INSTRUCTION_FILES = {"claude-code": ("CLAUDE.md", "Claude"), "codex": ("AGENTS.md", "Agents")}


def read_utf8(path: Path) -> str | None:
    """A client file's text, None when it is missing; not UTF-8 is refused before anything changes."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed", field="file") from None


def add_pointer(repo: Path, client: str, old: dict) -> dict:
    """Add the line for ``client``; returns the manifest fields (merged with ``old``, an earlier install's)."""
    name, title = INSTRUCTION_FILES[client]
    path = repo / name
    before = read_utf8(path)
    added_now = add_pointer_line(path, title)
    return {"pointer_file": name,
            "pointer_added": added_now or bool(old.get("pointer_added")),
            "pointer_original": before if added_now else old.get("pointer_original"),
            "pointer_written": read_utf8(path) if added_now else old.get("pointer_written")}


def remove_pointer(repo: Path, manifest: dict) -> bool:
    """Remove the line if install added it: original bytes back if untouched, else only the marked line."""
    name = manifest.get("pointer_file")
    if not manifest.get("pointer_added") or name not in {f for f, _ in INSTRUCTION_FILES.values()}:
        return False
    path = repo / name
    text = read_utf8(path) if path.is_file() else None
    if text is None:
        return False
    if text == manifest.get("pointer_written"):
        original = manifest.get("pointer_original")
        if original is None:
            path.unlink()
        else:
            atomic_write_bytes(path, original.encode("utf-8"))
        return True
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if POINTER_MARKER not in line]
    if len(kept) == len(lines):
        return False
    rest = "".join(kept)
    if rest.strip() in ("", "# Agents", "# Claude"):
        path.unlink()
    else:
        atomic_write_bytes(path, rest.rstrip("\n").encode("utf-8") + b"\n")
    return True
