"""Unresolved git merges in memory files: the regions between conflict markers.

`now.md`, `focus.md` and notes are overwritten whole by whoever writes them; two worktrees or two
clones that both wrote `now.md` merge with a conflict, and git leaves both sides in the file
between markers. Committed like that, the next boot hands an agent two contradicting "current
steps" without a word. The boot and `brain doctor` name such a file and its lines, so a person or
an agent keeps what is true and writes it back. One pass over the lines (linear, no regex).
"""

from __future__ import annotations

__all__ = ["conflict_regions", "describe_regions"]

_OPEN, _BASE, _SPLIT, _CLOSE = "<<<<<<<", "|||||||", "=======", ">>>>>>>"


def _is_mark(line: str, mark: str, *, bare: bool) -> bool:
    """``mark`` alone on the line (``bare``), or followed by a space and a label (a branch, a commit)."""
    if not line.startswith(mark):
        return False
    rest = line[len(mark):].rstrip("\r")
    return rest == "" if bare else rest == "" or rest.startswith(" ")


def conflict_regions(text: str) -> list[tuple[int, int]]:
    """(first line, last line), 1-based, of every complete conflict: an opening marker, an optional base
    section (diff3), the separator, the closing marker, in that order. Incomplete ones are not regions."""
    if _OPEN not in text:
        return []
    regions: list[tuple[int, int]] = []
    start = split = None
    for number, line in enumerate(text.split("\n"), 1):
        if _is_mark(line, _OPEN, bare=False):
            start, split = number, None
        elif start is not None and split is None and _is_mark(line, _SPLIT, bare=True):
            split = number
        elif start is not None and split is None and _is_mark(line, _BASE, bare=False):
            continue
        elif start is not None and split is not None and _is_mark(line, _CLOSE, bare=False):
            regions.append((start, number))
            start = split = None
    return regions


def describe_regions(regions: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a}-{b}" for a, b in regions)
