"""Overlapping claims for the claims board, which asks every few seconds.

The pairs come from ``brain.coord.overlap.overlapping_pairs`` (the same narrowing
``Coordinator.overlaps`` uses) and are reused while the same claims are held.
"""

from __future__ import annotations

from ..coord.model import ClaimInfo, OverlapReport
from ..coord.overlap import literal_key, overlapping_pairs

__all__ = ["literal_key", "overlapping_pairs", "board_overlaps"]

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
