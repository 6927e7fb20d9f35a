"""Reach and precision of a call-graph link for a fix's second file (issue 23, the `calls` work).

For each sampled corpus task (bench_corpus's draw, `--per-repo`) of the chosen half (`calls_split`), on a real
checkout of the task's base commit: the boot's file ranking (40 files) and function ranking (20 definitions,
`locate_functions` as the boot calls it), then, read live from the function index, the files that define a
function the best file's best-ranked functions call (callees) and the files whose functions call them
(callers), resolved the way the function ranking resolves them (`function_evidence.LiveGraph`). The import
neighbours of the best file beside them, for comparison. One JSON line per task; `--report` summarizes.

    .venv/bin/python bench/calls_measure.py --corpus C --mirrors M --reserved R --trees T --half tune --out O.jsonl
    .venv/bin/python bench/calls_measure.py --report O.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import bench_corpus as bc  # noqa: E402
import calls_split  # noqa: E402
import corpus_score as cs  # noqa: E402
import locbench  # noqa: E402
import reserved  # noqa: E402

SEED_FNS = 3
LOOSE_FILES = 5  # the best file's best-ranked functions read
FILES = 40


def links_of(fview, view, graph, hits, path: str, k: int) -> dict:
    """callee and caller files of the first ``k`` ranked definitions in ``path`` (each: file -> seed rank)."""
    rows = {r.qual: r for r in fview.in_file(path)}
    seeds = [h for h in hits if h.path == path][:k]
    callees: dict[str, int] = {}
    callers: dict[str, int] = {}
    for n, h in enumerate(seeds):
        row = rows.get(h.qual)
        if row is None:
            continue
        for target, _ in graph.callees(row) or []:
            if target.path != path:
                callees.setdefault(target.path, n)
        for caller, _ in graph.callers(row) or []:
            if caller.path != path:
                callers.setdefault(caller.path, n)
    # loose: by name alone (every call the seeds write, to each file defining that name, at most LOOSE_FILES of
    # them; every call site naming a seed, at most LOOSE_FILES calling files), no resolution
    loose_callees: dict[str, int] = {}
    loose_callers: dict[str, int] = {}
    seed_rows = [rows[h.qual] for h in seeds if h.qual in rows]
    calls = fview.calls_of([r.id for r in seed_rows])
    for n, row in enumerate(seed_rows):
        names = {c.name for c in calls.get(row.id, []) if c.via != "set"}
        for name, defs in fview.named(names).items():
            where = {d.path for d in defs if d.path != path and not view.is_test(d.path)}
            if 0 < len(where) <= LOOSE_FILES:
                for q in where:
                    loose_callees.setdefault(q, n)
        if row.kind != "class" and len(row.name) > 2:
            sites = fview.callers_of({row.name}).get(row.name, [])
            where = {d.path for d in fview.by_ids({i for i, _ in sites}).values()
                     if d.path != path and not view.is_test(d.path)}
            if 0 < len(where) <= LOOSE_FILES:
                for q in where:
                    loose_callers.setdefault(q, n)
    return {"seeds": [h.qual for h in seeds], "callees": callees, "callers": callers,
            "loose_callees": loose_callees, "loose_callers": loose_callers}


def ranked_at_base(tree: Path, mirror: Path, task: dict):
    """The task's base commit checked out in `tree` (brain initialised there once, the tree's own AGENTS.md left as
    git has it), the index refreshed, and the boot's two rankings of its text: (brain, boot, functions, files)."""
    import brain as brainlib
    from brain.search.rank_functions import locate_functions

    bc.checkout(tree, mirror, task["base_commit"])
    if not (tree / ".brain" / "brain.yml").is_file():
        had_agents = (tree / "AGENTS.md").exists()
        brainlib.init(tree)
        if not had_agents:
            (tree / "AGENTS.md").unlink(missing_ok=True)
        else:
            bc.git("checkout", "-q", "-f", "--", "AGENTS.md", cwd=tree)
    b = brainlib.open(tree)
    b.reindex()
    found, hits = locate_functions(b, task["problem_statement"], limit=20)
    return b, found, hits, b.locate(task["problem_statement"], limit=FILES).files


