"""Multi-language localization benchmark: does the boot rank the files a bug's fix changed?

For each task of ../shared/bench/multilang-dev.jsonl (real bug reports in C, C++, Go, Java,
JavaScript and Rust, with the commit the fix was made on and every source file it changed):
the repository at that commit is checked out once from a local bare mirror (`git clone --shared`,
detached at the base commit, cached under bench/.cache/multilang/<owner>+<name>@<commit>+history),
so brain has the project's real history up to that commit and never after, as a user's repository
has; `brain init` + `brain map` + the index (code and history) are built once per tree, and the
report is booted under an 8,000-token budget. Scores per language and their macro average (each
language weighs the same): all@1/5/10 (every gold file among the first k ranked files), any@1/5
(at least one), in context (every gold file named in the boot text), code shown (a gold file's code is
in the boot: a code part of the code slot, the depth the names do not give); beside the same ranking
without the history evidence (the `history` and `cochange` weights at 0, same index, same run:
what the project's history adds) and an identifier-aware BM25 over the same source files (test
files excluded).

`--archive` measures the older way: the tree alone (`git archive COMMIT | tar -x`, under
.../<owner>+<name>@<commit>), no history, so no history evidence; the files indexed are the same
(only export-ignored `.gitignore`/`.gitattributes` files differ), and its figures equal the "no
history" row of the default run (decision 0059).

    BRAIN_BENCH_MIRRORS=/path/to/mirrors .venv/bin/python bench/bench_multilang.py
    .venv/bin/python bench/bench_multilang.py --mirrors DIR --lang Go --limit 5 --jobs 2 --misses
    .venv/bin/python bench/bench_multilang.py --mirrors DIR --cli     # boots through `brain boot --task-file ... --json`
    .venv/bin/python bench/bench_multilang.py --mirrors DIR --archive # git archive trees: no history

Each task's evidence (`brain.search.ranking.gather`, unit weights) goes to
bench/.cache/evidence/multilang.jsonl (`--evidence`): fit_weights.py's development-set guard re-ranks the
tasks from it under candidate weights (`combine`) without booting again.

The mirror folder holds one bare git repository per project as `<owner>+<name>/repo` (or
`<owner>+<name>` itself bare). Nothing fetched is committed; results go to
bench/results/multilang.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import corpus_score
import locbench
from locbench import (BUDGET, EVIDENCE, bm25_files, boot, gather_evidence, load_tasks, percentile, prepare,
                      shared_tasks, write_evidence, write_results)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache"
TREES = CACHE / "multilang"
DEFAULT_TASKS = shared_tasks("multilang-dev.jsonl")
KS_ALL = (1, 5, 10)
KS_ANY = (1, 5)


def git_dir(mirrors: Path, repo: str) -> Path:
    return locbench.git_dir(mirrors, repo, "bench_multilang")


HISTORY = True  # trees are git checkouts at the base commit (brain reads their past commits); --archive: False
NO_HISTORY = {"history": 0.0, "cochange": 0.0}  # the "no history" ranking: the history features off


def tree_for(mirrors: Path, repo: str, commit: str) -> Path:
    """The source tree of ``repo`` at ``commit``, checked out (or, with --archive, extracted) once and cached."""
    return locbench.tree_at(git_dir(mirrors, repo), commit, TREES / f"{repo.replace('/', '+')}@{commit}", HISTORY,
                            "bench_multilang")


def gold_ranks(gold: list[str], files: list[str]) -> list[int | None]:
    position = {f: i + 1 for i, f in reversed(list(enumerate(files)))}
    return [position.get(g) for g in gold]


def code_tokens(result: dict) -> int:
    """Tokens of the boot's code parts (one definition's source, or a file's lines, each)."""
    return sum(s.get("tokens", 0) for s in result.get("sections", [])
               if s.get("slot") == "code" and "::" in s.get("source", ""))


