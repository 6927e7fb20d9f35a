"""Fit the function ranking's weights on the corpus, cross-validated by repository (`fit_weights.py --functions`).

Input: the per-task function evidence the benchmarks dump beside their boots (`gather_functions`, unit
weights, the call graph it walked recorded): bench_corpus.py's `functions` entries in its evidence folder
(the corpus: the objective) and bench_functions.py's bench/.cache/evidence/functions.jsonl (Django: the
development-set guard only, never the objective). A ranking under any weights is
`brain.search.rank_functions.combine_functions(evidence, weights)`, with no index read.

The method mirrors fit_weights.py's for the files: coordinate ascent over a log-spaced grid per weight
(x0, x1/4, x1/2, x1/sqrt2, x1, xsqrt2, x2, x4 of its hand-set value), a few passes in a fixed order, a move
kept only when it gains at least one task's worth on the training tasks; the objective is the macro (mean
over languages) function all@5 (every gold definition among the first five), the macro MRR of the last
gold definition as tie-break. `--objective 5,1` adds the macro all@1 to it (the sum of both): a move
that puts more tasks in the top 5 by taking their best definitions off the top is then weighed against
that loss instead of taken for free. Only the `functions.weights` move (the `params` are the gathering's
thresholds: a graph recorded under them answers only their questions).

Cross-validation: the repositories are dealt into `--folds` folds (sorted by name, round robin); each fold
is ranked under weights fitted on the others. The keep rule (strict, as issue 23 asks): the fitted
weights are written to the package only with `--write`, and only when (1) on the held-out folds the macro
all@5 rises and at least `--keep-tasks` more tasks (net) have every gold definition in the top 5, and
(2) on Django, function Acc@1, Acc@5 and Acc@10 under the weights fitted on every fold are not worse
than under the hand-set ones (the guard). Whether a move is kept is decided on held-out repositories;
Django only vetoes.

    .venv/bin/python bench/fit_weights.py --functions --evidence DIR [--dev FILE] [--folds 5] [--passes 2]
        [--keep-tasks 3] [--only W,...] [--grid 0,0.5,2] [--objective 5,1] [--jobs 2]
        [--out bench/results/fit-functions.json] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locbench  # noqa: E402

__all__ = ["FnTask", "load_corpus", "load_dev", "rank_all", "ranks", "summary", "fit", "cross_validate", "keep_rule",
           "main"]

GRID = (0.0, 0.25, 0.5, 2 ** -0.5, 1.0, 2 ** 0.5, 2.0, 4.0)
TOP = 5
LIMIT = 20  # the definitions a boot lists in its JSON (search.boot_functions)


class FnTask:
    __slots__ = ("id", "repo", "lang", "gold", "evidence", "bm25", "features")

    def __init__(self, item: dict, gold: list[str], bm25: int | None = None) -> None:
        from brain.search.function_evidence import FunctionEvidence

        self.id, self.repo, self.lang, self.gold = item["id"], item["repo"], item.get("lang", ""), gold
        self.evidence = FunctionEvidence.from_json(item["functions"] if "functions" in item else item["evidence"])
        self.bm25 = bm25
        self.features = {f for d in self.evidence.defs.values() for f, _, _, _ in d.reasons}


def load_corpus(folder: Path, rows: dict[str, dict] | None = None) -> list[FnTask]:
    """The corpus tasks with function gold and evidence (bench_corpus.py's evidence folder)."""
    out = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item.get("fgold") and item.get("functions"):
                row = (rows or {}).get(item["id"], {})
                fbm25 = row.get("fbm25")
                out.append(FnTask(item, item["fgold"], max(fbm25) if fbm25 and None not in fbm25 else None))
    return out


def load_dev(path: Path) -> list[FnTask]:
    """Django's tasks (bench_functions.py's dump)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        out.append(FnTask(item, item["gold"]))
    return out


def rank_all(gold: list[str], ranked: list[str]) -> int | None:
    """The rank of the last gold definition (None when one is missing)."""
    where = [ranked.index(g) + 1 if g in ranked else None for g in gold]
    return None if None in where else max(where)


def ranks(tasks: list[FnTask], weights) -> dict[str, int | None]:
    from brain.search.rank_functions import combine_functions

    return {t.id: rank_all(t.gold, [h.key for h in combine_functions(t.evidence, weights, limit=LIMIT)]) for t in tasks}


def summary(tasks: list[FnTask], got: dict[str, int | None], ks=(1, 5, 10)) -> dict:
    """Per language and macro: all@k (pooled counts beside) and MRR of the last gold definition."""
    by: dict[str, list[FnTask]] = defaultdict(list)
    for t in tasks:
        by[t.lang].append(t)
    out: dict = {}
    for lang, group in sorted(by.items()):
        r = [got[t.id] for t in group]
        out[lang] = {"tasks": len(group), **{f"all@{k}": round(sum(x is not None and x <= k for x in r) / len(r), 3) for k in ks},
                     "hits@5": sum(x is not None and x <= TOP for x in r),
                     "mrr": round(sum(1 / x for x in r if x) / len(r), 4)}
    langs = [v for v in out.values()]
    out["macro"] = {"tasks": len(tasks), **{f"all@{k}": round(sum(v[f"all@{k}"] for v in langs) / len(langs), 3) for k in ks},
                    "hits@5": sum(v["hits@5"] for v in langs), "mrr": round(sum(v["mrr"] for v in langs) / len(langs), 4)}
    return out


OBJECTIVE = (TOP,)  # the k whose macro all@k are summed (then the macro MRR breaks ties)


def _objective(tasks: list[FnTask], got: dict, ks=OBJECTIVE) -> tuple[float, float]:
    s = summary(tasks, got, ks=tuple(sorted(set(ks) | {1, 5, 10})))["macro"]
    return round(sum(s[f"all@{k}"] for k in ks), 6), s["mrr"]


def fit(tasks: list[FnTask], start: dict[str, float], names: list[str], passes: int, shipped,
        grid=GRID, objective=OBJECTIVE) -> dict[str, float]:
    """Coordinate ascent (see the module doc); returns the fitted values of ``names``."""
    current = dict(start)
    weights = shipped.replace(functions=current)
    got = ranks(tasks, weights)
    best = _objective(tasks, got, objective)
    langs = defaultdict(int)
    for t in tasks:
        langs[t.lang] += 1
    step = 1.0 / max(langs.values()) / max(len(langs), 1)  # one task of the biggest language, in macro all@5
    for _ in range(passes):
        moved = False
        for name in names:
            base = start[name]
            touched = [t for t in tasks if name in t.features or name in _LIFTS]
            for factor in grid:
                value = base * factor
                if value == current[name]:
                    continue
                trial = dict(current, **{name: value})
                w = shipped.replace(functions=trial)
                part = ranks(touched, w)
                score = _objective(tasks, {**got, **part}, objective)
                if score[0] >= best[0] + step - 1e-9 or (abs(score[0] - best[0]) < 1e-9 and score[1] > best[1] + 1e-4):
                    current, best, got, moved = trial, score, {**got, **part}, True
        if not moved:
            break
    return {n: current[n] for n in names}


# weights whose effect does not show in a task's recorded features (the graph, the lifts): every task re-ranked
_LIFTS = frozenset({"call", "caller", "co", "self_caller", "base", "twin", "attr"})


_JOB: dict = {}


def _fit_job(k: int):
    """One fold's fit (k >= 0: on the other folds' repositories) or the final one (k < 0: on every fold)."""
    tasks, fold_of, names, passes, grid, objective = (_JOB[x] for x in ("tasks", "fold_of", "names", "passes", "grid",
                                                                        "objective"))
    from brain.search.weights import shipped_weights

    shipped = shipped_weights()
    start = {n: shipped.functions[n] for n in names}
    train = [t for t in tasks if k < 0 or fold_of[t.repo] != k]
    return k, fit(train, start, names, passes, shipped, grid, objective)


def cross_validate(tasks: list[FnTask], folds: int, names: list[str], passes: int, shipped, *, grid=GRID,
                   jobs: int = 1, objective=OBJECTIVE) -> tuple[dict, dict, list, dict]:
    """Each fold ranked under weights fitted on the others, and the final fit on all (in ``jobs`` processes)."""
    repos = sorted({t.repo for t in tasks}, key=str.lower)
    fold_of = {r: i % folds for i, r in enumerate(repos)}
    start = {n: shipped.functions[n] for n in names}
    _JOB.update(tasks=tasks, fold_of=fold_of, names=names, passes=passes, grid=grid, objective=objective)
    ks = [k for k in range(folds) if any(fold_of[t.repo] == k for t in tasks)] + [-1]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = dict(pool.map(_fit_job, ks))
    else:
        results = dict(map(_fit_job, ks))
    held: dict[str, int | None] = {}
    fitted_per_fold = []
    for k in ks[:-1]:
        values = results[k]
        fitted_per_fold.append({"fold": k, "repos": sorted(r for r, f in fold_of.items() if f == k),
                                "moved": {n: v for n, v in values.items() if v != start[n]}})
        held.update(ranks([t for t in tasks if fold_of[t.repo] == k], shipped.replace(functions=values)))
    return held, fold_of, fitted_per_fold, results[-1]


def keep_rule(moved: dict, gain: float, net: int, keep_tasks: int, dev_ok: bool | None) -> bool:
    """Kept only when a weight moved, the held-out macro all@5 rose by ``keep_tasks`` tasks or more (net),
    and Django's guard ran and passed."""
    return bool(moved) and gain > 0 and net >= keep_tasks and dev_ok is True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--functions", action="store_true", help=argparse.SUPPRESS)  # fit_weights.py's switch
    ap.add_argument("--evidence", type=Path, required=True, help="bench_corpus.py's evidence folder (its --trees/evidence)")
    ap.add_argument("--results", type=Path, help="bench_corpus.py's results, or its rows folder (for BM25 beside; optional)")
    ap.add_argument("--dev", type=Path, default=locbench.EVIDENCE / "functions.jsonl", help="Django's function evidence")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--only", help="comma-separated function weights to fit (default: all)")
    ap.add_argument("--keep-tasks", type=int, default=3)
    ap.add_argument("--grid", help="comma-separated factors of each hand-set value to try (default: the 8-point grid)")
    ap.add_argument("--objective", default="5", help="comma-separated k whose macro all@k the fit maximizes, summed "
                    "(default 5; 5,1 adds all@1)")
    ap.add_argument("--jobs", type=int, default=1, help="fits (one per fold, and the final) in parallel processes")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "fit-functions.json")
    ap.add_argument("--write", action="store_true", help="write the fitted weights to the package when the keep rule holds")
    args = ap.parse_args(argv)

    from brain.search.weights import shipped_weights

    shipped = shipped_weights()
    names = args.only.split(",") if args.only else [n for n in shipped.names("functions")
                                                    if isinstance(shipped.functions[n], (int, float))
                                                    and n in _weight_names(shipped)]
    rows = {}
    if args.results and args.results.is_file():
        rows = {r["id"]: r for r in json.loads(args.results.read_text()).get("rows", [])}
    elif args.results and args.results.is_dir():  # bench_corpus.py's per-repository rows (its --trees/rows)
        for path in sorted(args.results.glob("*.json")):
            rows.update({r["id"]: r for r in json.loads(path.read_text()).get("rows", [])})
    tasks = load_corpus(args.evidence, rows)
    if not tasks:
        raise SystemExit(f"fit_functions: no function evidence in {args.evidence}")
    cpu0, t0 = _cpu(), time.perf_counter()
    hand = ranks(tasks, shipped)
    grid = tuple(float(x) for x in args.grid.split(",")) if args.grid else GRID
    objective = tuple(int(k) for k in args.objective.split(","))
    if not objective or any(k not in (1, 5, 10) for k in objective):
        ap.error("--objective takes k among 1, 5, 10")
    held, fold_of, per_fold, final = cross_validate(tasks, args.folds, names, args.passes, shipped, grid=grid,
                                                    jobs=args.jobs, objective=objective)
    moved = {n: v for n, v in final.items() if v != shipped.functions[n]}
    h, f = summary(tasks, hand), summary(tasks, held)
    net = f["macro"]["hits@5"] - h["macro"]["hits@5"]
    gain = round(f["macro"]["all@5"] - h["macro"]["all@5"], 3)
    gain1 = round(f["macro"]["all@1"] - h["macro"]["all@1"], 3)
    dev = {}
    if args.dev.is_file():
        dev_tasks = load_dev(args.dev)
        dh, df = summary(dev_tasks, ranks(dev_tasks, shipped)), summary(dev_tasks, ranks(dev_tasks, shipped.replace(functions=final)))
        dev = {"hand": dh["macro"], "fitted": df["macro"],
               "ok": all(df["macro"][f"all@{k}"] >= dh["macro"][f"all@{k}"] for k in (1, 5, 10))}
    keep = keep_rule(moved, gain, net, args.keep_tasks, dev.get("ok"))
    bm25 = {}
    if rows:
        bm = {t.id: t.bm25 for t in tasks}
        bm25 = summary(tasks, bm)
    out = {"tasks": len(tasks), "repos": len(fold_of), "folds": args.folds, "names": names, "grid": grid,
           "passes": args.passes, "objective": objective, "hand": h, "held_out": f,
           "bm25_bodies": bm25, "per_fold": per_fold, "final": moved, "gain": gain, "gain_all@1": gain1, "net_tasks": net, "dev": dev,
           "keep": keep, "cpu": round(_cpu() - cpu0, 1), "wall": round(time.perf_counter() - t0, 1),
           "load": os.getloadavg()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(tasks)} corpus tasks with function gold, {len(fold_of)} repositories, {args.folds} folds")
    print("| language | tasks | hand all@1 | all@5 | all@10 | held-out fitted all@1 | all@5 | all@10 | BM25 all@5 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lang in h:
        b = bm25.get(lang, {}).get("all@5", "")
        print(f"| {lang} | {h[lang]['tasks']} | {h[lang]['all@1']} | {h[lang]['all@5']} | {h[lang]['all@10']} | "
              f"{f[lang]['all@1']} | {f[lang]['all@5']} | {f[lang]['all@10']} | {b} |")
    print(f"held-out gain macro all@5 {gain:+.3f} (all@1 {gain1:+.3f}), net tasks {net:+d}; final fit moves {moved}")
    if dev:
        print(f"Django guard: hand {dev['hand']}, fitted {dev['fitted']}: {'ok' if dev['ok'] else 'LOSES'}")
    print(f"keep rule: {'kept' if keep else 'not kept'}; cpu {out['cpu']} s")
    if keep and args.write:
        _write(moved)
        print("written to the package's weights file")
    return 0


def _weight_names(shipped) -> set[str]:
    from brain.search.weights import WEIGHTS_FILE

    data = json.loads(Path(WEIGHTS_FILE).read_text(encoding="utf-8"))
    return set(data["functions"]["weights"])


def _write(values: dict[str, float]) -> None:
    """The moved function weights into the package's weights file, its layout and `why`s kept."""
    from brain.search.weights import WEIGHTS_FILE, load_weights
    from fit_weights import set_values

    path = Path(WEIGHTS_FILE)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(set_values(path.read_text(encoding="utf-8"), values, functions=True), encoding="utf-8")
    load_weights(tmp)  # a file the product cannot read is never put in place
    tmp.replace(path)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


if __name__ == "__main__":
    sys.exit(main())