def run_repo(repo: str, tasks: list[dict], mirrors: Path, trees: Path, out) -> None:
    from brain.search.function_evidence import LiveGraph
    from brain.search.functions import FunctionView
    from brain.search.weights import shipped_weights

    mirror = locbench.git_dir(mirrors, repo, "calls_measure")
    tree = trees / "trees" / repo.replace("/", "+")
    F = shipped_weights().functions
    for task in tasks:
        gold = task["gold_files"]
        try:
            b, found, hits, ranked = ranked_at_base(tree, mirror, task)
            files = [h.path for h in ranked]
            view = b.index.code_view()
            fview = FunctionView(b.index.db)
            graph = LiveGraph(fview, view, F)
            t0 = time.process_time()
            top = files[0] if files else None
            link = links_of(fview, view, graph, hits, top, SEED_FNS) if top else {}
            second = links_of(fview, view, graph, hits, files[1], SEED_FNS) if len(files) > 1 else {}
            link_cpu = time.process_time() - t0
            fwd, back = view.import_graph()
            row = {"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": gold, "files": files,
                   "boot_files": [h.path for h in found.files], "fn": [h.key for h in hits[:10]],
                   "scores": [h.score for h in ranked], "fscores": [[h.key, h.score] for h in hits],
                   "link": link, "link2": second, "link_cpu": round(link_cpu, 4),
                   "imports": sorted(fwd.get(top, ())) if top else [],
                   "imported_by": sorted(back.get(top, ())) if top else [],
                   "nfiles": len(view.files)}
            # the top functions overall (any file), their callees/callers too
            overall = {"callees": {}, "callers": {}}
            rows_by = {}
            for n, h in enumerate(hits[:SEED_FNS]):
                if h.path not in rows_by:
                    rows_by[h.path] = {r.qual: r for r in fview.in_file(h.path)}
                r = rows_by[h.path].get(h.qual)
                if r is None:
                    continue
                for t, _ in graph.callees(r) or []:
                    if t.path != h.path:
                        overall["callees"].setdefault(t.path, n)
                for c, _ in graph.callers(r) or []:
                    if c.path != h.path:
                        overall["callers"].setdefault(c.path, n)
            row["overall"] = overall
        except Exception as exc:  # reported, not fatal
            row = {"id": task["instance_id"], "repo": repo, "gold": gold, "error": f"{type(exc).__name__}: {exc}"[:300]}
        out.write(json.dumps(row) + "\n")
        out.flush()


