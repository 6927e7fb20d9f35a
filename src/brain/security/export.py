"""The export guard: a template carries the kernel alone, never an instance or personal value.

Two ways a value leaks into an exported kernel, both closed here:

- a symlink in the kernel pointing into another layer (layers are often shared "via
  symlinks"): ``outside_links`` names them so the copy skips them;
- a value copied into a kernel file or a kernel file name by hand: ``find_leak`` looks
  in every exported file name and in every byte of every exported file (read in
  chunks, no size cut-off) for the values of the instance and personal layers.

What counts as a value of a layer (``layer_values``): the user-level home path; every
line of a layer file of ``MIN_LINE`` (24) characters or more; and every word of a
layer file or of a layer file's name of ``MIN_VALUE`` (6) characters or more that is
not a plain word of letters (``hunter2x``, ``/srv/app``, ``db.internal``, a key, a
project path: yes; ``progress``, ``carefully``: no — plain words are shared by every
text and would refuse every export), except the value given to a secret-named key
(``password: correcthorse``), which counts even when it is a plain word. Six characters is the floor: shorter strings
occur by chance in any template, longer secrets are caught whole or by their words.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..trees import walk as walk_tree

__all__ = ["outside_links", "layer_values", "find_leak", "MIN_LINE", "MIN_VALUE"]

MIN_LINE = 24
MIN_VALUE = 6
_CHUNK = 1024 * 1024  # bytes read at a time; consecutive chunks overlap by the longest value
_EDGES = "\"'`()[]{}<>,;:.!?*#|="  # stripped from both ends of a word (markdown and code punctuation)
_PLAIN = re.compile(r"[^\W\d_]++(?:[-'][^\W\d_]++)*+")  # letters, maybe joined by - or '


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


_ASSIGNED = None


def _words(text: str):
    """The words of ``text`` that count as values (see the module docstring)."""
    global _ASSIGNED
    for raw in text.split():
        word = raw.strip(_EDGES)
        if len(word) >= MIN_VALUE and not _PLAIN.fullmatch(word):
            yield word
    if "=" in text or ":" in text:
        if _ASSIGNED is None:  # the redactor's own key shape: `password: correcthorse` holds a value, plain or not
            from .redact import _KEY, _SEPARATOR

            _ASSIGNED = re.compile(_KEY + _SEPARATOR + r"[\"']?+(?P<value>[^\s\"'`]++)")
        for match in _ASSIGNED.finditer(text):
            value = match.group("value").strip(_EDGES)
            if len(value) >= MIN_VALUE:
                yield value


def layer_values(home: Path) -> list[tuple[str, str]]:
    """(value, layer) pairs that must never appear in an exported kernel, longest first."""
    found: dict[str, str] = {str(Path(home).resolve()): "instance"}
    found.setdefault(str(Path(home)), "instance")

    def add(value: str, layer: str) -> None:
        found.setdefault(value, layer)

    for layer in ("instance", "personal"):
        base = Path(home) / layer
        if not base.is_dir():
            continue
        for folder, dirs, files in walk_tree(base):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in dirs + files:  # a name's stem (``client-acme-2027``), not its extension
                for word in _words(Path(name).stem):
                    add(word, layer)
            for name in files:
                try:
                    with open(Path(folder) / name, "rb") as handle:
                        for raw in handle:  # whole files, line by line: no size cut-off
                            line = raw.decode("utf-8", "ignore").strip()
                            if len(line) >= MIN_LINE:
                                add(line, layer)
                            for word in _words(line):
                                add(word, layer)
                except OSError:
                    continue
    return sorted(found.items(), key=lambda item: (-len(item[0]), item[0]))


class _Needles:
    """The values as bytes, indexed by their first ``MIN_VALUE`` bytes (every value is at least that long).

    Many values (a big layer has one per line) against files of any size: comparing each
    value with each file is values x bytes; here each chunk's distinct ``MIN_VALUE``-grams
    are met with the index once, and only the grams found lead to a comparison."""

    def __init__(self, values: list[tuple[str, str]]) -> None:
        self.index: dict[bytes, list[tuple[bytes, str]]] = {}
        longest = MIN_VALUE
        for value, layer in values:
            data = value.encode("utf-8")
            if len(data) < MIN_VALUE:
                continue
            self.index.setdefault(data[:MIN_VALUE], []).append((data, layer))
            longest = max(longest, len(data))
        self.overlap = longest - 1  # bytes carried from one chunk to the next

    def first_in(self, window: bytes, limit: int) -> str | None:
        """The layer of a value starting before ``limit`` in ``window``, or None."""
        n = MIN_VALUE
        grams = {window[i:i + n] for i in range(min(limit, len(window) - n + 1))}
        for gram in grams & self.index.keys():
            at = window.find(gram)
            while at != -1 and at < limit:
                for data, layer in self.index[gram]:
                    if window.startswith(data, at):
                        return layer
                at = window.find(gram, at + 1)
        return None


def _file_carries(path: Path, needles: _Needles) -> str | None:
    """The layer of the first value found in the file's bytes, read in chunks (no size cut-off)."""
    buffer = b""
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            buffer += chunk
            # a value starting before ``limit`` lies whole in the buffer; the rest waits for the next chunk
            limit = len(buffer) if not chunk else len(buffer) - needles.overlap
            if limit > 0:
                layer = needles.first_in(buffer, limit)
                if layer is not None:
                    return layer
                buffer = buffer[limit:]
            if not chunk:
                return None


def find_leak(root: Path, values: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(relative file, layer) of the first exported file whose name or content carries one of ``values``, or None.

    The value itself is never returned: the caller names the file, not the secret."""
    root = Path(root)
    needles = _Needles(values)
    for path in sorted(Path(folder, name) for folder, dirs, files in walk_tree(root) for name in dirs + files):
        rel = path.relative_to(root).as_posix()
        for value, layer in values:
            if value and value in rel:
                return rel, layer
        if not path.is_file():
            continue
        try:
            layer = _file_carries(path, needles)
        except OSError:
            continue
        if layer is not None:
            return rel, layer
    return None
