"""Corpus benchmark: the task boot's file ranking on the training corpus, per language, with BM25 beside it.

The measurement of record for the ranking (issue 23). The corpus (bench/build_corpus.py: fix and feature
commits of 119 public repositories, 12 languages) gives per task a message, its base commit and the
non-test files the commit changed. A deterministic sample of `--per-repo` tasks per repository
(corpus_score.sample: seeded hash, then commit order) is run on ONE working tree per repository: a real
git checkout (`git clone --shared --no-checkout MIRROR`, then `git checkout --detach BASE` for each task,
oldest first), so HEAD is the task's base commit and `git log HEAD` holds the history up to it, never
after; `brain init` once, then `Brain.reindex()` per task re-reads only the files the checkout changed.
Each task is booted in process (`Brain.boot(text, budget=8000)`, the call `brain boot` makes) and scored:
the rank of every gold file in the boot's `files`, in context (every gold file named in the boot text),
boot tokens; BM25 over the same index (`locbench.bm25_files`) beside it. Per language and macro
(corpus_score): all@1/5/10, any@1/5, MRR. The functions too: each task's gold functions are the definitions
enclosing the lines the commit changed in its gold files (corpus_functions), scored as function Acc@1/5/10
(every gold function among the first k of the boot's `functions`) with BM25 over definition bodies beside it,
over the tasks that have any.

Leave-repositories-out cross-validation (`--folds`, default 5; corpus_score.assign_folds) splits the
sample by repository, stratified by language; the fold of each repository is in the results, and
fit_weights.py fits on the other folds and scores each held-out one. The hand-set weights fit nothing, so
for them every fold is already unseen: the benchmark reports their figures over the whole sample.

When the ranking can split its evidence from its weights (`brain.search.ranking.gather`), each task's
evidence is written in the same pass (bench/.cache/corpus/evidence/<owner>+<name>.jsonl) for the fitter.

    .venv/bin/python bench/bench_corpus.py --corpus CORPUS.jsonl --mirrors DIR [--per-repo 60] [--jobs 1]
        [--repo owner/name ...] [--language Go ...] [--folds 5] [--out bench/results/corpus.json] [--fresh]

Trees, indexes and per-repository rows are cached under bench/.cache/corpus/ (gitignored; rows are reused
only for the same tasks and the same ranking code: `--fresh` ignores them). Refuses reserved and
development-set repositories (bench/reserved.py) before reading any mirror. Nothing fetched is committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # locbench, reserved, corpus_score beside this script

import corpus_functions as cf  # noqa: E402
import corpus_score as cs  # noqa: E402
import locbench  # noqa: E402
import reserved  # noqa: E402

__all__ = ["code_fingerprint", "checkout", "missing_blobs", "leave_out", "run_repo", "summarize", "function_summary",
           "main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "corpus"
DEFAULT_CORPUS = HERE / "corpus" / "out" / "corpus.jsonl"
# measured (--per-repo 10, 1,179 tasks): 73 s CPU for the 119 first indexes, then 0.31 s CPU per task
# (refresh, boot, BM25), so every task of the corpus (at most 60 per repository, 6,771) is about 36 minutes
# of CPU: within the ~40 minutes the benchmark of record may take
DEFAULT_PER_REPO = 60
KEYS = ("brain", "bm25")
BM25_LIMIT = 50


# the bench modules a row depends on besides the package (its gold functions, BM25, the scoring)
ROW_SOURCES = ("bench_corpus.py", "corpus_functions.py", "locbench.py")


def code_fingerprint() -> str:
    """A hash of every source a cached row depends on: rows are reused only under it.

    The whole package, not chosen folders: the extractors the index is built with (``pyast.py``,
    ``lazyre.py``) live outside ``search/``, and a row kept across a change of theirs measured old code.
    """
    h = hashlib.sha256()
    src = ROOT / "src" / "brain"
    paths = [(p.relative_to(src).as_posix(), p) for p in sorted(src.rglob("*"))
             if p.suffix in (".py", ".json") and "__pycache__" not in p.parts]
    paths += [(f"bench/{name}", HERE / name) for name in ROW_SOURCES]
    for name, path in paths:
        h.update(name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def git(*args: str, cwd: Path | None = None, protocols: str = "") -> str:
    """git with the project's neutral settings (no hooks, no fsmonitor, no pager): a fetched tree runs nothing."""
    from brain.gitsafe import git_binary, neutral_args, safe_env

    out = subprocess.run([git_binary(), *neutral_args(), *args], cwd=cwd, capture_output=True, text=True,
                         env=safe_env(None, protocols=protocols), stdin=subprocess.DEVNULL, errors="replace")
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {out.stderr.strip()[:300]}")
    return out.stdout


