"""The one pointer line in the file a client reads its instructions from, added and removed.

Each client reads a different file (Claude Code: CLAUDE.md; Codex: AGENTS.md). Install
adds the line there unless a line with its marker is already present, and records what
the file was; uninstall puts the original bytes back when nobody touched the file since,
else cuts only the marked line out. A line the user (or `brain init`) added is never
removed, because install did not add it. The file is read and written through ``repofiles``:
never through a link the repository ships.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from ..memory.scaffold import POINTER_LINE, POINTER_MARKER
from . import repofiles

__all__ = ["add_pointer", "remove_pointer", "read_utf8", "INSTRUCTION_FILES", "check_pointer"]

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


def _with_pointer(text: str | None, title: str) -> str | None:
    """``text`` with the pointer line appended; None when a line with its marker is already there."""
    if text is None:
        return f"# {title}\n\n" + POINTER_LINE + "\n"
    if POINTER_MARKER in text:
        return None
    sep = "" if not text or text.endswith("\n") else "\n"
    return text + sep + ("\n" if text.strip() else "") + POINTER_LINE + "\n"


def check_pointer(repo: Path, client: str) -> None:
    """Refuse now (writing nothing) what ``add_pointer`` would refuse: a link, a non-UTF-8 file."""
    repofiles.read_text(repo, INSTRUCTION_FILES[client][0])


def add_pointer(repo: Path, client: str, old: dict) -> dict:
    """Add the line for ``client``; returns the manifest fields (merged with ``old``, an earlier install's)."""
    name, title = INSTRUCTION_FILES[client]
    before = repofiles.read_text(repo, name)
    new = _with_pointer(before, title)
    if new is not None:
        repofiles.write_text(repo, name, new)
    added_now = new is not None
    return {"pointer_file": name,
            "pointer_added": added_now or bool(old.get("pointer_added")),
            "pointer_original": before if added_now else old.get("pointer_original"),
            "pointer_written": new if added_now else old.get("pointer_written")}


def remove_pointer(repo: Path, manifest: dict) -> bool:
    """Remove the line if install added it: original bytes back if untouched, else only the marked line."""
    name = manifest.get("pointer_file")
    if not manifest.get("pointer_added") or name not in {f for f, _ in INSTRUCTION_FILES.values()}:
        return False
    text = repofiles.read_text(repo, name)
    if text is None:
        return False
    if text == manifest.get("pointer_written"):
        original = manifest.get("pointer_original")
        if original is None:
            repofiles.remove(repo, name)
        else:
            repofiles.write_text(repo, name, original)
        return True
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if POINTER_MARKER not in line]
    if len(kept) == len(lines):
        return False
    rest = "".join(kept)
    if rest.strip() in ("", "# Agents", "# Claude"):
        repofiles.remove(repo, name)
    else:
        repofiles.write_text(repo, name, rest.rstrip("\n") + "\n")
    return True
