"""The export guard: a template carries the kernel alone, never an instance or personal value.

Two ways a value leaks into an exported kernel, both closed here:

- a symlink in the kernel pointing into another layer (layers are often shared "via
  symlinks"): ``outside_links`` names them so the copy skips them;
- a value copied into a kernel file by hand: ``find_leak`` looks in every exported
  text file for the user-level home path, the instance's project paths, and any
  substantial line (24+ characters) of an instance or personal file — the canaries.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["outside_links", "layer_values", "find_leak", "MIN_LINE"]

MIN_LINE = 24
_MAX_SCAN = 2 * 1024 * 1024  # bytes read per file (values sit in text files)


def outside_links(root: Path):
    """A ``shutil.copytree`` ignore callable: skips symlinks that resolve outside ``root``."""
    root = Path(root).resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            path = Path(folder) / name
            if path.is_symlink():
                target = path.resolve()
                if target != root and root not in target.parents:
                    skipped.add(name)
        return skipped

    return ignore


def layer_values(home: Path) -> list[tuple[str, str]]:
    """(value, layer) pairs that must never appear in an exported kernel."""
    values: list[tuple[str, str]] = [(str(Path(home).resolve()), "instance")]
    if str(Path(home)) != values[0][0]:
        values.append((str(Path(home)), "instance"))
    for layer in ("instance", "personal"):
        base = Path(home) / layer
        if not base.is_dir():
            continue
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                try:
                    text = (Path(folder) / name).read_bytes()[:_MAX_SCAN].decode("utf-8", "ignore")
                except OSError:
                    continue
                for line in text.splitlines():
                    line = line.strip()
                    if len(line) >= MIN_LINE:
                        values.append((line, layer))
    return values


def find_leak(root: Path, values: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(relative file, layer) of the first exported file carrying one of ``values``, or None."""
    root = Path(root)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            text = path.read_bytes()[:_MAX_SCAN].decode("utf-8", "ignore")
        except OSError:
            continue
        for value, layer in values:
            if value and value in text:
                return path.relative_to(root).as_posix(), layer
    return None
