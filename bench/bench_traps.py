"""Generic traps benchmark: do generated, amalgamated, vendored files and tool scripts stay out of the top 5?

For repositories where such files exist (single-header copies, C/C++ projects with Python and shell
tool scripts, Go projects with generated code, vendored folders), a sample of the corpus's tasks
(`bench/build_corpus.py`'s JSONL: a fix commit's message -> the non-test files it changed, at its
parent) is ranked twice on the same index, with the trap rules off (the ranking before them) and on
(``brain.search.traps``), beside BM25 in the same run; optionally the six-language development set
too, the tasks these rules were not designed on. The ranking is ``locate()`` on the code index
(`brain init` + reindex per tree, no cards): the same ranking the task boot lists.

    .venv/bin/python bench/bench_traps.py --mirrors DIR --corpus FILE --trees DIR [--per-repo 6]
        [--repo owner/name ...] [--dev] [--dev-limit N] [--polluters] [--reindex] [--retrap] [--jobs N]

Scores: all@5 (every gold file in the top 5), any@5 (one at least), per repository and as a macro
average over repositories. ``--polluters`` lists the non-gold files met most often in the top 5
before and after (a trap is a file in the top 5 of many tasks that no fix touches). Each version of
brain needs its own trees folder (the index inside `.brain` is version-specific). Nothing fetched is
committed; results go to bench/results/traps.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import locbench  # beside this script
import reserved  # beside this script
from locbench import bm25_files, load_tasks, shared_tasks, write_results

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
# repositories whose trees hold the traps: single-header copies (doctest, toml++, CLI11), C projects with
# Python/shell/Perl tool scripts and vendored `deps/` (curl, libgit2, libuv, jemalloc), Go projects with
# generated files (go-zero, gorm)
TRAP_REPOS = ("doctest/doctest", "marzer/tomlplusplus", "CLIUtils/CLI11", "curl/curl", "libgit2/libgit2",
              "libuv/libuv", "jemalloc/jemalloc", "hashicorp/hcl")
K = 5


def sample(tasks: list[dict], n: int) -> list[dict]:
    """``n`` tasks spread evenly over the repository's history (deterministic)."""
    tasks = sorted(tasks, key=lambda t: (t.get("date", ""), t["instance_id"]))
    if len(tasks) <= n:
        return tasks
    step = len(tasks) / n
    return [tasks[int(i * step)] for i in range(n)]


def ranks(gold: list[str], files: list[str]) -> list[int | None]:
    position = {f: i + 1 for i, f in reversed(list(enumerate(files)))}
    return [position.get(g) for g in gold]


def run_tree(job: tuple) -> list[dict]:
    """Index one tree and rank its tasks with the traps off and on."""
    mirrors, trees, repo, commit, tasks, reindex, retrap = job
    import brain as brainlib
    from brain.search import traps
    from brain.search.locate import locate

    try:
        folder = locbench.extract_tree(locbench.git_dir(mirrors, repo, "bench_traps"), commit,
                                       trees / f"{repo.replace('/', '+')}@{commit}", "bench_traps")
    except (SystemExit, subprocess.CalledProcessError) as exc:  # a mirror missing objects (a partial snapshot): its tasks are left out, said so
        print(f"left out {len(tasks)} task(s) of {repo}@{commit[:12]}: {exc}", file=sys.stderr)
        return []
    if reindex:
        (folder / ".brain" / "runtime" / "index.db").unlink(missing_ok=True)
    b = brainlib.init(folder)
    started = time.perf_counter()
    b.reindex()
    if retrap:  # the traps judged anew on the stored index, after a change to traps.py's rules
        from brain.search.code import transaction

        db = b.index.db
        paths = [p for (p,) in db.execute("SELECT path FROM code_files WHERE is_test = 0")]
        read = {p: traps.read_facts(p, (folder / p).read_text(encoding="utf-8", errors="replace")) for p in paths
                if (folder / p).is_file()}
        with transaction(db):
            traps.record(db, read, paths, folder)
    index_seconds = time.perf_counter() - started
    view = b.index.code_view()
    rows = []
    for task in tasks:
        text = task["problem_statement"]
        gold = [g for g in task["gold_files"] if g in view.files and not view.is_test(g)] or task["gold_files"]
        found = {}
        for name, on in (("before", False), ("after", True)):
            traps.ENABLED = on
            try:
                found[name] = locate(view, text, limit=20).paths
            finally:
                traps.ENABLED = True
        bm25 = bm25_files(view, text, 20)
        rows.append({"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": gold,
                     "before": ranks(gold, found["before"]), "after": ranks(gold, found["after"]),
                     "bm25": ranks(gold, bm25), "top_before": found["before"][:K], "top_after": found["after"][:K],
                     "index_seconds": round(index_seconds, 2)})
    return rows


def score(rows: list[dict], key: str) -> dict[str, float]:
    n = len(rows) or 1
    return {"all@5": sum(all(r is not None and r <= K for r in row[key]) for row in rows) / n,
            "any@5": sum(any(r is not None and r <= K for r in row[key]) for row in rows) / n}


