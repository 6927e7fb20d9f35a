"""Localization benchmark: does the boot put the file a bug report is about first?

For each task of ../shared/bench/swe-lite-dev.jsonl (real Django bug reports with
the file the real fix changed), on the PyPI source release the report was filed
against: `brain init` (+ `brain map` when the cards part is installed) once per
release, then a boot with the report as the task under an 8,000-token budget.
Scores: Acc@1/3/5 on the boot's `files`, "in context" (the gold path appears
anywhere in the boot text), boot tokens; and, in the same run, a BM25-over-files
baseline (identifier-aware tokens, test files excluded) on the same index.

    .venv/bin/python bench/bench_localization.py            # in-process (fast)
    .venv/bin/python bench/bench_localization.py --cli      # through `brain boot --task-file ... --json`

Each task's evidence (`brain.search.ranking.gather`, unit weights) goes to
bench/.cache/evidence/localization.jsonl (`--evidence`): fit_weights.py's development-set guard re-ranks
the tasks from it under candidate weights (`combine`) without booting again.

Releases are downloaded once with pip into bench/.cache/sdists (shared with other
benchmarks; a file lock guards each release) and unpacked under bench/.cache/.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections import defaultdict
from pathlib import Path

from locbench import (BUDGET, EVIDENCE, bm25_files, boot, gather_evidence, load_tasks, pick_tasks, prepare, rank_of,
                      shared_tasks, write_evidence, write_results)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache"
DEFAULT_TASKS = shared_tasks("swe-lite-dev.jsonl")


def release_dir(pypi: str) -> Path:
    """The unpacked source release for `django==X` (downloaded once, shared, locked)."""
    name, version = pypi.split("==")
    sdists = CACHE / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    with open(sdists / f".lock-{name}-{version}", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tars = [p for p in sdists.iterdir() if p.name.lower() == f"{name}-{version}.tar.gz".lower()]
        if not tars:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            pypi, "-d", str(sdists)], check=True)
            tars = [p for p in sdists.iterdir() if p.name.lower() == f"{name}-{version}.tar.gz".lower()]
        tar = tars[0]
        folder = CACHE / tar.name[: -len(".tar.gz")]
        if not folder.is_dir():
            with tarfile.open(tar) as archive:
                archive.extractall(CACHE, filter="data")
    return folder


def workspace_for(pypi: str, trees: Path | None = None) -> Path:
    """A private hard-linked copy of the release, so our .brain/ never collides with other benchmarks."""
    src = release_dir(pypi)
    dst = (trees or CACHE / "localization") / src.name
    if not dst.is_dir():
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp, copy_function=os.link)
        tmp.rename(dst)
    return dst


def summarize(rows: list[dict], key: str) -> dict:
    n = len(rows)
    ranks = [r[key] for r in rows]
    out = {f"acc@{k}": sum(1 for x in ranks if x is not None and x <= k) / n for k in (1, 3, 5)}
    out["in_context"] = sum(1 for r in rows if r[f"{key}_ctx"]) / n
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS), help="the JSONL task file")
    ap.add_argument("--cli", action="store_true", help="boot through the `brain` command instead of the library")
    ap.add_argument("--limit", type=int, help="only the first N tasks")
    ap.add_argument("--only", help="only tasks whose instance_id contains this")
    ap.add_argument("--trees", help="folder for this run's copies of the releases (default bench/.cache/localization; "
                                    "a private one keeps another checkout's index out of the measurement)")
    ap.add_argument("--misses", action="store_true", help="print the tasks whose gold file is not first")
    ap.add_argument("--out", default=str(HERE / "results" / "localization.json"))
    ap.add_argument("--evidence", default=str(EVIDENCE / "localization.jsonl"),
                    help="per-task evidence for fit_weights.py's guard (JSONL; '' writes none)")
    args = ap.parse_args(argv)

    os.environ.setdefault("BRAIN_HOME", str(CACHE / "brain-home"))
    tasks = pick_tasks(load_tasks(args.tasks), args.only, args.limit)
    by_release: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        by_release[task["pypi"]].append(task)

    rows, evidence_out = [], []
    prep_seconds = {}
    tmp = CACHE / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    for pypi in sorted(by_release):
        folder = workspace_for(pypi, Path(args.trees) if args.trees else None)
        prep_seconds[pypi] = prepare(folder, args.cli)
        import brain as brainlib

        view = brainlib.open(folder).index.code_view()
        for task in by_release[pypi]:
            gold = task["gold_files"]
            started = time.perf_counter()
            result = boot(folder, task["problem_statement"], args.cli, tmp)
            seconds = time.perf_counter() - started
            bm25 = bm25_files(view, task["problem_statement"], 40)  # as many files as the boot names
            row = {
                "id": task["instance_id"], "release": pypi, "gold": gold,
                "brain": rank_of(gold, result["files"]),
                "brain_ctx": any(g in result["text"] for g in gold),
                "bm25": rank_of(gold, bm25),
                "bm25_ctx": rank_of(gold, bm25) is not None,
                "tokens": result["tokens"], "seconds": round(seconds, 4),
                "top": result["files"][:5],
            }
            rows.append(row)
            if args.evidence:
                found = gather_evidence(view, task["problem_statement"])
                if found is not None:
                    evidence_out.append({"id": row["id"], "repo": "django/django", "lang": "Python", "gold": gold,
                                         "boot": result["files"], "evidence": found})
            if args.misses and row["brain"] != 1:
                print(f"{row['id']} gold={gold[0]} rank={row['brain']} bm25={row['bm25']} top={row['top'][:3]}")
    brain_s, bm25_s = summarize(rows, "brain"), summarize(rows, "bm25")
    toks = [r["tokens"] for r in rows]
    secs = sorted(r["seconds"] for r in rows)
    report = {
        "tasks": len(rows), "mode": "cli" if args.cli else "library", "budget": BUDGET,
        "brain": brain_s, "bm25": bm25_s,
        "tokens": {"max": max(toks), "median": statistics.median(toks), "over_budget": sum(t > BUDGET for t in toks)},
        "boot_seconds": {"median": statistics.median(secs), "p95": secs[int(0.95 * (len(secs) - 1))]},
        "prepare_seconds": {k: round(v, 2) for k, v in prep_seconds.items()},
    }
    print(f"tasks: {len(rows)}  mode: {report['mode']}  budget: {BUDGET}")
    print("| ranking | Acc@1 | Acc@3 | Acc@5 | in context |")
    print("|---|---|---|---|---|")
    for name, s in (("brain boot", brain_s), ("BM25 over files (same run)", bm25_s)):
        print(f"| {name} | {s['acc@1']:.3f} | {s['acc@3']:.3f} | {s['acc@5']:.3f} | {s['in_context']:.3f} |")
    print(f"boot tokens: max {report['tokens']['max']}, median {report['tokens']['median']}, "
          f"over budget {report['tokens']['over_budget']}; boot seconds median {report['boot_seconds']['median']:.3f}, "
          f"p95 {report['boot_seconds']['p95']:.3f}")
    write_results(args.out, report, rows)
    if evidence_out:
        write_evidence(args.evidence, evidence_out)
        print(f"evidence of {len(evidence_out)} tasks: {args.evidence}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
