"""The development-set guard of fit_weights.py: fitted weights must not lose on the development sets.

Why: on 1,179 corpus tasks a fit passed the held-out gate (macro all@5 0.631 vs 0.616) and the ranking
tests, yet lost on the two development sets it was never fitted on (Django file Acc@1 0.711 -> 0.658):
a held-out corpus gain alone does not say a fit generalises to the repositories the product was built
on. The guard asks that, on Django (file Acc@1, Acc@5; bench_localization.py) and on the six-language set
(macro all@5, any@5, all@1; bench_multilang.py), the fitted weights are not worse than the hand-set ones.

The development sets stay out of the objective: the fitter never scores a move on them, it only vetoes
(fit_weights.py's back-off blames and freezes the moves whose revert gives back what a check lost, and
re-fits on the corpus). Decision 0042 records why that veto is not counted as tuning on them, and what
it costs: after a guarded fit their figures are no longer an unbiased estimate of a gain.

Input: the per-task evidence the two benchmarks dump (bench/.cache/evidence/localization.jsonl and
multilang.jsonl, `locbench.write_evidence`): re-ranking all 262 tasks under any weights is
`brain.search.ranking.combine`, a fraction of a second, no index read.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import corpus_score as cs
import locbench

__all__ = ["CHECKS", "DevTask", "load_sets", "scores", "guard", "blame", "hand_equals_boot"]

# the guard's checks; the prefix tells fit_weights.py's gate they are not pytest ids
CHECKS = ("dev:django acc@1", "dev:django acc@5", "dev:multilang all@5", "dev:multilang any@5", "dev:multilang all@1")
FILES = {"django": "localization.jsonl", "multilang": "multilang.jsonl"}


class DevTask:
    __slots__ = ("id", "repo", "lang", "gold", "evidence", "boot")

    def __init__(self, item: dict, evidence) -> None:
        self.id, self.lang, self.gold, self.boot = item["id"], item["lang"], item["gold"], item.get("boot", [])
        self.repo = item.get("repo", "")
        self.evidence = evidence


def load_sets(ranker, folder: Path = locbench.EVIDENCE) -> dict[str, list[DevTask]]:
    """Both development sets' tasks from their evidence dumps; a set whose dump is missing or empty is absent."""
    sets: dict[str, list[DevTask]] = {}
    for name, file in FILES.items():
        path = Path(folder) / file
        if not path.is_file():
            continue
        tasks = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                tasks.append(DevTask(item, ranker.evidence(item["evidence"])))
        if tasks:
            sets[name] = tasks
    return sets


def _ranks(ranker, tasks: list[DevTask], weights) -> dict[str, list[int | None]]:
    return {t.id: cs.gold_ranks(t.gold, ranker.rank(t.evidence, weights)) for t in tasks}


def scores(ranker, sets: dict[str, list[DevTask]], weights) -> dict:
    """Each set's figures and per-task hits under ``weights``: Django as bench_localization scores it (the
    first gold file's rank, Acc@1/5), the six languages as bench_multilang does (all@/any@5, macro over
    languages). ``hits[check][task id]`` is 1 when the task counts for that check."""
    out: dict = {"figures": {}, "hits": {}}
    if "django" in sets:
        ranks = _ranks(ranker, sets["django"], weights)
        n = len(ranks) or 1
        for k in (1, 5):
            hit = {tid: int(any(r is not None and r <= k for r in rs)) for tid, rs in ranks.items()}
            out["hits"][f"dev:django acc@{k}"] = hit
            out["figures"][f"django acc@{k}"] = sum(hit.values()) / n
    if "multilang" in sets:
        tasks = sets["multilang"]
        ranks = _ranks(ranker, tasks, weights)
        for check, fn in (("all@5", all), ("any@5", any), ("all@1", all)):
            hit = {tid: int(fn(r is not None and r <= int(check[-1]) for r in rs)) for tid, rs in ranks.items()}
            by_lang: dict[str, list[int]] = defaultdict(list)
            for t in tasks:
                by_lang[t.lang].append(hit[t.id])
            out["figures"][f"multilang {check}"] = sum(sum(v) / len(v) for v in by_lang.values()) / len(by_lang)
            out["figures"][f"multilang {check} per language"] = {lang: round(sum(v) / len(v), 4)
                                                                  for lang, v in sorted(by_lang.items())}
            if f"dev:multilang {check}" in CHECKS:
                out["hits"][f"dev:multilang {check}"] = hit
    return out


