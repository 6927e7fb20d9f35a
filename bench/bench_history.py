"""History as evidence, measured: the file ranking with and without the project's past commits, beside BM25.

For each task (a report, the repository, its base commit and the files the fix changed): one git
checkout per repository (`git clone --shared` of the local mirror) is moved to the task's base commit
(`checkout --detach`, tasks in commit-time order so the code and history indexes refresh incrementally),
the index is refreshed (code, functions, then history: HEAD's log only, so the ranking never sees the
fix or anything after it), and on the same index four rankings are scored:

- ``with``: `locate()` as shipped (history and co-change features on);
- ``without``: `locate()` with the `history` and `cochange` weights at 0 (the same run, the same index);
- ``history``: the history feature alone (files of past commits like the task);
- ``bm25``: identifier-aware BM25 over the source files.

Reported per language and macro: all@5 and any@5; the tasks each ranking wins or loses against
``without``; the complementary gain (tasks where the history feature alone put a gold file in its
top 5 while neither ``without`` nor BM25 did); the cost: history indexing CPU (this process and git),
per-refresh CPU when HEAD did not move, per-task added CPU of the two features; machine load.

    python bench/bench_history.py --mirrors DIR --trees DIR [--tasks FILE] [--per-repo 10] [--repos 20]
        [--corpus] [--out FILE]

``--corpus`` picks a deterministic slice of a corpus file (`build_corpus.py` output): repositories
round-robin over languages (sorted by name within each), ``--per-repo`` tasks each, evenly spaced.
Nothing fetched is committed; trees live in the given folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import locbench
import reserved

HERE = Path(__file__).resolve().parent
K = 5


def cpu() -> float:
    """CPU seconds of this process and of its finished children (git)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def corpus_slice(tasks: list[dict], repos: int, per_repo: int, available) -> list[dict]:
    by_lang: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for t in tasks:
        by_lang[t["language"]][t["repo"]].append(t)
    queues = {lang: sorted(r for r in rs if available(r)) for lang, rs in sorted(by_lang.items())}
    chosen: list[tuple[str, str]] = []
    while len(chosen) < repos and any(queues.values()):
        for lang in sorted(queues):
            if queues[lang] and len(chosen) < repos:
                chosen.append((lang, queues[lang].pop(0)))
    out = []
    for lang, repo in chosen:
        items = sorted(by_lang[lang][repo], key=lambda t: t["instance_id"])
        step = max(1, len(items) // per_repo)
        out.extend(items[::step][:per_repo])
    return out


def run_repo(gd: Path, trees: Path, repo: str, tasks: list[dict], sweep=()) -> tuple[list[dict], dict]:
    import brain as brainlib
    from brain.search import history as hist
    from brain.search.code import refresh_code
    from brain.search.functions import refresh_functions
    from brain.search.code import transaction
    from brain.search.history_store import HISTORY_SCHEMA, clear_history, refresh_history
    from brain.search.locate import extract_signals, locate
    from brain.search.weights import shipped_weights

    def commit_time(sha: str) -> int:
        out = subprocess.run(["git", "--git-dir", str(gd), "log", "-1", "--format=%ct", sha], capture_output=True,
                             text=True)
        return int(out.stdout.strip() or 0)

    tasks = sorted(tasks, key=lambda t: (commit_time(t["base_commit"]), t["instance_id"]))
    folder = locbench.checkout_tree(gd, tasks[0]["base_commit"], trees / repo.replace("/", "+"), "bench_history")
    b = brainlib.init(folder)
    b.index.db.executescript(HISTORY_SCHEMA)
    with transaction(b.index.db):  # a tree left by an earlier run starts from empty history tables
        clear_history(b.index.db)
    rows, cost = [], defaultdict(float)
    for task in tasks:
        moved = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(folder), "checkout", "-q", "-f",
                                "--detach", task["base_commit"]], capture_output=True)
        if moved.returncode != 0:  # a snapshot without some large blob: the tree cannot be had whole
            cost["skipped"] += 1
            continue
        db = b.index.db
        refresh_code(db, b.repo)
        refresh_functions(db, b.repo)
        start = cpu()
        stats = refresh_history(db, b.repo)
        cost["history_index_cpu"] += cpu() - start
        cost["history_commits_added"] += stats["added"]
        start = cpu()
        refresh_history(db, b.repo)
        cost["noop_refresh_cpu"] += cpu() - start
        view = b.index.code_view()
        text = task["problem_statement"]
        def ranked(weights: tuple[float, float] | None) -> list[str]:
            chosen = None if weights is None else shipped_weights().replace({"history": weights[0], "cochange": weights[1]})
            return [h.path for h in locate(view, text, limit=20, weights=chosen).files]

        ranked((0.0, 0.0))  # warm the view's lazy tables, so neither timed call pays for them
        start = cpu()
        with_h = ranked(None)
        cost["with_cpu"] += cpu() - start
        start = cpu()
        without = ranked((0.0, 0.0))
        cost["without_cpu"] += cpu() - start
        swept = {f"h{wh:g}c{wc:g}": ranked((wh, wc))[:10] for wh, wc in sweep}
        alone: dict[str, float] = defaultdict(float)
        hist.history_evidence(view, extract_signals(text).words, lambda p, w, r: alone.__setitem__(p, alone[p] + w))
        history_only = sorted(alone, key=lambda p: (-alone[p], p))[:20]
        rows.append({"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": task["gold_files"],
                     "with": with_h[:10], "without": without[:10], "history": history_only[:10],
                     "bm25": locbench.bm25_files(view, text, 10), **swept})
        cost["tasks"] += 1
    try:
        cost["commits_indexed"] = b.index.db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0]
    except sqlite3.OperationalError:  # every task skipped: nothing was indexed
        cost["commits_indexed"] = 0
    return rows, dict(cost)