def report(rows: list[dict], label: str) -> dict:
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(row)
    out = {"label": label, "repos": {}}
    print(f"\n## {label}: {len(rows)} tasks on {len(by_repo)} repositories")
    print("| repository | tasks | before all@5 | after all@5 | BM25 all@5 | before any@5 | after any@5 | BM25 any@5 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for repo, rs in sorted(by_repo.items()):
        s = {key: score(rs, key) for key in ("before", "after", "bm25")}
        out["repos"][repo] = {"tasks": len(rs), **s}
        print(f"| {repo} | {len(rs)} | " + " | ".join(f"{s[k]['all@5']:.2f}" for k in ("before", "after", "bm25"))
              + " | " + " | ".join(f"{s[k]['any@5']:.2f}" for k in ("before", "after", "bm25")) + " |")
    macro = {key: {m: sum(r[key][m] for r in out["repos"].values()) / max(1, len(out["repos"]))
                   for m in ("all@5", "any@5")} for key in ("before", "after", "bm25")}
    out["macro"] = macro
    print(f"| macro | {len(rows)} | " + " | ".join(f"{macro[k]['all@5']:.2f}" for k in ("before", "after", "bm25"))
          + " | " + " | ".join(f"{macro[k]['any@5']:.2f}" for k in ("before", "after", "bm25")) + " |")
    changed = [r for r in rows if r["before"] != r["after"]]
    print(f"tasks whose gold ranks changed: {len(changed)}")
    return out


def polluters(rows: list[dict]) -> None:
    """The non-gold files met most often in the top 5, before and after, per repository."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(row)
    for repo, rs in sorted(by_repo.items()):
        for key in ("top_before", "top_after"):
            seen = Counter(p for r in rs for p in r[key] if p not in r["gold"])
            common = [f"{p} ({n})" for p, n in seen.most_common(4) if n >= max(2, len(rs) // 3)]
            print(f"{repo} {key[4:]}: {', '.join(common) or '-'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default=os.environ.get("BRAIN_BENCH_MIRRORS"), help="folder of bare git mirrors")
    ap.add_argument("--corpus", help="the corpus JSONL (bench/build_corpus.py's output)")
    ap.add_argument("--trees", required=True, help="folder for this run's extracted trees")
    ap.add_argument("--repo", action="append", help="only this repository (repeatable; default: the trap repositories)")
    ap.add_argument("--per-repo", type=int, default=6, help="tasks per repository, spread over its history")
    ap.add_argument("--dev", action="store_true", help="also the six-language development set")
    ap.add_argument("--dev-limit", type=int, help="only the first N development tasks of each language")
    ap.add_argument("--polluters", action="store_true", help="list the non-gold files most often in the top 5")
    ap.add_argument("--reindex", action="store_true", help="rebuild each tree's code index from scratch")
    ap.add_argument("--retrap", action="store_true", help="judge the traps anew on each stored index (each file's banner and forward declarations read again)")
    ap.add_argument("--jobs", type=int, default=1, help="trees indexed and ranked in parallel")
    ap.add_argument("--out", default=str(HERE / "results" / "traps.json"))
    args = ap.parse_args(argv)
    if not args.mirrors:
        ap.error("give the mirror folder with --mirrors or BRAIN_BENCH_MIRRORS")
    if not args.corpus and not args.dev:
        ap.error("give --corpus, --dev or both")
    mirrors = Path(args.mirrors).expanduser().resolve()
    trees = Path(args.trees).expanduser().resolve()
    os.environ.setdefault("BRAIN_HOME", str(CACHE / "brain-home"))
    sets: dict[str, list[dict]] = {}
    if args.corpus:
        wanted = args.repo or list(TRAP_REPOS)
        try:
            reserved.refuse_reserved(wanted, reserved.read_reserved(reserved.DEFAULT_RESERVED))
        except reserved.BenchRefusal as exc:
            ap.error(str(exc))
        by_repo: dict[str, list[dict]] = defaultdict(list)
        for task in load_tasks(args.corpus):
            if task["repo"] in wanted:
                by_repo[task["repo"]].append(task)
        sets["corpus (chosen repositories)" if args.repo else "corpus (trap repositories)"] = [t for repo in sorted(by_repo) for t in sample(by_repo[repo], args.per_repo)]
    if args.dev:
        dev = load_tasks(shared_tasks("multilang-dev.jsonl"))
        if args.dev_limit:
            taken: dict[str, int] = defaultdict(int)
            kept = []
            for t in dev:
                if taken[t["language"]] < args.dev_limit:
                    taken[t["language"]] += 1
                    kept.append(t)
            dev = kept
        sets["six-language development set"] = dev
    started = time.perf_counter()
    summary: dict = {"sets": {}}
    all_rows = []
    for label, tasks in sets.items():
        by_tree: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for task in tasks:
            by_tree[(task["repo"], task["base_commit"])].append(task)
        jobs = [(mirrors, trees, repo, commit, ts, args.reindex, args.retrap) for (repo, commit), ts in sorted(by_tree.items())]
        if args.jobs > 1:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
                batches = pool.map(run_tree, jobs, chunksize=1)
        else:
            batches = [run_tree(job) for job in jobs]
        rows = sorted((r for batch in batches for r in batch), key=lambda r: r["id"])
        summary["sets"][label] = report(rows, label)
        if args.polluters:
            polluters(rows)
        all_rows.extend(rows)
    cpu = time.process_time()
    wall = time.perf_counter() - started
    summary.update(wall_seconds=round(wall, 1), cpu_seconds=round(cpu, 1), load=os.getloadavg()[0])
    print(f"\nwall {wall:.0f} s, CPU {cpu:.0f} s (this process), load {os.getloadavg()[0]:.1f}")
    write_results(args.out, summary, all_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
