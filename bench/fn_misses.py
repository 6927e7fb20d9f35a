"""Why a gold definition is not in the function ranking's top k: the misses of recorded evidence, by kind.

Input: the function evidence the benchmarks dump (bench_functions.py's `--evidence` JSONL for Django,
bench_corpus.py's evidence folder for the corpus; the same loaders as fit_functions.py). Each task is
re-ranked under the shipped weights with no limit (`combine_functions`, no index read), and each task whose
gold definitions are not all in the first `--k` is put in one class, by its worst-placed gold definition:

- `not gathered`: no evidence at all for it (not a candidate: its file is outside the file ranking's
  prior and no name or text points to it);
- `file outside the prior`: a candidate by its name or text only, its file not among the prior's files;
- `best of a lower file`: the first of its own file's definitions, its file not the prior's first;
- `deeper in its file`: behind other definitions of its own file (the file first or not).

Per class: how many tasks, and how many of them have the gold within 10 or 20 (what a wider list would
reach). `--list` prints each miss: the gold, its overall rank, its file's place among the prior's files,
its place within its file, and the files the first ten come from (by their place in the prior).

    .venv/bin/python bench/fn_misses.py --dev DJANGO.jsonl [--k 5] [--list]
    .venv/bin/python bench/fn_misses.py --evidence DIR [--repos FILE] [--k 5]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fit_functions as ff  # noqa: E402

__all__ = ["file_order", "classify", "main"]

CLASSES = ("not gathered", "file outside the prior", "best of a lower file", "deeper in its file")


def file_order(evidence, kind_factor: dict) -> list[str]:
    """The prior's files, best first, read back from the `file` evidence (the prior divided by the kind factor)."""
    prior: dict[str, float] = {}
    for def_id, found in evidence.defs.items():
        row = evidence.rows[def_id]
        for feature, value, _, _ in found.reasons:
            if feature == "file" and value > 0:
                p = value / (kind_factor.get(row.kind, 1.0) or 1.0)
                prior[row.path] = max(prior.get(row.path, 0.0), p)
    return sorted(prior, key=lambda path: (-prior[path], path))


def classify(task, weights, k: int = 5) -> dict | None:
    """None when every gold definition is in the first ``k``; else the worst-placed gold's class and places."""
    from brain.search.rank_functions import combine_functions

    keys = [h.key for h in combine_functions(task.evidence, weights, limit=1_000_000)]
    where = {key: n for n, key in enumerate(keys, 1)}
    ranks = [where.get(g) for g in task.gold]
    if all(r is not None and r <= k for r in ranks):
        return None
    files = file_order(task.evidence, weights.functions["kind_factor"])
    place = {path: n for n, path in enumerate(files, 1)}
    gold = max(task.gold, key=lambda g: where.get(g, len(keys) + 1))
    path = gold.split("::", 1)[0]
    rank = where.get(gold)
    in_file = [key for key in keys if key.split("::", 1)[0] == path]
    within = in_file.index(gold) + 1 if gold in in_file else None
    if rank is None:
        kind = CLASSES[0]
    elif path not in place:
        kind = CLASSES[1]
    elif within == 1:
        kind = CLASSES[2]
    else:
        kind = CLASSES[3]
    return {"id": task.id, "class": kind, "gold": gold, "rank": rank, "file_place": place.get(path),
            "within_file": within, "worst": None if None in ranks else max(ranks),
            "top10_files": [place.get(key.split("::", 1)[0]) for key in keys[:10]]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", type=Path, help="bench_functions.py's evidence JSONL (Django)")
    ap.add_argument("--evidence", type=Path, help="bench_corpus.py's evidence folder")
    ap.add_argument("--repos", type=Path, help="with --evidence: only the repositories listed (one owner/name a line)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--list", action="store_true", help="print each miss")
    args = ap.parse_args(argv)
    if not args.dev and not args.evidence:
        ap.error("give --dev and/or --evidence")
    from brain.search.weights import shipped_weights

    weights = shipped_weights()
    tasks = ff.load_dev(args.dev) if args.dev else []
    if args.evidence:
        keep = set(args.repos.read_text(encoding="utf-8").split()) if args.repos else None
        tasks += [t for t in ff.load_corpus(args.evidence) if keep is None or t.repo in keep]
    misses = [m for m in (classify(t, weights, args.k) for t in tasks) if m]
    counts = Counter(m["class"] for m in misses)
    print(f"tasks {len(tasks)}, not all gold in the top {args.k}: {len(misses)}")
    print("| class | tasks | all gold within 10 | within 20 |\n|---|---:|---:|---:|")
    for kind in CLASSES:
        got = [m for m in misses if m["class"] == kind]
        print(f"| {kind} | {len(got)} | {sum(1 for m in got if m['worst'] and m['worst'] <= 10)} | "
              f"{sum(1 for m in got if m['worst'] and m['worst'] <= 20)} |")
    if args.list:
        for m in misses:
            print(f"{m['id']} {m['class']}: {m['gold']} rank {m['rank']} file {m['file_place']} "
                  f"in file {m['within_file']} top-10 files {m['top10_files']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
