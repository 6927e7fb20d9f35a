"""Spread the function ranking's lower places over the best files: each top file's best definition gets a place.

Why: read on Django's misses (decision 0069), a
task's first ten definitions often come from one or two files (a `QuerySet` named in the text fills them
with its methods) while the fix sits in the 2nd–5th file of the file ranking, where it is that file's best
definition: its score is lower than a tenth method of the leading file only because its file's evidence is
weaker, not because it is a worse candidate inside its file. A reader who opens the top files reads each
one's best definition; the ranking's places after the first few give it the same chance.

The rule, applied to the final order: the first ``spread_keep`` places stay as scored; then, for each of the
``spread_files`` best files of the file ranking (in its order) that none of those places comes from, its
best-scoring definition takes the next place, at most ``spread_slots`` of them; the rest follows in score
order. ``spread_slots`` 0 turns it off. The file ranking's order is read back from the evidence: each
definition of a ranked file carries the file prior (``file``, times its kind's factor), which falls with the
file's rank.
"""

from __future__ import annotations

__all__ = ["file_order", "spread_files"]


def file_order(evidence, F: dict) -> list[str]:
    """The files of the file ranking that lend a prior, best first (from the ``file`` evidence)."""
    factors = F["kind_factor"]
    prior: dict[str, float] = {}
    for def_id, found in evidence.defs.items():
        for feature, value, _, _ in found.reasons:
            if feature == "file" and value > 0:
                row = evidence.rows[def_id]
                p = value / (factors.get(row.kind, 1.0) or 1.0)
                if p > prior.get(row.path, 0.0):
                    prior[row.path] = p
    return sorted(prior, key=lambda path: (-prior[path], path))


def spread_files(order: list[int], score: dict[int, float], rows: dict, files: list[str], F: dict, key) -> list[int]:
    """``order`` (definition ids, best first) with the places after ``spread_keep`` opened to the best
    definition of each of the top ``spread_files`` files not yet represented (``key``: the ranking's sort key,
    which breaks ties between a file's definitions)."""
    keep, slots = int(F["spread_keep"]), int(F["spread_slots"])
    if slots <= 0 or len(order) <= keep:
        return order
    head = order[:keep]
    seen = {rows[i].path for i in head}
    wanted = [p for p in files[: int(F["spread_files"])] if p not in seen]
    if not wanted:
        return order
    wanted_set = set(wanted)
    best: dict[str, int] = {}
    for def_id in score:
        path = rows[def_id].path
        if path in wanted_set and (path not in best or key(def_id) < key(best[path])):
            best[path] = def_id
    picks = [best[p] for p in wanted if p in best][:slots]
    if not picks:
        return order
    taken = set(head) | set(picks)
    return (head + picks + [i for i in order[keep:] if i not in taken])[: len(order)]