def guard(ranker, sets: dict[str, list[DevTask]], values: dict, checks=CHECKS, hand: dict | None = None
          ) -> tuple[bool, list[str], dict]:
    """(passed, the failed checks, report) for the hand-set weights with ``values`` changed, on ``checks``:
    a check fails when its figure is below the hand-set one (a macro by more than rounding). The report
    names each check's figures and the development tasks it lost and gained. A check whose set has no
    evidence fails: nothing is passed unchecked."""
    hand = hand or scores(ranker, sets, ranker.weights({}))
    got = scores(ranker, sets, ranker.weights(values))
    failed, report = [], {}
    for check in checks:
        if check not in hand["hits"]:
            failed.append(check)
            report[check] = {"error": "no evidence for this set: run its benchmark first"}
            continue
        figure = check[len("dev:"):]
        before, after = hand["figures"][figure], got["figures"][figure]
        lost = sorted(t for t, h in hand["hits"][check].items() if h and not got["hits"][check][t])
        won = sorted(t for t, h in got["hits"][check].items() if h and not hand["hits"][check][t])
        report[check] = {"hand": round(before, 4), "fitted": round(after, 4), "lost": lost, "gained": won}
        if after < before - 1e-9:
            failed.append(check)
    return not failed, failed, report


def _deficit(ranker, sets, values: dict, checks: list[str], hand: dict) -> float:
    """How far below the hand-set figures ``values`` leave ``checks`` (0 when none is below)."""
    got = scores(ranker, sets, ranker.weights(values))["figures"]
    return sum(max(0.0, hand["figures"][c[len("dev:"):]] - got[c[len("dev:"):]]) for c in checks)


def blame(ranker, sets: dict[str, list[DevTask]], changed: dict[str, list], failed: list[str],
          hand: dict | None = None) -> dict[str, list[str]]:
    """Which moves cost the ``failed`` checks. First as fit_weights.blame does: each move reverted alone,
    blamed for the checks its revert makes pass. For a check no single revert fixes (a loss spread over
    many moves, as Django's Acc@1 was), greedily: revert the move whose revert gives back the most of the
    remaining shortfall (name order on ties), and go on until the checks pass; each move reverted by then
    is blamed for them (if even reverting every move leaves a check short, no move is blamed for it). Why not revert in name order as the test blame does: a shortfall has a size here, and name
    order would freeze moves that cost nothing. Deterministic; empty when reverting every move fixes nothing.
    The development sets only choose which moves go back to their hand-set values, never a value."""
    hand = hand or scores(ranker, sets, ranker.weights({}))
    moves = {n: v[1] for n, v in changed.items()}
    blamed: dict[str, list[str]] = {}
    for name in sorted(moves):
        _, still, _ = guard(ranker, sets, {n: v for n, v in moves.items() if n != name}, failed, hand)
        fixed = [c for c in failed if c not in still]
        if fixed:
            blamed[name] = fixed
    # the checks no single revert fixes: greedy, from the moves left once the blamed ones are reverted
    rest = [c for c in failed if not any(c in checks for checks in blamed.values())]
    kept = {n: v for n, v in moves.items() if n not in blamed}
    if rest and _deficit(ranker, sets, kept, rest, hand) <= 1e-9:
        rest = []  # reverting the singly blamed already gave these back
    reverted: list[str] = []
    while rest and kept:
        gaps = {name: _deficit(ranker, sets, {n: v for n, v in kept.items() if n != name}, rest, hand)
                for name in sorted(kept)}
        name = min(sorted(gaps), key=lambda n: gaps[n])
        del kept[name]
        reverted.append(name)
        if gaps[name] <= 1e-9:
            for n in reverted:
                blamed[n] = blamed.get(n, []) + rest
            break
    return blamed


def hand_equals_boot(ranker, sets: dict[str, list[DevTask]]) -> dict[str, list[int]]:
    """Per set, [tasks whose hand-set combine ranks the gold files where the boot did, tasks]: the guard
    re-ranks the boot's own ranking only where these agree."""
    w = ranker.weights({})
    out = {}
    for name, tasks in sets.items():
        same = sum(cs.gold_ranks(t.gold, ranker.rank(t.evidence, w)) == cs.gold_ranks(t.gold, t.boot) for t in tasks)
        out[name] = [same, len(tasks)]
    return out
