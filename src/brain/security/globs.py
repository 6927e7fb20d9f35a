"""Path globs matched in linear time: territories, module globs, anything a repository or an agent writes.

A glob turned into a backtracking regex costs time exponential in its stars:
``notes/*a*a*a*a*a*a*a*a*z`` from a versioned ``brain.yml`` made a 61-character write take over
a minute. Here a glob is compiled to tokens and run as a set of states (a bit set, one bit per
token) over the path, one step per character: time O(len(path) × len(glob)/64) whatever the
pattern, with no backtracking at all. Same syntax as before:

- ``**/`` any number of whole folders (none included), ``**`` anything, ``/`` too;
- ``*`` any run of characters within one segment, ``?`` one character within one segment;
- ``[abc]``, ``[a-z]``, ``[!a]`` / ``[^a]`` one character of (not of) the set; a ``[`` without
  its ``]`` is a literal (``classes=False`` makes every ``[`` literal, as module globs always had);
- a pattern without glob characters names that path and everything below it.

``fold`` compares in the form the memory path rule compares names (``forbidden_key``: Unicode
NFKC, case-folded, trailing dots and spaces dropped), so ``notes/LEAD/x.md`` is inside
``notes/lead/**`` as it is on a case-insensitive file system.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Glob", "compile_glob", "glob_matches", "MAX_GLOB_CHARS", "fold_path"]

MAX_GLOB_CHARS = 512  # a glob longer than this is refused where settings are read

_LIT, _ONE, _SET, _STAR, _DSTAR, _FOLDERS, _IN_FOLDERS = range(7)


def fold_path(path: str) -> str:
    """``path`` in the comparison form of the path rule, segment by segment."""
    from ..memory.paths import forbidden_key

    return "/".join(forbidden_key(part) for part in path.split("/"))


def _fold_literal(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", text).casefold()


def _parse_set(pattern: str, i: int) -> tuple[tuple, int] | None:
    """``[...]`` at ``i``: ((ranges, negated), index after it), or None when it has no closing bracket.

    As in POSIX globs (and claims, coord/overlap.py), a ``]`` right after ``[`` or ``[!`` is a member."""
    start = i + 1
    negated = pattern[start:start + 1] in ("!", "^")
    if negated:
        start += 1
    end = pattern.find("]", start + 1 if pattern[start:start + 1] == "]" else start)
    if end < 0:
        return None
    body = pattern[start:end]
    ranges, k = [], 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            if body[k] <= body[k + 2]:  # a reversed range holds nothing
                ranges.append((body[k], body[k + 2]))
            k += 3
        else:
            ranges.append((body[k], body[k]))
            k += 1
    return (tuple(ranges), negated), end + 1


def _tokens(pattern: str, classes: bool) -> list[tuple]:
    out: list[tuple] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append((_FOLDERS, None))     # (?:.*/)? : nothing, or anything that ends with '/':
            out.append((_IN_FOLDERS, None))  # entry state, then the state inside the folders
            i += 3
        elif pattern.startswith("**", i):
            out.append((_DSTAR, None))
            i += 2
        elif ch == "*":
            if not out or out[-1] != (_STAR, None):
                out.append((_STAR, None))
            i += 1
        elif ch == "?":
            out.append((_ONE, None))
            i += 1
        elif ch == "[" and classes and (parsed := _parse_set(pattern, i)) is not None:
            out.append((_SET, parsed[0]))
            i = parsed[1]
        else:
            out.append((_LIT, ch))
            i += 1
    return out


def _accepts(token: tuple, ch: str) -> bool:
    kind, arg = token
    if kind == _LIT:
        return arg == ch
    if kind == _ONE:
        return ch != "/"
    if kind == _SET:
        ranges, negated = arg
        return any(lo <= ch <= hi for lo, hi in ranges) != negated
    return False


@dataclass
class Glob:
    """A compiled glob; ``matches(path)`` runs in time linear in the path."""

    pattern: str
    literal: str | None            # the whole pattern when it has no glob character
    tokens: list[tuple] = field(default_factory=list)
    fold: bool = False
    below: bool = True             # a literal pattern covers what is below it too
    _masks: dict[str, tuple[int, int, int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.final = 1 << len(self.tokens)
        self.eps1 = self.eps2 = 0
        for j, (kind, _) in enumerate(self.tokens):
            if kind in (_STAR, _DSTAR):
                self.eps1 |= 1 << j        # a star may match nothing
            elif kind == _FOLDERS:
                self.eps2 |= 1 << j        # `**/` may match nothing (past its inner state)
        self.start = self._closure(1)
        stars = sum(1 for kind, _ in self.tokens if kind in (_STAR, _DSTAR, _FOLDERS))
        # one star cannot backtrack more than once per position: the regex engine is linear there and
        # much faster than stepping the bit set in Python (the common `src/*`, `notes/**`)
        self.regex = _as_regex(self.tokens) if stars <= 1 else None

    def _closure(self, states: int) -> int:
        while True:
            grown = states | ((states & self.eps1) << 1) | ((states & self.eps2) << 2)
            if grown == states:
                return states
            states = grown

    def _mask(self, ch: str) -> tuple[int, int, int]:
        """(states that move one on ``ch``, states that move two, states that stay): once per character."""
        masks = self._masks.get(ch)
        if masks is None:
            step = jump = stay = 0
            for j, token in enumerate(self.tokens):
                kind = token[0]
                if kind == _DSTAR or (kind == _STAR and ch != "/") or kind == _IN_FOLDERS:
                    stay |= 1 << j
                    if kind == _IN_FOLDERS and ch == "/":
                        step |= 1 << j      # a '/' may end the folders
                elif kind == _FOLDERS:
                    step |= 1 << j          # into the folders
                    if ch == "/":
                        jump |= 1 << j      # an empty folder name then '/': past them at once
                elif _accepts(token, ch):
                    step |= 1 << j
            if len(self._masks) > 4096:
                self._masks.clear()
            masks = self._masks[ch] = (step, jump, stay)
        return masks

    def matches(self, path: str) -> bool:
        path = path.strip("/")
        if self.fold:
            path = fold_path(path)
        if self.literal is not None:
            return path == self.literal or (self.below and path.startswith(self.literal + "/"))
        if self.regex is not None:
            return self.regex.match(path) is not None
        states = self.start
        for ch in path:
            step, jump, stay = self._mask(ch)
            states = self._closure(((states & step) << 1) | ((states & jump) << 2) | (states & stay))
            if not states:
                return False
        return bool(states & self.final)

    match = matches  # read like a compiled regex's: `glob_regex(area).match(path)`


def _as_regex(tokens: list[tuple]):
    """The regex of a glob with at most one star (callers check): same meaning as the bit set."""
    import re

    out = []
    for kind, arg in tokens:
        if kind == _LIT:
            out.append(re.escape(arg))
        elif kind == _ONE:
            out.append("[^/]")
        elif kind == _SET:
            ranges, negated = arg
            if not ranges:
                out.append("." if negated else "(?!)")
                continue
            body = "".join(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in ranges)
            out.append(f"[{'^' if negated else ''}{body}]")
        elif kind == _STAR:
            out.append("[^/]*")
        elif kind == _DSTAR:
            out.append(".*")
        elif kind == _FOLDERS:
            out.append("(?:.*/)?")
    return re.compile("".join(out) + r"\Z", re.S)


@lru_cache(maxsize=2048)
def compile_glob(pattern: str, *, classes: bool = True, fold: bool = False, below: bool = True) -> Glob:
    """Compile ``pattern`` (see the module docstring). Cached: settings compile the same few globs.

    ``below=False``: a pattern without glob characters names that one path only (module globs)."""
    pattern = pattern.strip().strip("/")
    if fold:  # the comparison form, segment by segment; a segment with glob characters keeps its trailing dots
        from ..memory.paths import forbidden_key

        pattern = "/".join(_fold_literal(seg) if any(ch in seg for ch in "*?[") else forbidden_key(seg)
                           for seg in pattern.split("/"))
    if not any(ch in pattern for ch in "*?["):
        return Glob(pattern, pattern, [], fold, below)
    return Glob(pattern, None, _tokens(pattern, classes), fold)


def glob_matches(pattern: str, path: str, *, classes: bool = True, fold: bool = False, below: bool = True) -> bool:
    """Whether ``pattern`` covers ``path`` (one call: ``compile_glob`` keeps the compiled glob)."""
    return compile_glob(pattern, classes=classes, fold=fold, below=below).matches(path)
