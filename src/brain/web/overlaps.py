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

from ..coord.model import ClaimInfo, OverlapReport
from ..coord.overlap import NAME_PREFIX, normalized_overlap

__all__ = ["literal_key", "overlapping_pairs", "board_overlaps"]

_GLOB = frozenset("*?[")


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
    seen: set[tuple[int, int]] = set()
    pairs = []
    for key, group in by_key.items():
        named = key[:1] == ("\0name",)
        ancestors = [key] if named else [key[:i] for i in range(len(key) + 1)]
        for anc in ancestors:
            others = by_key.get(anc)
            if not others:
                continue
            for x in group:
                for y in others:
                    if x.session == y.session or x.claim == y.claim:
                        continue
                    a, b = (x, y) if x.claim < y.claim else (y, x)
                    if (a.claim, b.claim) in seen:
                        continue
                    seen.add((a.claim, b.claim))
                    if normalized_overlap(a.item, b.item):
                        pairs.append((a, b))
    pairs.sort(key=lambda p: (p[0].claim, p[1].claim))
    return pairs


def board_overlaps(brain) -> list[OverlapReport]:
    """``brain.coord.overlaps()`` computed with the narrowing above (held claims, recorded decisions)."""
    coord = brain.coord
    live = [c for c in coord.claims() if c.expires > coord.clock()]
    with coord.backend.transaction(write=False) as tx:
        decided = {(a, b): (d, by) for a, b, d, by in tx.execute(
            "SELECT claim_a, claim_b, decision, decided_by FROM overlap_decisions ORDER BY id")}
    reports = []
    for a, b in overlapping_pairs(live):
        decision, by = decided.get((a.claim, b.claim), (None, None))
        reports.append(OverlapReport(a, b, decision, by))
    return reports
