"""Overlapping claims for the claims board, fast enough for thousands of live claims.

The coordinator's ``overlaps()`` compares every pair of live claims. The board asks
for the same answer every few seconds with thousands of claims, so here the pairs are
first narrowed by a necessary condition and only the survivors go through the
coordinator's exact test (``normalized_overlap``), so the result is the same set:

two path claims can only overlap when the literal leading segments of one (the
segments before the first glob) are a prefix of the other's, because a concrete path
covered by a claim starts with exactly those segments. Named items only meet their
own name. A property test checks this against ``Coordinator.overlaps``.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from itertools import combinations

from ..coord.model import ClaimInfo, OverlapReport
from ..coord.overlap import NAME_PREFIX, normalized_overlap

__all__ = ["literal_key", "overlapping_pairs", "board_overlaps"]

_GLOB = frozenset("*?[")


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


def overlapping_pairs(claims: list[ClaimInfo]) -> list[tuple[ClaimInfo, ClaimInfo]]:
    """Pairs (a, b) of claims of different sessions that overlap, a before b in id order."""
    by_key: dict[tuple, list[ClaimInfo]] = defaultdict(list)
    for c in claims:
        by_key[literal_key(c.item)].append(c)
    pairs = []

    def check(x: ClaimInfo, y: ClaimInfo) -> None:
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


def board_overlaps(brain, claims: list[ClaimInfo] | None = None) -> list[OverlapReport]:
    """``brain.coord.overlaps()`` computed with the narrowing above (held claims, recorded decisions).

    ``claims``: the held claims when the caller already read them (``coord.claims()``)."""
    coord = brain.coord
    now = coord.clock()
    live = [c for c in (coord.claims() if claims is None else claims) if c.expires > now]
    with coord.backend.transaction(write=False) as tx:
        decided = {(a, b): (d, by) for a, b, d, by in tx.execute(
            "SELECT claim_a, claim_b, decision, decided_by FROM overlap_decisions ORDER BY id")}
    by_id = {c.claim: c for c in live}
    reports = []
    for a, b in _pairs_of(live):
        decision, by = decided.get((a, b), (None, None))
        reports.append(OverlapReport(by_id[a], by_id[b], decision, by))
    return reports


_last: tuple[tuple, list[tuple[int, int]]] = ((), [])


def _pairs_of(live: list[ClaimInfo]) -> list[tuple[int, int]]:
    """Overlapping claim-id pairs, reused while the same claims are held (a claim's item and session
    never change, so the pairs depend only on which claims are held): the board polls every few seconds."""
    global _last
    key = tuple((c.claim, c.session, c.item) for c in live)
    cached_key, cached = _last
    if key != cached_key:
        cached = [(a.claim, b.claim) for a, b in overlapping_pairs(live)]
        _last = (key, cached)
    return cached