def run_tree(job: tuple) -> list[dict]:
    """Prepare one tree and run its tasks (one process per tree when --jobs > 1)."""
    mirrors, repo, commit, tasks, cli, reindex, dump = job
    import brain as brainlib
    from brain.search.locate import locate
    from brain.search.weights import shipped_weights

    folder = tree_for(mirrors, repo, commit)
    if reindex:
        (folder / ".brain" / "runtime" / "index.db").unlink(missing_ok=True)
    prep = prepare(folder, cli, quiet=True)
    view = brainlib.open(folder).index.code_view()
    tmp = CACHE / "tmp" / f"multilang-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    rows = []
    for task in tasks:
        gold = task["gold_files"]
        started = time.perf_counter()
        result = boot(folder, task["problem_statement"], cli, tmp)
        seconds = time.perf_counter() - started
        bm25 = bm25_files(view, task["problem_statement"], 20)
        plain = shipped_weights().replace(NO_HISTORY)
        no_history = [h.path for h in locate(view, task["problem_statement"], limit=20, weights=plain).files]  # first 20
        rows.append({
            "id": task["instance_id"], "lang": task["language"], "repo": repo, "gold": gold,
            "brain": gold_ranks(gold, result["files"]), "brain_ctx": all(g in result["text"] for g in gold),
            "bm25": gold_ranks(gold, bm25), "nohist": gold_ranks(gold, no_history),
            "indexed": [g in view.files and not view.is_test(g) for g in gold],
            "code_gold": bool(set(gold) & set(corpus_score.code_files(result))), "code_tokens": code_tokens(result),
            "tokens": result["tokens"], "seconds": round(seconds, 4), "prepare_seconds": round(prep, 2),
            "top": result["files"][:10], "top_nohist": no_history[:10],
        })
        if dump:
            found = gather_evidence(view, task["problem_statement"])
            if found is not None:
                rows[-1]["_evidence"] = {"id": task["instance_id"], "repo": repo, "lang": task["language"],
                                         "gold": gold, "boot": result["files"], "evidence": found}
    return rows


def scores(rows: list[dict], key: str) -> dict:
    n = len(rows) or 1
    out = {}
    for k in KS_ALL:
        out[f"all@{k}"] = sum(all(r is not None and r <= k for r in row[key]) for row in rows) / n
    for k in KS_ANY:
        out[f"any@{k}"] = sum(any(r is not None and r <= k for r in row[key]) for row in rows) / n
    if key == "brain":
        out["in_context"] = sum(row["brain_ctx"] for row in rows) / n
        out["code_shown"] = sum(row.get("code_gold", False) for row in rows) / n
    return out


def macro(per_lang: dict[str, dict]) -> dict:
    keys = next(iter(per_lang.values())).keys() if per_lang else []
    return {k: sum(s[k] for s in per_lang.values()) / len(per_lang) for k in keys}


COLUMNS = ["all@1", "all@5", "all@10", "any@1", "any@5", "in_context", "code_shown"]


