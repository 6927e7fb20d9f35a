"""The one rule that decides which memory paths may be read or written.

Every door to memory (the library's Brain.read/write and MemoryStore, the CLI, the MCP
tools, the web UI's memory browser, report-done's How to use) goes through
``confine``. It first normalizes the path the caller gave (Unicode NFC, ``./`` and
``//`` dropped, ``..`` folded when it stays inside), then decides on the normalized
path only, and returns it: callers use the returned path from then on, so limits
keyed by path (``limits.now_bytes``) apply to ``./now.md`` and ``notes/../now.md`` too.

Refused for reading and writing (whatever the spelling or the case, since some file
systems fold case and Unicode forms):

- absolute paths, ``~``, ``..`` that would leave the root, backslashes;
- any component that starts with a dot (``.git``, ``.gitignore``, ``.gitattributes``,
  temporary files, a nested ``.brain``) or names git's short form ``git~1``;
- ``runtime/`` and ``brain.local.yml`` (logs, databases, tokens, machine values);
- control, format (bidirectional overrides, zero-width), surrogate and private-use
  characters, and names the file system would refuse (over 255 bytes a component);
- any symlink on the way, the file itself included: memory files are regular files,
  and a symlink committed in a cloned repository is never followed.

Writing is narrower: in a project brain only the memory areas (``now.md``,
``focus.md``, ``decisions.md``, and ``notes/``, ``workflows/``, ``agents/``,
``decisions/`` or the configured decisions folder, ``contracts/``, ``modules/``,
``handoffs/``), and only ``.md`` files (plus ``.yml`` under ``contracts/``). The
settings (``brain.yml``) are edited by hand, never through the memory API.
"""

from __future__ import annotations

import os
import stat
from collections import namedtuple
from pathlib import Path

from ..errors import NotFound, PathEscape, PathRefused

__all__ = ["MAX_NAME_BYTES", "MAX_PATH_BYTES", "WriteAreas", "PROJECT_AREAS", "normalize_memory_path",
           "check_memory_path", "confine", "forbidden_key", "is_plain_memory_name", "has_link_between"]

MAX_NAME_BYTES = 255  # one path component, as every common file system limits it
MAX_PATH_BYTES = 1024  # the whole relative path

_NEVER_TOP = frozenset({"runtime", "brain.local.yml"})  # casefolded: never read nor written
_NEVER_WRITE_TOP = _NEVER_TOP | {"brain.yml"}
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


class WriteAreas(namedtuple("WriteAreas", "files folders suffixes folder_suffixes", defaults=((".md",), ()))):
    """Where a store may be written: top-level ``files`` and ``folders`` (frozensets of exact names),
    file ``suffixes``, and ``folder_suffixes``: (folder, extra suffixes) pairs. A named tuple, not a
    dataclass: the cold boot imports no dataclasses (decision 0038)."""

    __slots__ = ()

    def with_folder(self, name: str) -> "WriteAreas":
        return WriteAreas(self.files, self.folders | {name}, self.suffixes, self.folder_suffixes)

    def suffixes_for(self, top: str) -> tuple[str, ...]:
        for folder, extra in self.folder_suffixes:
            if folder == top:
                return self.suffixes + extra
        return self.suffixes


PROJECT_AREAS = WriteAreas(
    files=frozenset({"now.md", "focus.md", "decisions.md"}),
    folders=frozenset({"notes", "workflows", "agents", "decisions", "contracts", "modules", "handoffs"}),
    folder_suffixes=(("contracts", (".yml",)),),
)


def forbidden_key(component: str) -> str:
    """The form a component is compared in: compatibility-normalized, case-folded, without the
    trailing dots and spaces some file systems drop (so `.GIT`, `.git.` and `Ｒuntime` compare equal)."""
    if component.isascii():  # NFKC leaves ASCII as it is, and its case folding is lower(): no unicodedata import
        return component.lower().rstrip(" .")
    import unicodedata

    return unicodedata.normalize("NFKC", component).casefold().rstrip(" .")


def _bad_character(name: str) -> str | None:
    if name.isascii() and name.isprintable():
        return None  # printable ASCII has none of the bad categories: the walk's usual name, without the loop
    import unicodedata

    for ch in name:
        code = ord(ch)
        if unicodedata.category(ch) in _BAD_CATEGORIES or 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE:
            return f"U+{code:04X}"
    return None


def is_plain_memory_name(name: str) -> bool:
    """Whether a single file or folder name found on disk may be listed or indexed as memory.

    A name not in Unicode NFC is not: every path is normalized to NFC before it is used, so such
    a file could be listed but never read back (write it again under its NFC name)."""
    if not name.isascii():  # ASCII is always NFC
        import unicodedata

        if unicodedata.normalize("NFC", name) != name:
            return False
    try:
        _check_component(name, name)
    except PathRefused:
        return False
    return True


def _check_component(part: str, shown: str) -> None:
    bad = _bad_character(part)
    if bad is not None:
        raise PathRefused(shown, "characters", f"it holds the invisible or control character {bad}")
    key = forbidden_key(part)
    if part.startswith(".") or key.startswith(".") or key == "git~1":
        raise PathRefused(shown, "hidden", f"{part!r} is a hidden name (.git, .gitignore, temporary files): "
                                           "not memory")
    if part != part.strip():
        raise PathRefused(shown, "characters", f"{part!r} starts or ends with a space")
    if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise PathRefused(shown, "too_long", f"a name in it is longer than {MAX_NAME_BYTES} bytes")