def measure_cost(gd: Path, trees: Path, repo: str, repeats: int = 3) -> dict:
    """History indexing of the newest commits at the mirror's HEAD (from empty tables, ``repeats`` times: the
    median), and the no-op refresh (HEAD unchanged), CPU of this process plus git's and wall."""
    import statistics

    import brain as brainlib
    from brain.search.code import transaction
    from brain.search.history_store import clear_history, refresh_history

    head = subprocess.run(["git", "--git-dir", str(gd), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    folder = locbench.checkout_tree(gd, head, trees / (repo.replace("/", "+") + "@head"), "bench_history")
    b = brainlib.init(folder)
    b.index.refresh_code()  # code tables first: history keeps the files indexed now
    db = b.index.db
    builds, walls, stats = [], [], {}
    for _ in range(repeats):
        with transaction(db):
            clear_history(db)
        c, w = cpu(), time.perf_counter()
        stats = refresh_history(db, b.repo)
        builds.append(cpu() - c)
        walls.append(time.perf_counter() - w)
    noop_cpu, noop_wall = [], []
    for _ in range(20):
        c, w = cpu(), time.perf_counter()
        refresh_history(db, b.repo)
        noop_cpu.append(cpu() - c)
        noop_wall.append(time.perf_counter() - w)
    return {"repo": repo, "commits": stats.get("commits"),
            "files_rows": db.execute("SELECT COUNT(*) FROM hist_files").fetchone()[0],
            "build_cpu_s": round(statistics.median(builds), 2), "build_wall_s": round(statistics.median(walls), 2),
            "noop_cpu_ms": round(1000 * statistics.median(noop_cpu), 2),
            "noop_wall_ms": round(1000 * statistics.median(noop_wall), 2), "load": round(os.getloadavg()[0], 1)}


def hit(row: dict, key: str, mode: str) -> bool:
    top = set(row[key][:K])
    gold = row["gold"]
    return all(g in top for g in gold) if mode == "all" else any(g in top for g in gold)


RANKINGS = ("with", "without", "history", "bm25")


def summary(rows: list[dict], extra: tuple[str, ...] = ()) -> dict:
    by_lang: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_lang[row["lang"]].append(row)
    per_lang = {}
    for lang, rs in sorted(by_lang.items()):
        per_lang[lang] = {"tasks": len(rs), **{f"{k}_{m}@{K}": round(sum(hit(r, k, m) for r in rs) / len(rs), 3)
                                               for k in (*RANKINGS, *extra) for m in ("all", "any")}}
    keys = [k for k in next(iter(per_lang.values())) if k != "tasks"] if per_lang else []
    macro = {k: round(sum(v[k] for v in per_lang.values()) / len(per_lang), 3) for k in keys}
    moved = {f"{key}:{m}": {"gained": [r["id"] for r in rows if hit(r, key, m) and not hit(r, "without", m)],
                            "lost": [r["id"] for r in rows if hit(r, "without", m) and not hit(r, key, m)]}
             for key in ("with", *extra) for m in ("all", "any")}
    complementary = [r["id"] for r in rows if hit(r, "history", "any") and not hit(r, "without", "any")
                     and not hit(r, "bm25", "any")]
    return {"tasks": len(rows), "macro": macro, "per_lang": per_lang,
            "moved": {m: {k: len(v) for k, v in d.items()} for m, d in moved.items()},
            "moved_ids": moved, "complementary_any@5": len(complementary), "complementary_ids": complementary}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--trees", type=Path, required=True, help="folder of this run's checkouts (one per repository)")
    ap.add_argument("--tasks", type=Path, default=locbench.shared_tasks("multilang-dev.jsonl"))
    ap.add_argument("--corpus", action="store_true", help="take a deterministic slice of the task file (a corpus)")
    ap.add_argument("--repos", type=int, default=20)
    ap.add_argument("--per-repo", type=int, default=10)
    ap.add_argument("--reserved", type=Path, default=reserved.DEFAULT_RESERVED)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "history.json")
    ap.add_argument("--sweep", help="more weight pairs scored in the same pass, W_HISTORY:W_COCHANGE,... "
                    "(each beside `without`)")
    ap.add_argument("--first-parent", action="store_true", help="index only HEAD's first-parent line "
                    "(history_store.FIRST_PARENT), to compare with all parents")
    ap.add_argument("--cost", metavar="OWNER/NAME", help="only measure history indexing at this mirror's HEAD "
                    "(from empty tables) and the no-op refresh, then stop")
    args = ap.parse_args(argv)
    os.environ.setdefault("BRAIN_HOME", str(HERE / ".cache" / "brain-home"))
    try:
        sweep = [tuple(float(x) for x in pair.split(":")) for pair in args.sweep.split(",")] if args.sweep else []
    except ValueError:
        ap.error("--sweep takes W_HISTORY:W_COCHANGE pairs separated by commas, e.g. 1.5:0.1,3:0")
    if any(len(pair) != 2 for pair in sweep):
        ap.error("--sweep takes W_HISTORY:W_COCHANGE pairs, e.g. 1.5:0.1,3:0")
    if args.first_parent:
        from brain.search import history_store

        history_store.FIRST_PARENT = True
    if args.cost:
        gd = locbench.git_dir(args.mirrors, args.cost, "bench_history")
        print(json.dumps(measure_cost(gd, args.trees, args.cost)))
        return 0
    tasks = locbench.load_tasks(args.tasks)

    def available(repo: str) -> bool:
        try:
            locbench.git_dir(args.mirrors, repo)
            return True
        except SystemExit:
            return False

    if args.corpus:
        tasks = corpus_slice(tasks, args.repos, args.per_repo, available)
        try:
            reserved.refuse_reserved(sorted({t["repo"] for t in tasks}), reserved.read_reserved(args.reserved))
        except reserved.BenchRefusal as exc:
            print(f"bench_history: {exc}", file=sys.stderr)
            return exc.exit_code
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for t in tasks:
        by_repo[t["repo"]].append(t)
    started, cpu0, load0 = time.perf_counter(), cpu(), os.getloadavg()[0]
    rows, costs = [], {}
    for repo, ts in sorted(by_repo.items()):
        gd = locbench.git_dir(args.mirrors, repo, "bench_history")
        got, cost = run_repo(gd, args.trees, repo, ts, sweep)
        rows += got
        costs[repo] = cost
        print(f"{repo}: {len(got)} tasks, {cost['commits_indexed']} commits, history index "
              f"{cost.get('history_index_cpu', 0.0):.2f} s CPU, {int(cost.get('skipped', 0))} skipped", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"partial": True, "rows": rows, "costs": costs}) + "\n")  # a crash keeps these
    report = summary(rows, tuple(f"h{wh:g}c{wc:g}" for wh, wc in sweep))
    n = max(1, sum(c.get("tasks", 0) for c in costs.values()))
    report["skipped_tasks"] = int(sum(c.get("skipped", 0) for c in costs.values()))
    report["cost"] = {
        "history_index_cpu_per_repo": {r: round(c.get("history_index_cpu", 0.0), 2) for r, c in costs.items()},
        "commits_indexed": {r: c["commits_indexed"] for r, c in costs.items()},
        "noop_refresh_cpu_ms": round(1000 * sum(c.get("noop_refresh_cpu", 0.0) for c in costs.values()) / n, 2),
        "locate_cpu_ms_with": round(1000 * sum(c.get("with_cpu", 0.0) for c in costs.values()) / n, 2),
        "locate_cpu_ms_without": round(1000 * sum(c.get("without_cpu", 0.0) for c in costs.values()) / n, 2),
    }
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    report["cpu_seconds"] = round(cpu() - cpu0, 1)
    report["load"] = [round(load0, 1), round(os.getloadavg()[0], 1)]
    report["first_parent"] = args.first_parent
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": report, "rows": rows}, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if not k.endswith("_ids")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
