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
           "overlapping_pairs", "claim_prefix", "candidate_prefixes", "may_overlap", "UNKNOWN_PREFIX"]

NAME_PREFIX = "name:"


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
    """A segment glob as tokens: ('lit', c) | ('any',) | ('star',) | ('set', ranges, negated).

    A set keeps its ranges, never the characters they span: ``[ -\uffff]`` is one pair, not 65,000
    characters (an agent's claim chooses them; expanded, one comparison of two such claims took seconds)."""
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
                ranges: list[tuple[int, int]] = []
                k = 0
                while k < len(body):
                    if k + 2 < len(body) and body[k + 1] == "-":
                        if ord(body[k]) <= ord(body[k + 2]):
                            ranges.append((ord(body[k]), ord(body[k + 2])))
                        k += 3
                    else:
                        ranges.append((ord(body[k]), ord(body[k])))
                        k += 1
                out.append(("set", _merged(ranges), negated))
                i = j
        else:
            out.append(("lit", c))
        i += 1
    return tuple(out)


_MAX_CHAR = 0x10FFFF
_SLASH = ord("/")


def _merged(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The characters of a path segment (anything but '/') outside ``ranges``."""
    out, low = [], 0
    for lo, hi in _merged([*ranges, (_SLASH, _SLASH)]):
        if lo > low:
            out.append((low, lo - 1))
        low = hi + 1
    if low <= _MAX_CHAR:
        out.append((low, _MAX_CHAR))
    return tuple(out)


def _positive(token: tuple) -> tuple[tuple[int, int], ...]:
    """The characters a one-character token accepts, as ranges."""
    if token[0] == "lit":
        return ((ord(token[1]), ord(token[1])),)
    if token[0] == "any":
        return _complement(())
    return _complement(token[1]) if token[2] else token[1]


def _accepts(token: tuple, char: str) -> bool:
    kind = token[0]
    if kind == "lit":
        return token[1] == char
    if kind == "any":
        return True
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in token[1]) != token[2]


def _chars_meet(a: tuple, b: tuple) -> bool:
    """Whether some one character is accepted by both tokens: ranges intersected, linear in their number."""
    if a[0] == "lit":
        return _accepts(b, a[1])
    if b[0] == "lit":
        return _accepts(a, b[1])
    if a[0] == "any" or b[0] == "any":
        return True
    ra, rb = _positive(a), _positive(b)
    i = j = 0
    while i < len(ra) and j < len(rb):
        if ra[i][1] < rb[j][0]:
            i += 1
        elif rb[j][1] < ra[i][0]:
            j += 1
        else:
            return True
    return False


def _reaches_end(n: int, m: int, a_star, b_star, meet_at) -> bool:
    """Whether (n, m) is reachable from (0, 0) in the grid of the two-pattern intersection.

    Moves, as before: a star of ``a`` at i matches nothing (i+1) or absorbs b's token (j+1); the same
    for a star of ``b``; two one-item tokens that meet advance together. Iterative (two rows), so a
    400-character claim neither recurses 800 deep nor builds a memo of every pair."""
    row = bytearray(m + 1)
    row[0] = 1
    for i in range(n + 1):
        nxt = bytearray(m + 1)
        for j in range(m + 1):
            if not row[j]:
                continue
            if i == n and j == m:
                return True
            if i < n and a_star(i):
                nxt[j] = 1
                if j < m:
                    row[j + 1] = 1
            elif j < m and b_star(j):
                row[j + 1] = 1
                if i < n:
                    nxt[j] = 1
            elif i < n and j < m and meet_at(i, j):
                nxt[j + 1] = 1
        row = nxt
    return False


@lru_cache(maxsize=4096)
def segments_meet(a: str, b: str) -> bool:
    """True when some single path segment matches both segment globs."""
    ta, tb = _tokens(a), _tokens(b)
    return _reaches_end(len(ta), len(tb), lambda i: ta[i] == ("star",), lambda j: tb[j] == ("star",),
                        lambda i, j: _chars_meet(ta[i], tb[j]))


def _paths_meet(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return _reaches_end(len(a), len(b), lambda i: a[i] == "**", lambda j: b[j] == "**",
                        lambda i, j: segments_meet(a[i], b[j]))


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


# -- the key stored with each claim (column claims.prefix), so the database finds the candidates --------------
UNKNOWN_PREFIX = ""  # the column's default: a row written without one (an older brain) is a candidate for every claim


def claim_prefix(item: str) -> str:
    """The indexed key of a claim on the normalised ``item``: its literal leading segments (``literal_key``)
    each followed by ``/`` after a leading ``/`` (``src/auth/*.py`` -> ``/src/auth/``, ``*.py`` -> ``/``);
    a named item keeps its whole text.

    Why this shape: two path claims can only overlap when one's literal segments are a prefix of the
    other's (see ``overlapping_pairs``), and with every segment closed by ``/`` that is a plain string
    prefix: ancestors are found by equality and descendants by one range of the index."""
    if item.startswith(NAME_PREFIX):
        return item
    return "/" + "".join(segment + "/" for segment in literal_key(item))


def candidate_prefixes(item: str) -> tuple[tuple[str, ...], str, str]:
    """``(equal, low, high)``: a held claim can overlap ``item`` only when its stored prefix is one of
    ``equal`` (the ancestors of ``item``'s prefix, itself included, and ``UNKNOWN_PREFIX``) or lies strictly
    between ``low`` and ``high`` (its descendants: the longer strings starting with the prefix, which ends
    in ``/``; ``0`` is the character after ``/``). Exact in code-point order, which is SQLite's BINARY
    collation and PostgreSQL's "C" (the column's collation on both); the two sets never share a row. A
    named item: its own text only (an empty range)."""
    prefix = claim_prefix(item)
    if item.startswith(NAME_PREFIX):
        return (prefix, UNKNOWN_PREFIX), prefix, prefix
    ancestors = tuple(prefix[:i + 1] for i, char in enumerate(prefix) if char == "/")
    return (*ancestors, UNKNOWN_PREFIX), prefix, prefix[:-1] + "0"


def may_overlap(stored_prefix: str, item: str) -> bool:
    """The database's candidate test (``Coordinator._overlapping``) in Python, for the property tests: a
    necessary condition of ``normalized_overlap(claimed, item)`` for the claim stored with ``stored_prefix``."""
    equal, low, high = candidate_prefixes(item)
    return stored_prefix in equal or low < stored_prefix < high


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
