"""Glob-aware overlap of claimed items — pure functions, no I/O.

A claim on a path covers the path and everything below it (claiming ``src/auth``
claims ``src/auth/login.py``), and a claimed path may be a glob (``*``, ``?``,
``[...]`` within one segment, ``**`` across segments). Two path claims overlap when
some concrete path is covered by both. Named items (``name:release-1.2``) overlap
only the same name. The test is exact for these patterns: it decides whether the
intersection of the two languages is empty, so it never misses an overlap.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from itertools import combinations

__all__ = ["normalize_item", "relative_to_root", "item_kind", "items_overlap", "normalized_overlap", "NAME_PREFIX", "literal_key",
           "overlapping_pairs"]

NAME_PREFIX = "name:"
_ALPHABET = [chr(c) for c in range(32, 127) if chr(c) != "/"] + ["\u00e9", "\u4e2d"]


def item_kind(item: str) -> str:
    return "name" if item.startswith(NAME_PREFIX) else "path"


def normalize_item(item: str) -> str:
    """Canonical text of an item: ``./a//b/`` -> ``a/b``; names keep their text."""
    if item_kind(item) == "name":
        return NAME_PREFIX + item[len(NAME_PREFIX):].strip()
    parts = [p for p in item.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


def relative_to_root(item: str, root: str | None) -> str:
    """``item`` with an absolute path inside ``root`` (a working tree's folder) made relative to it.

    Claims name paths relative to the repository: `/home/a/wt-1/src/x.py` claimed in one worktree and
    `src/x.py` in another are one item. Anything else (a relative path, a glob, ``name:...``, an absolute
    path elsewhere) is returned as it came; the root itself is not rewritten (claiming it is not claiming
    everything by accident)."""
    if not root or not isinstance(item, str) or item_kind(item) == "name":
        return item
    text = item.strip().replace("\\", "/")
    base = root.replace("\\", "/").rstrip("/")
    if base and text.startswith(base + "/") and text[len(base) + 1:].strip("/"):
        return text[len(base) + 1:]
    return item


def _tokens(segment: str) -> tuple:
    """A segment glob as tokens: ('lit', c) | ('any',) | ('star',) | ('set', frozenset, negated)."""
    out: list = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            if not out or out[-1] != ("star",):
                out.append(("star",))
        elif c == "?":
            out.append(("any",))
        elif c == "[":
            j = i + 1
            negated = j < len(segment) and segment[j] in "!^"
            if negated:
                j += 1
            start = j
            if j < len(segment) and segment[j] == "]":
                j += 1
            while j < len(segment) and segment[j] != "]":
                j += 1
            if j >= len(segment):  # no closing bracket: a literal '['
                out.append(("lit", c))
            else:
                body = segment[start:j]
                chars: set[str] = set()
                k = 0
                while k < len(body):
                    if k + 2 < len(body) and body[k + 1] == "-":
                        chars.update(chr(x) for x in range(ord(body[k]), ord(body[k + 2]) + 1))
                        k += 3
                    else:
                        chars.add(body[k])
                        k += 1
                out.append(("set", frozenset(chars), negated))
                i = j
        else:
            out.append(("lit", c))
        i += 1
    return tuple(out)


def _accepts(token: tuple, char: str) -> bool:
    kind = token[0]
    if kind == "lit":
        return token[1] == char
    if kind == "any":
        return True
    return (char in token[1]) != token[2]


def _chars_meet(a: tuple, b: tuple) -> bool:
    if a[0] == "lit":
        return _accepts(b, a[1])
    if b[0] == "lit":
        return _accepts(a, b[1])
    if a[0] == "any" or b[0] == "any":
        return True
    candidates = set(a[1]) | set(b[1]) | set(_ALPHABET)
    return any(_accepts(a, c) and _accepts(b, c) for c in candidates)


@lru_cache(maxsize=4096)
def segments_meet(a: str, b: str) -> bool:
    """True when some single path segment matches both segment globs."""
    ta, tb = _tokens(a), _tokens(b)

    @lru_cache(maxsize=None)
    def meet(i: int, j: int) -> bool:
        if i == len(ta) and j == len(tb):
            return True
        if i < len(ta) and ta[i] == ("star",):  # empty, or it absorbs b's next token
            return meet(i + 1, j) or (j < len(tb) and meet(i, j + 1))
        if j < len(tb) and tb[j] == ("star",):
            return meet(i, j + 1) or (i < len(ta) and meet(i + 1, j))
        if i < len(ta) and j < len(tb):
            return _chars_meet(ta[i], tb[j]) and meet(i + 1, j + 1)
        return False

    return meet(0, 0)


def _paths_meet(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    @lru_cache(maxsize=None)
    def meet(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "**":
            return meet(i + 1, j) or (j < len(b) and meet(i, j + 1))
        if j < len(b) and b[j] == "**":
            return meet(i, j + 1) or (i < len(a) and meet(i + 1, j))
        if i < len(a) and j < len(b):
            return segments_meet(a[i], b[j]) and meet(i + 1, j + 1)
        return False

    return meet(0, 0)


_GLOB = frozenset("*?[")


def items_overlap(a: str, b: str) -> bool:
    """Whether claims on items ``a`` and ``b`` can touch the same thing (ancestors included)."""
    return normalized_overlap(normalize_item(a), normalize_item(b))


def normalized_overlap(a: str, b: str) -> bool:
    """``items_overlap`` for items already normalised (as stored): the hot path of every grant."""
    if not (_GLOB & set(a) or _GLOB & set(b)) and not a.startswith(NAME_PREFIX) and not b.startswith(NAME_PREFIX):
        return a == b or not a or not b or a.startswith(b + "/") or b.startswith(a + "/")
    return _glob_overlap(a, b)


@lru_cache(maxsize=65536)
def _glob_overlap(a: str, b: str) -> bool:
    if item_kind(a) != item_kind(b):
        return False
    if item_kind(a) == "name":
        return a == b
    # a claim covers the path and everything below it: compare `a/**` with `b/**`
    sa = tuple(a.split("/")) if a else ()
    sb = tuple(b.split("/")) if b else ()
    return _paths_meet(sa + ("**",), sb + ("**",))




@lru_cache(maxsize=65536)
def literal_key(item: str) -> tuple[str, ...]:
    """The exact leading segments of a normalized item (the whole name for a named item)."""
    if item.startswith(NAME_PREFIX):
        return ("\0name", item)
    key = []
    for segment in item.split("/") if item else ():
        if _GLOB & set(segment):
            break
        key.append(segment)
    return tuple(key)


def overlapping_pairs(claims: list) -> list[tuple]:
    """Pairs (a, b) of claims of different sessions that overlap, a before b in id order.

    Comparing every pair is quadratic (seconds at 2,000 claims), so pairs are first
    narrowed by a necessary condition and only the survivors take the exact test: two
    path claims can only overlap when the literal leading segments of one (those
    before the first glob) are a prefix of the other's, because a concrete path covered
    by a claim starts with exactly those segments. Named items only meet their own
    name. A property test checks this against the all-pairs comparison."""
    by_key: dict[tuple, list] = defaultdict(list)
    for c in claims:
        by_key[literal_key(c.item)].append(c)
    pairs = []

    def check(x, y) -> None:
        if x.session != y.session and x.claim != y.claim:
            a, b = (x, y) if x.claim < y.claim else (y, x)
            if normalized_overlap(a.item, b.item):
                pairs.append((a, b))

    for key, group in by_key.items():
        for x, y in combinations(group, 2):  # the same literal segments
            check(x, y)
        if key[:1] == ("\0name",):
            continue
        for i in range(len(key)):  # a strict ancestor's claims: each such pair is met once, from here
            for y in by_key.get(key[:i], ()):
                for x in group:
                    check(x, y)
    pairs.sort(key=lambda p: (p[0].claim, p[1].claim))
    return pairs