def report(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows = [r for r in rows if not r.get("error")]
    print(f"{len(rows)} tasks, {len({r['repo'] for r in rows})} repositories")
    c = Counter()
    # per link kind: (candidate at rank band, gold?) counted over tasks whose top file is gold and gold has 2+ files
    for cond in ("top gold, 2+ gold", "all tasks"):
        c = Counter()
        for r in rows:
            gold, files = set(r["gold"]), r["files"]
            if not files:
                continue
            if cond.startswith("top") and not (files[0] in gold and len(gold) > 1):
                continue
            top = files[0]
            rank = {p: i for i, p in enumerate(files)}
            kinds = {
                "callee": set(r["link"].get("callees", {})),
                "caller": set(r["link"].get("callers", {})),
                "import": set(r["imports"]),
                "imported_by": set(r["imported_by"]),
            }
            kinds["call(any)"] = kinds["callee"] | kinds["caller"]
            kinds["call-not-import"] = kinds["call(any)"] - kinds["import"] - kinds["imported_by"]
            kinds["fn-top3 call"] = set(r["overall"]["callees"]) | set(r["overall"]["callers"])
            kinds["loose callee"] = set(r["link"].get("loose_callees", {}))
            kinds["loose caller"] = set(r["link"].get("loose_callers", {}))
            kinds["loose(any)"] = kinds["loose callee"] | kinds["loose caller"]
            for p in files[1:]:
                band = "2-5" if rank[p] < 5 else "6-30" if rank[p] < 30 else "31-40"
                c[("base", band, p in gold)] += 1
                for k, s in kinds.items():
                    if p in s:
                        c[(k, band, p in gold)] += 1
            for k, s in kinds.items():
                s = s - {top}
                c[(k, "any", True)] += len(s & gold)
                c[(k, "any", False)] += len(s - gold)
                c[(k, "unranked", True)] += len((s & gold) - set(files))
                c[(k, "unranked", False)] += len((s - gold) - set(files))
            c[("gold-other", "n", True)] += len(gold - {top})
            c[("gold-other", "unranked", True)] += len(gold - {top} - set(files))
            c[("gold-other", "6-40", True)] += len({g for g in gold - {top} if g in rank and rank[g] >= 5})
            c[("tasks", "n", True)] += 1
        print(f"\n== {cond}: {c[('tasks', 'n', True)]} tasks, other gold files {c[('gold-other', 'n', True)]} "
              f"(at 6-40: {c[('gold-other', '6-40', True)]}, not in the 40: {c[('gold-other', 'unranked', True)]})")
        print(f"{'link':18} {'band':9} {'gold':>6} {'of':>6} {'prec':>6}")
        for k in ("base", "callee", "caller", "call(any)", "call-not-import", "import", "imported_by", "fn-top3 call",
                  "loose callee", "loose caller", "loose(any)"):
            for band in ("2-5", "6-30", "31-40", "any", "unranked"):
                g, n = c[(k, band, True)], c[(k, band, True)] + c[(k, band, False)]
                if n:
                    print(f"{k:18} {band:9} {g:6d} {n:6d} {g / n:6.1%}")
    # reach: of the fixed files outside the top five in tasks whose best file is fixed, how many each link names;
    # and the ceiling: tasks whose every fixed file would be in the top five if each linked one were put there
    links = {"call(any)": lambda r: {**r["link"].get("callees", {}), **r["link"].get("callers", {})},
             "fn-top3 call": lambda r: {**r["overall"]["callees"], **r["overall"]["callers"]},
             "loose(any)": lambda r: {**r["link"].get("loose_callees", {}), **r["link"].get("loose_callers", {})},
             "import": lambda r: set(r["imports"]), "imported_by": lambda r: set(r["imported_by"])}
    tasks, missing, reach, ceiling = reach_and_ceiling(rows, links)
    print(f"\n{tasks} tasks with the best file fixed and another fixed file outside the top five ({missing} files)")
    for k in links:
        print(f"  {k:14} names {reach[k]:3d} of them; all@5 ceiling (every linked fixed file put in the top five): "
              f"+{ceiling[k]} tasks")
    cpu = sorted(r["link_cpu"] for r in rows)
    print(f"\nlink CPU per task: median {cpu[len(cpu) // 2] * 1000:.1f} ms, p90 {cpu[int(len(cpu) * 0.9)] * 1000:.1f} ms, "
          f"max {cpu[-1] * 1000:.1f} ms")


def reach_and_ceiling(rows: list[dict], links: dict) -> tuple[int, int, Counter, Counter]:
    """(tasks, their missing files, reach, ceiling) of each link (``name -> fn(row)`` giving the files it names).

    Reach: of the fixed files outside the top five in tasks whose best file is fixed (and with two or more fixed
    files), how many each link names. Ceiling: the tasks whose every fixed file would be in the top five if each
    linked fixed file were put there (and nothing fixed pushed out)."""
    missing, tasks, reach, ceiling = 0, 0, Counter(), Counter()
    for r in rows:
        gold, files = set(r["gold"]), r["files"]
        if not files:
            continue
        named = {k: set(fn(r)) for k, fn in links.items()}
        for k, linked in named.items():
            kept = [g for g in files[:5] if g in gold] + [g for g in gold if g in linked and g in files]
            if not gold <= set(files[:5]) and gold <= set(kept) and len(set(kept)) <= 5:
                ceiling[k] += 1
        if files[0] not in gold or len(gold) < 2:
            continue
        out = [g for g in gold if g not in files[:5]]
        if not out:
            continue
        tasks += 1
        missing += len(out)
        for k, linked in named.items():
            reach[k] += sum(g in linked for g in out)
    return tasks, missing, reach, ceiling


def measure(args, run_one) -> int:
    """Run `run_one(repo, tasks, mirrors, trees, out)` over the drawn tasks of the chosen half, one JSON row
    per task appended to `--out`; repositories already in `--out` are skipped (a stopped run resumes)."""
    tasks = locbench.load_tasks(args.corpus)
    tasks = [t for t in tasks if calls_split.half(t["repo"]) == args.half]
    if args.repo:
        wanted = {r.lower() for r in args.repo}
        tasks = [t for t in tasks if t["repo"].lower() in wanted]
    reserved.refuse_reserved(sorted({t["repo"] for t in tasks}), reserved.read_reserved(args.reserved))
    drawn = cs.sample(tasks, args.per_repo, "corpus")
    os.environ.setdefault("BRAIN_HOME", str(args.trees / "brain-home"))
    done = set()
    if args.out.is_file():
        done = {json.loads(line)["repo"] for line in args.out.read_text().splitlines()}
    with args.out.open("a") as out:
        for repo, ts in drawn.items():
            if repo in done:
                continue
            t0 = time.perf_counter()
            run_one(repo, ts, args.mirrors.resolve(), args.trees.resolve(), out)
            print(f"{repo}: {len(ts)} tasks, {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--mirrors", type=Path)
    ap.add_argument("--reserved", type=Path, default=reserved.DEFAULT_RESERVED)
    ap.add_argument("--trees", type=Path)
    ap.add_argument("--half", choices=("tune", "held"), default="tune")
    ap.add_argument("--per-repo", type=int, default=10)
    ap.add_argument("--repo", action="append")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--report", type=Path)
    args = ap.parse_args()
    if args.report:
        report(args.report)
        return 0
    return measure(args, run_repo)


if __name__ == "__main__":
    sys.exit(main())