def checkout(tree: Path, mirror: Path, commit: str) -> None:
    """``tree`` a real checkout of ``mirror`` whose HEAD is ``commit`` (detached; files the last task's
    `brain init` touched are put back, `.brain/` stays: it is untracked and excluded)."""
    if not (tree / ".git").is_dir():
        shutil.rmtree(tree, ignore_errors=True)
        tree.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", "--shared", "--no-checkout", str(mirror), str(tree), protocols="file")
        with open(tree / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
            f.write("/.brain/\n")
    try:
        git("checkout", "-q", "-f", "--detach", commit, cwd=tree)
    except RuntimeError as exc:
        if "unable to read sha1 file" not in str(exc) and "invalid object" not in str(exc):
            raise
        # a snapshot may lack its largest blobs (data files, binaries): check the rest out, sparse
        leave_out(tree, missing_blobs(tree, commit))
        git("checkout", "-q", "-f", "--detach", commit, cwd=tree)


def missing_blobs(tree: Path, commit: str) -> list[str]:
    """The paths of ``commit`` whose blob the mirror does not hold."""
    listing = git("ls-tree", "-r", "-z", commit, cwd=tree)
    entries = []
    for item in listing.split("\0"):
        head, _, path = item.partition("\t")
        parts = head.split()
        if len(parts) == 3 and parts[1] == "blob":
            entries.append((parts[2], path))
    from brain.gitsafe import git_binary, neutral_args, safe_env

    out = subprocess.run([git_binary(), *neutral_args(), "cat-file", "--batch-check"], cwd=tree, capture_output=True,
                         text=True, env=safe_env(None), input="".join(sha + "\n" for sha, _ in entries), errors="replace")
    missing = {line.split()[0] for line in out.stdout.splitlines() if line.endswith(" missing")}
    return sorted(path for sha, path in entries if sha in missing)


def leave_out(tree: Path, paths: list[str]) -> None:
    """A non-cone sparse checkout of everything but ``paths`` (glob characters escaped, so each names one file)."""
    def literal(path: str) -> str:
        return "".join("\\" + c if c in "*?[]\\!#" else c for c in path)

    git("config", "core.sparseCheckout", "true", cwd=tree)
    git("config", "core.sparseCheckoutCone", "false", cwd=tree)
    (tree / ".git" / "info" / "sparse-checkout").write_text("/*\n" + "".join(f"!/{literal(p)}\n" for p in paths),
                                                             encoding="utf-8")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _gather(view, text: str):
    """The task's evidence as JSON when the ranking splits evidence from weights, else None."""
    return locbench.gather_evidence(view, text)


def run_repo(job: tuple) -> dict:
    """All sampled tasks of one repository on its one tree; returns {"rows", "cpu", "wall", "prepare_cpu"}."""
    repo, tasks, mirrors, trees, fingerprint, fresh = job
    name = repo.replace("/", "+")
    rows_file = trees / "rows" / f"{name}.json"
    ids = [t["instance_id"] for t in tasks]
    if not fresh and rows_file.is_file():
        cached = json.loads(rows_file.read_text())
        if cached.get("fingerprint") == fingerprint and cached.get("ids") == ids and \
                not any(r.get("error") for r in cached["rows"]) and all("fgold" in r for r in cached["rows"]):
            return cached
    import brain as brainlib
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import gather_functions
    from brain.search.tokenize import tokens

    mirror = locbench.git_dir(mirrors, repo, "bench_corpus")
    tree = trees / "trees" / name
    evidence_file = trees / "evidence" / f"{name}.jsonl"
    evidence_file.parent.mkdir(parents=True, exist_ok=True)
    evidence_out = []
    started, cpu0 = time.perf_counter(), _cpu()
    rows, prepare_cpu = [], None
    for task in tasks:
        text, gold = task["problem_statement"], task["gold_files"]
        c0 = _cpu()
        try:
            checkout(tree, mirror, task["base_commit"])
            if not (tree / ".brain" / "brain.yml").is_file():
                had_agents = (tree / "AGENTS.md").exists()
                brainlib.init(tree)
                if not had_agents:
                    (tree / "AGENTS.md").unlink(missing_ok=True)  # the tree stays as the commit has it
                else:
                    git("checkout", "-q", "-f", "--", "AGENTS.md", cwd=tree)
            b = brainlib.open(tree)
            b.reindex()
            c1 = _cpu()
            prepare_cpu = c1 - c0 if prepare_cpu is None else prepare_cpu
            result = b.boot(text, budget=locbench.BUDGET, record=False).to_dict()
            c2 = _cpu()
            view = b.index.code_view()
            bm25 = locbench.bm25_files(view, text, BM25_LIMIT)
            evidence = _gather(view, text)
            fview = FunctionView(b.index.db)
            fgold = cf.gold_functions(fview, git, tree, task["base_commit"], task["commit"], gold)
            franks = cf.function_ranks(fgold, [f["id"] for f in result["functions"]], fview,
                                       tokens(text, stop=True)) if fgold else {}
            if evidence is not None:
                item = {"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": gold,
                        "evidence": evidence}
                if fgold:
                    # the definitions' evidence on the boot's own file ranking (memoized per text): what
                    # fit_weights.py --functions re-ranks under other function weights (`combine_functions`)
                    found = b.locate(text, limit=b.settings.get("search.boot_files") or 20)
                    item.update(fgold=fgold, fboot=[f["id"] for f in result["functions"]],
                                functions=gather_functions(fview, view, text, found).to_json())
                evidence_out.append(item)
            rows.append({
                "id": task["instance_id"], "repo": repo, "lang": task["language"], "base": task["base_commit"],
                "gold": gold, "brain": cs.gold_ranks(gold, result["files"]),
                "ctx": all(g in result["text"] for g in gold), "code": bool(set(gold) & set(cs.code_files(result))),
                "bm25": cs.gold_ranks(gold, bm25),
                "indexed": [g in view.files and not view.is_test(g) for g in gold], "tokens": result["tokens"],
                "top": result["files"][:10], "fgold": fgold, **franks,
                "ftop": [f["id"] for f in result["functions"][:5]],
                "refresh_cpu": round(c1 - c0, 3), "boot_cpu": round(c2 - c1, 3),
            })
        except Exception as exc:  # a tree brain cannot check out or index is reported, not fatal
            rows.append({"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": gold,
                         "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
    if evidence_out:
        tmp = evidence_file.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in evidence_out))
        tmp.replace(evidence_file)
    else:
        evidence_file.unlink(missing_ok=True)  # no stale evidence of an earlier run beside these rows
    out = {"repo": repo, "fingerprint": fingerprint, "ids": ids, "rows": rows,
           "cpu": round(_cpu() - cpu0, 2), "wall": round(time.perf_counter() - started, 2),
           "prepare_cpu": round(prepare_cpu or 0.0, 2)}
    rows_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = rows_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(out) + "\n")
    tmp.replace(rows_file)
    return out


