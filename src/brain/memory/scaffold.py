"""`brain init`: the `.brain/` layout, its .gitignore, and one pointer line in AGENTS.md.

Idempotent: files that exist are left alone, and the AGENTS.md line is recognised by
its marker so it is never added twice, whatever the user did to its wording.
"""

from __future__ import annotations

from pathlib import Path

from .files import atomic_write_bytes

__all__ = ["POINTER_MARKER", "POINTER_LINE", "scaffold", "add_pointer_line", "ensure_gitignore", "GITIGNORE_LINES"]

POINTER_MARKER = "<!-- brain:pointer -->"
POINTER_LINE = (
    "Project memory lives in `.brain/`: start each session with `brain boot` (MCP tool `brain_boot`), "
    "which puts `.brain/now.md` first; update `now.md` before you stop. " + POINTER_MARKER
)

FOLDERS = ("modules", "contracts", "decisions", "handoffs", "notes", "workflows", "agents", "runtime")

GITIGNORE_LINES = ("runtime/", "brain.local.yml", ".*.tmp")  # .*.tmp: what a writer killed mid-write leaves
GITIGNORE = "# brain: machine-local and derived state\n" + "".join(line + "\n" for line in GITIGNORE_LINES)

BRAIN_YML = """\
# brain settings (versioned). Machine values go in brain.local.yml (gitignored).
# Every key is documented in the README section "Settings".
version: 1
boot:
  budget: 8000
"""

NOW_MD = """\
# Now

## Current step
Nothing recorded yet. Replace this with what is in progress.

## Next action
One line: the very next thing to do.

## Implicit context
What a new session must know that is not written elsewhere.
"""

FOCUS_MD = """\
# Focus

What matters on this project right now, and what to leave alone.
"""

DECISIONS_MD = "# Decisions\n\nNo decision recorded yet.\n"


def _write_if_absent(path: Path, text: str, created: list[str], root: Path) -> None:
    if not path.exists():
        atomic_write_bytes(path, text.encode("utf-8"))
        created.append(path.relative_to(root).as_posix())


def ensure_gitignore(brain_dir: Path) -> list[str]:
    """Append the ignore lines an older `.brain/.gitignore` lacks (re-running `brain init` does it);
    the user's own lines are kept as they are. Returns the lines added."""
    path = brain_dir / ".gitignore"
    if path.is_symlink() or not path.is_file():
        return []
    from ..inputs import read_repository_file

    raw = read_repository_file(path, what=str(path))
    if raw is None:
        return []
    text = raw.decode("utf-8", errors="surrogateescape")
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        new = text + sep + "".join(line + "\n" for line in missing)
        atomic_write_bytes(path, new.encode("utf-8", errors="surrogateescape"))
    return missing


def _check_pointer_file(agents_md: Path) -> None:
    """Refuse, before anything is created, an AGENTS.md that is a link or not a regular file: brain
    appends one line to it and never writes through a link a clone carried."""
    from ..errors import PathRefused

    if agents_md.is_symlink():
        raise PathRefused(agents_md.name, "symlink", f"{agents_md} is a symbolic link; brain appends its pointer "
                                                     "line only to a regular file (replace the link by a copy)")
    if agents_md.exists() and not agents_md.is_file():
        raise PathRefused(agents_md.name, "special", f"{agents_md} is not a regular file")


def add_pointer_line(agents_md: Path, title: str = "Agents") -> bool:
    """Append the pointer line unless a line with its marker is there. Returns True if added.

    A file created here starts with ``# <title>`` (AGENTS.md: Agents; CLAUDE.md: Claude)."""
    if agents_md.exists():
        from ..inputs import read_repository_file

        _check_pointer_file(agents_md)
        raw = read_repository_file(agents_md, what=str(agents_md)) or b""  # a clone's file: bounded
        text = raw.decode("utf-8", errors="surrogateescape")
        if POINTER_MARKER in text:
            return False
        sep = "" if not text or text.endswith("\n") else "\n"
        new = text + sep + ("\n" if text.strip() else "") + POINTER_LINE + "\n"
        atomic_write_bytes(agents_md, new.encode("utf-8", errors="surrogateescape"))
    else:
        atomic_write_bytes(agents_md, (f"# {title}\n\n" + POINTER_LINE + "\n").encode("utf-8"))
    return True


def scaffold(repo: Path) -> list[str]:
    """Create what is missing of `.brain/` under ``repo``; return the paths created."""
    root = repo
    brain_dir = repo / ".brain"
    created: list[str] = []
    _check_pointer_file(repo / "AGENTS.md")  # refused before `.brain/` is made, so nothing is half-done
    brain_dir.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        sub = brain_dir / folder
        if sub.is_symlink():
            continue  # a link a cloned repository carried: never written through (brain doctor names it)
        if not sub.exists():
            if folder == "runtime":
                from .private import ensure_private_dir

                ensure_private_dir(sub)  # logs, the coordination store, token hashes: the owner's only
            else:
                sub.mkdir(parents=True)
            created.append(sub.relative_to(root).as_posix() + "/")
        if folder != "runtime":
            _write_if_absent(sub / ".gitkeep", "", [], root)
    _write_if_absent(brain_dir / ".gitignore", GITIGNORE, created, root)
    created += [f".brain/.gitignore ({line})" for line in ensure_gitignore(brain_dir)]
    _write_if_absent(brain_dir / "brain.yml", BRAIN_YML, created, root)
    _write_if_absent(brain_dir / "now.md", NOW_MD, created, root)
    _write_if_absent(brain_dir / "focus.md", FOCUS_MD, created, root)
    _write_if_absent(brain_dir / "decisions.md", DECISIONS_MD, created, root)
    if add_pointer_line(repo / "AGENTS.md"):
        created.append("AGENTS.md (pointer line)")
    return created