def normalize_memory_path(rel: object, *, folder: bool = False) -> tuple[str, ...]:
    """The components of ``rel`` after normalization, or PathEscape / PathRefused. Pure: no disk access.

    Unless ``folder``, a path that ends like a folder (``notes/``, ``x.md/.``) is refused."""
    if not isinstance(rel, str) or not rel.strip():
        raise PathRefused(str(rel) if isinstance(rel, str) else repr(rel), "empty", "a memory path is required")
    if rel.isascii():  # ASCII is always NFC: the usual path, without importing unicodedata
        text = rel
    else:
        import unicodedata

        text = unicodedata.normalize("NFC", rel)
    if "\\" in text or "\x00" in text:
        raise PathEscape(rel)
    if text.startswith(("/", "~")):
        raise PathEscape(rel)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise PathRefused(rel, "too_long", f"the path is longer than {MAX_PATH_BYTES} bytes")
    if not folder and text.rstrip().rsplit("/", 1)[-1] in ("", ".", ".."):
        raise PathRefused(rel, "folder", "it ends with '/' (or '.', '..'): a folder path, not a memory file")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise PathEscape(rel)
            parts.pop()
            continue
        _check_component(part, rel)
        parts.append(part)
    if not parts:
        raise PathRefused(rel, "folder", "it names the brain folder itself, not a memory file")
    if forbidden_key(parts[0]) in _NEVER_TOP:
        what = "logs and databases" if forbidden_key(parts[0]) == "runtime" else "machine settings and credentials"
        raise PathRefused(rel, "forbidden", f"{parts[0]} holds {what}, not memory")
    return tuple(parts)


def check_memory_path(rel: object, *, write: bool = False, areas: WriteAreas | None = None) -> str:
    """Normalize ``rel`` and decide on the normalized form; return it (POSIX, relative). Pure.

    ``write`` applies the write rule: only ``.md`` names (and the area's extra suffixes),
    and with ``areas`` only its top-level files and folders."""
    parts = normalize_memory_path(rel)
    norm = "/".join(parts)
    if not write:
        return norm
    if forbidden_key(parts[0]) in _NEVER_WRITE_TOP:
        raise PathRefused(rel, "forbidden", f"{parts[0]} is not written through the memory API: edit it by hand")
    if areas is not None:
        top = parts[0]
        if len(parts) == 1 and top not in areas.files:
            raise PathRefused(rel, "not_memory", "top-level memory files are " + ", ".join(sorted(areas.files))
                              + "; other files go in a folder such as notes/")
        if len(parts) > 1 and top not in areas.folders:
            raise PathRefused(rel, "not_memory", f"{top}/ is not a memory folder; memory folders are "
                              + ", ".join(f"{f}/" for f in sorted(areas.folders)))
        suffixes = areas.suffixes_for(top) if len(parts) > 1 else (".md",)
    else:
        suffixes = (".md",)
    if not parts[-1].endswith(suffixes) or parts[-1] in suffixes:
        raise PathRefused(rel, "not_memory", "memory files are " + " or ".join(suffixes) + " files")
    return norm


def _lstat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def confine(root: Path, rel: object, *, write: bool = False, areas: WriteAreas | None = None,
            must_exist: bool = False, folder: bool = False) -> str:
    """The whole rule: normalize ``rel``, check every component of it under ``root`` on disk
    (no symlink anywhere, parents are folders, the target is not a folder), then apply the
    write rule; return the normalized path.

    ``root`` is trusted (it was resolved when the store was opened). The write itself is
    done by ``files.write_confined``, which walks the same components with O_NOFOLLOW, so a
    symlink swapped in after this check is refused too."""
    parts = normalize_memory_path(rel, folder=folder)
    norm = "/".join(parts)
    current = root
    for index, part in enumerate(parts):
        current = current / part
        info = _lstat_or_none(current)
        if info is None:
            if must_exist:
                raise NotFound(f"memory file {norm}", hint="`brain read` takes a path relative to .brain/, "
                                                           "e.g. now.md or notes/x.md")
            break
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(rel, "symlink", f"{'/'.join(parts[:index + 1])} is a symbolic link: memory files "
                                              "are regular files, links are never followed")
        last = index == len(parts) - 1
        if folder and last:
            if not stat.S_ISDIR(info.st_mode):
                raise PathRefused(rel, "folder", f"{norm} is a file, not a folder")
            break
        if not last and not stat.S_ISDIR(info.st_mode):
            raise PathRefused(rel, "folder", f"{'/'.join(parts[:index + 1])} is a file, not a folder")
        if last and stat.S_ISDIR(info.st_mode):
            raise PathRefused(rel, "folder", f"{norm} is a folder, not a memory file")
        if last and not stat.S_ISREG(info.st_mode):
            raise PathRefused(rel, "special", f"{norm} is not a regular file")
    return check_memory_path(norm, write=write, areas=areas) if write else norm


def has_link_between(base: Path, path: Path) -> bool:
    """Whether ``path`` (lexically under ``base``) has a symbolic link on the way from ``base``,
    itself included, or is not under ``base`` at all. For folders named in settings (the
    decisions folder): they are compared lexically, never resolved through a link."""
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        return True
    current = base
    for part in parts:
        current = current / part
        if current.is_symlink():
            return True
    return False