def summarize(rows: list[dict], folds: dict[str, int]) -> dict:
    """Per language, macro and per fold (ours and BM25) over the rows that ran; failed rows counted apart."""
    good = [r for r in rows if not r.get("error")]
    per_lang = cs.by_language(good, KEYS)
    per_fold = {}
    for f in sorted(set(folds.values())):
        part = [r for r in good if folds[r["repo"]] == f]
        langs = cs.by_language(part, KEYS)
        per_fold[str(f)] = {"repos": sorted({r["repo"] for r in part}), "macro": cs.macro(langs, KEYS)}
    toks = [r["tokens"] for r in good]
    return {"per_lang": per_lang, "macro": cs.macro(per_lang, KEYS), "per_fold": per_fold,
            "functions": function_summary(good, folds),
            "errors": [r["id"] for r in rows if r.get("error")],
            "gold_not_indexed": sum(not all(r["indexed"]) for r in good),
            "tokens": {"max": max(toks, default=0), "over_budget": sum(t > locbench.BUDGET for t in toks)}}


def function_summary(rows: list[dict], folds: dict[str, int]) -> dict:
    """Function Acc@k (all@k: every gold function in the first k; any@k: one of them) per language, macro
    and per fold, ours and BM25 over bodies, over the tasks with function gold (corpus_functions)."""
    part = [r for r in rows if r.get("fgold")]
    per_lang = cs.by_language(part, cf.FN_KEYS)
    per_fold = {}
    for f in sorted(set(folds.values())):
        langs = cs.by_language([r for r in part if folds[r["repo"]] == f], cf.FN_KEYS)
        per_fold[str(f)] = {"tasks": sum(v["tasks"] for v in langs.values()), "macro": cs.macro(langs, cf.FN_KEYS)}
    return {"tasks": len(part), "without_gold": len(rows) - len(part), "per_lang": per_lang,
            "macro": cs.macro(per_lang, cf.FN_KEYS), "per_fold": per_fold}