def table(report: dict) -> str:
    lines = ["| language | tasks | ranking | " + " | ".join(COLUMNS) + " |", "|---|---:|---|" + "---:|" * len(COLUMNS)]
    names = {"brain": "brain boot", "nohist": "no history", "bm25": "BM25"}
    for lang in [*sorted(report["languages"]), "macro"]:
        entry = report["macro"] if lang == "macro" else report["languages"][lang]
        for name in ("brain", "nohist", "bm25"):
            if name not in entry:
                continue
            s = entry[name]
            cells = [f"{s[c]:.2f}" if c in s else "—" for c in COLUMNS]
            lines.append(f"| {lang} | {entry['tasks']} | {names[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS), help="the JSONL task file")
    ap.add_argument("--mirrors", default=os.environ.get("BRAIN_BENCH_MIRRORS"),
                    help="folder of bare git mirrors, <owner>+<name>/repo (default: $BRAIN_BENCH_MIRRORS)")
    ap.add_argument("--lang", action="append", help="only this language (repeatable; C, C++, Go, Java, JavaScript, Rust)")
    ap.add_argument("--limit", type=int, help="only the first N tasks of each language")
    ap.add_argument("--only", help="only tasks whose instance_id contains this")
    ap.add_argument("--trees", help="folder for this run's extracted trees (default bench/.cache/multilang; "
                    "give each checkout its own, since the trees hold each checkout's index)")
    ap.add_argument("--jobs", type=int, default=1, help="trees prepared and run in parallel")
    ap.add_argument("--cli", action="store_true", help="boot through the `brain` command instead of the library")
    ap.add_argument("--reindex", action="store_true", help="rebuild each tree's code index from scratch")
    trees = ap.add_mutually_exclusive_group()
    trees.add_argument("--history", action="store_true", help="trees as git checkouts at the base commit (`git clone "
                       "--shared` of the mirror), so brain has the project's history up to it (the default)")
    trees.add_argument("--archive", action="store_true", help="trees extracted with `git archive`: no history, so "
                       "no history evidence (the benchmark of record before decision 0059)")
    ap.add_argument("--misses", action="store_true", help="print the tasks whose gold files are not all in the top 5")
    ap.add_argument("--out", default=str(HERE / "results" / "multilang.json"))
    ap.add_argument("--evidence", default=str(EVIDENCE / "multilang.jsonl"),
                    help="per-task evidence for fit_weights.py's guard (JSONL; '' writes none)")
    args = ap.parse_args(argv)
    if not args.mirrors:
        ap.error("give the mirror folder with --mirrors or BRAIN_BENCH_MIRRORS")
    mirrors = Path(args.mirrors).expanduser().resolve()
    global TREES, HISTORY
    if args.trees:
        TREES = Path(args.trees).expanduser().resolve()
    HISTORY = not args.archive

    os.environ.setdefault("BRAIN_HOME", str(CACHE / "brain-home"))
    tasks = load_tasks(args.tasks)
    if args.lang:
        wanted = {lang.lower() for lang in args.lang}
        tasks = [t for t in tasks if t["language"].lower() in wanted]
    if args.only:
        tasks = [t for t in tasks if args.only in t["instance_id"]]
    if args.limit:
        taken: dict[str, int] = defaultdict(int)
        kept = []
        for t in tasks:
            if taken[t["language"]] < args.limit:
                taken[t["language"]] += 1
                kept.append(t)
        tasks = kept
    if not tasks:
        ap.error("no task matches")
    by_tree: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for task in tasks:
        by_tree[(task["repo"], task["base_commit"])].append(task)
    jobs = [(mirrors, repo, commit, ts, args.cli, args.reindex, bool(args.evidence))
            for (repo, commit), ts in sorted(by_tree.items())]
    for repo in sorted({repo for repo, _ in by_tree}):
        git_dir(mirrors, repo)  # fail early on a missing mirror

    started = time.perf_counter()
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            batches = pool.map(run_tree, jobs, chunksize=1)
    else:
        batches = [run_tree(job) for job in jobs]
    rows = sorted((row for batch in batches for row in batch), key=lambda r: r["id"])
    evidence_out = [row.pop("_evidence") for row in rows if "_evidence" in row]
    wall = time.perf_counter() - started

    by_lang: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_lang[row["lang"]].append(row)
    ranked = ("brain", "nohist", "bm25") if HISTORY else ("brain", "bm25")  # archive trees: no history to drop
    languages = {lang: {"tasks": len(rs), **{name: scores(rs, name) for name in ranked}}
                 for lang, rs in sorted(by_lang.items())}
    toks = [r["tokens"] for r in rows]
    secs = [r["seconds"] for r in rows]
    report = {
        "tasks": len(rows), "trees": len(jobs), "mode": "cli" if args.cli else "library", "budget": BUDGET,
        "history": HISTORY,
        "languages": languages,
        "macro": {"tasks": len(rows), **{name: macro({k: v[name] for k, v in languages.items()}) for name in ranked}},
        "tokens": {"max": max(toks), "median": statistics.median(toks), "over_budget": sum(t > BUDGET for t in toks),
                   "code_median": statistics.median(r["code_tokens"] for r in rows)},
        "boot_seconds": {"median": round(statistics.median(secs), 4), "p95": round(percentile(secs, 0.95), 4)},
        "gold_not_indexed": sum(not all(r["indexed"]) for r in rows),
        "wall_seconds": round(wall, 1), "load": os.getloadavg()[0],
    }
    if args.misses:
        for row in rows:
            if not all(r is not None and r <= 5 for r in row["brain"]):
                print(f"{row['id']} [{row['lang']}] gold={row['gold']} ranks={row['brain']} bm25={row['bm25']} "
                      f"top={row['top'][:5]}")
    print(f"tasks: {len(rows)} on {len(jobs)} trees  mode: {report['mode']}  budget: {BUDGET}  "
          f"wall {wall:.0f} s, load {report['load']:.1f}")
    print(table(report))
    print(f"boot tokens: max {report['tokens']['max']}, median {report['tokens']['median']}, over budget "
          f"{report['tokens']['over_budget']}, code slot median {report['tokens']['code_median']}; boot seconds median {report['boot_seconds']['median']:.3f}, "
          f"p95 {report['boot_seconds']['p95']:.3f}; tasks with a gold file outside the index: {report['gold_not_indexed']}")
    write_results(args.out, report, rows)
    if evidence_out:
        write_evidence(args.evidence, evidence_out)
        print(f"evidence of {len(evidence_out)} tasks: {args.evidence}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