FN_TABLE = ("all@1", "all@5", "all@10", "any@5")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("BRAIN_BENCH_CORPUS", DEFAULT_CORPUS)),
                    help="the corpus JSONL (default $BRAIN_BENCH_CORPUS or bench/corpus/out/corpus.jsonl)")
    ap.add_argument("--mirrors", type=Path, default=os.environ.get("BRAIN_BENCH_MIRRORS"),
                    help="folder of bare mirrors, <owner>+<name>/repo (default $BRAIN_BENCH_MIRRORS)")
    ap.add_argument("--per-repo", type=int, default=DEFAULT_PER_REPO, help="tasks per repository (seeded draw)")
    ap.add_argument("--repo", action="append", help="only this repository (repeatable)")
    ap.add_argument("--language", action="append", help="only this language (repeatable)")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds, grouped by repository")
    ap.add_argument("--seed", default="corpus", help="seed of the task draw and the fold assignment")
    ap.add_argument("--jobs", type=int, default=1, help="repositories run in parallel processes")
    ap.add_argument("--trees", type=Path, default=CACHE, help="cache of trees, indexes, rows and evidence")
    ap.add_argument("--fresh", action="store_true", help="re-run repositories whose rows are cached")
    ap.add_argument("--reserved", type=Path, default=reserved.DEFAULT_RESERVED)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "corpus.json")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON instead of the table")
    args = ap.parse_args(argv)
    if not args.corpus.is_file():
        ap.error(f"no corpus at {args.corpus} (build it with bench/build_corpus.py, or give --corpus)")
    if not args.mirrors:
        ap.error("give the mirror folder with --mirrors or BRAIN_BENCH_MIRRORS")
    if args.per_repo < 1 or args.jobs < 1:
        ap.error("--per-repo and --jobs must be at least 1")
    tasks = locbench.load_tasks(args.corpus)
    if args.repo:
        wanted = {r.lower() for r in args.repo}
        tasks = [t for t in tasks if t["repo"].lower() in wanted]
    if args.language:
        wanted = {lang.lower() for lang in args.language}
        tasks = [t for t in tasks if t["language"].lower() in wanted]
    if not tasks:
        ap.error("no task matches")
    try:
        reserved.refuse_reserved(sorted({t["repo"] for t in tasks}), reserved.read_reserved(args.reserved))
    except reserved.BenchRefusal as exc:
        print(f"bench_corpus: {exc}", file=sys.stderr)
        return exc.exit_code
    drawn = cs.sample(tasks, args.per_repo, args.seed)
    language = {repo: ts[0]["language"] for repo, ts in drawn.items()}
    folds = cs.assign_folds(language, args.folds, args.seed)
    mirrors = Path(args.mirrors).expanduser().resolve()
    for repo in drawn:
        locbench.git_dir(mirrors, repo, "bench_corpus")  # fail early on a missing mirror
    os.environ.setdefault("BRAIN_HOME", str(args.trees / "brain-home"))
    fingerprint = code_fingerprint()
    jobs = [(repo, ts, mirrors, args.trees.resolve(), fingerprint, args.fresh) for repo, ts in drawn.items()]
    started, load0 = time.perf_counter(), os.getloadavg()[0]
    results = []
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            for res in pool.imap_unordered(run_repo, jobs, chunksize=1):
                results.append(res)
                print(f"{res['repo']}: {len(res['rows'])} tasks, cpu {res['cpu']} s", flush=True)
    else:
        for job in jobs:
            res = run_repo(job)
            results.append(res)
            print(f"{res['repo']}: {len(res['rows'])} tasks, cpu {res['cpu']} s", flush=True)
    wall = time.perf_counter() - started
    rows = sorted((r for res in results for r in res["rows"]), key=lambda r: (r["repo"], r["id"]))
    summary = summarize(rows, folds)
    summary.update({
        "per_repo": args.per_repo, "seed": args.seed, "folds": args.folds, "fold_of": folds,
        "repositories": len(drawn), "tasks": len(rows), "fingerprint": fingerprint, "budget": locbench.BUDGET,
        "cpu_seconds": round(sum(res["cpu"] for res in results), 1),
        "cpu_seconds_this_run": round(os.times().children_user + os.times().children_system + time.process_time(), 1),
        "wall_seconds": round(wall, 1), "load": [round(load0, 1), round(os.getloadavg()[0], 1)],
        "repo_cpu": {res["repo"]: res["cpu"] for res in results},
    })
    locbench.write_results(args.out, summary, rows)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{len(rows)} tasks, {len(drawn)} repositories, {args.per_repo} per repository; cpu "
              f"{summary['cpu_seconds']} s (rows' own), wall {wall:.0f} s, load {load0:.1f} -> {os.getloadavg()[0]:.1f}")
        print(cs.table(summary["per_lang"], summary["macro"], {"brain": "ours", "bm25": "BM25"}))
        fn = summary["functions"]
        print(f"functions: {fn['tasks']} tasks with function gold ({fn['without_gold']} without); all@k = Acc@k")
        print(cs.table(fn["per_lang"], fn["macro"], {"fbrain": "function", "fbm25": "BM25 bodies"}, FN_TABLE, None))
        print(f"errors: {len(summary['errors'])}; tasks with a gold file outside the index: "
              f"{summary['gold_not_indexed']}; boot tokens max {summary['tokens']['max']} "
              f"(over budget: {summary['tokens']['over_budget']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
