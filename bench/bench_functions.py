"""Function-level localization and reads per task: does the boot hand over the code a task is about?

For each task of ../shared/bench/swe-lite-dev.jsonl that carries `gold_functions` (the
functions, methods or classes the real fix changed, as `path::Qualified.name`), on the
PyPI source release the report was filed against: `brain init` + `brain map` + the index
once per release, then a boot with the report as the task under an 8,000-token budget.

Scores, brain against baselines measured in the same run:

* function Acc@1/5/10: every gold function among the first k of the boot's `functions`;
  beside an identifier-aware BM25 over every function and class body (tests excluded);
* function in context: every gold function's code is in the boot text (whole, or the
  excerpt a large definition gets), and the share where all of them are whole;
* reads per task (seed 004's "read_file per task halved"): a scripted reader starts from
  the boot and opens files in the order the boot suggests (the ranked functions' files,
  then the boot's `files`, then BM25 order) until it has seen the code of every gold
  function; code shown whole in the boot counts as seen (an excerpt does not). A second
  brain reader follows the boot's `files` alone (then BM25), for comparison. The baseline reader starts from
  the same task with no boot and opens files in BM25 order. Reported: reads per task
  (mean, p50, p90) and tokens read (files opened; brain also with its boot's tokens);
* boot tokens (max, over budget) and boot seconds; with `--cli N`, the median seconds of
  `brain boot --task-file ... --json` as a CLI process over the first N tasks.

    .venv/bin/python bench/bench_functions.py                 # all tasks, in-process boots
    .venv/bin/python bench/bench_functions.py --cli 20        # plus 20 boots as CLI processes
    git archive COMMIT src | tar -x -C /tmp/before            # the code before a change, to compare CLI time
    .venv/bin/python bench/bench_functions.py --cli 20 --cli-baseline-src /tmp/before/src

Releases are shared with bench_localization.py (bench/.cache/sdists), each run on its own
hard-linked copy (bench/.cache/functions, or the folder `--trees` names: a private one keeps another
checkout's index out of the measurement); results go to bench/results/functions.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_localization import BUDGET, CACHE, DEFAULT_TASKS, prepare, workspace_for  # noqa: E402
from locbench import EVIDENCE, load_tasks, pick_tasks, write_evidence, write_results  # noqa: E402

KS = (1, 5, 10)


def rank_all(gold: list[str], ranked: list[str]) -> int | None:
    """The rank at which the last gold function appears (None when one is missing)."""
    ranks = [ranked.index(g) + 1 if g in ranked else None for g in gold]
    return None if None in ranks else max(ranks)


def reads_needed(gold: list[str], seen: set[str], order: list[str]) -> tuple[int, list[str]]:
    """Files opened in ``order`` until every gold function not yet ``seen`` has had its file opened."""
    wanted = {g.split("::", 1)[0] for g in gold if g not in seen}
    opened: list[str] = []
    for path in order:
        if not wanted:
            break
        if path in opened:
            continue
        opened.append(path)
        wanted.discard(path)
    return len(opened), opened


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def spread(values: list[float]) -> dict:
    return {"mean": round(statistics.fmean(values), 3), "p50": percentile(values, 0.5), "p90": percentile(values, 0.9)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS), help="the JSONL task file")
    ap.add_argument("--limit", type=int, help="only the first N tasks")
    ap.add_argument("--only", help="only tasks whose instance_id contains this")
    ap.add_argument("--cli", type=int, default=0, metavar="N", help="also time N boots as `brain boot` CLI processes")
    ap.add_argument("--cli-baseline-src", metavar="DIR",
                    help="with --cli: also time each boot with the `brain` package found in DIR (e.g. an earlier "
                         "commit's src/ from `git archive COMMIT src | tar -x -C OUT`), interleaved, for a ratio")
    ap.add_argument("--trees", help="folder for this run's copies of the releases (default bench/.cache/functions; "
                                    "a private one keeps another checkout's index out of the measurement)")
    ap.add_argument("--misses", action="store_true", help="print the tasks whose gold functions are not all in the top 10")
    ap.add_argument("--out", default=str(HERE / "results" / "functions.json"))
    ap.add_argument("--evidence", default=str(EVIDENCE / "functions.jsonl"),
                    help="per-task function evidence (`gather_functions`, unit weights) for fit_weights.py --functions "
                         "(JSONL; '' writes none)")
    args = ap.parse_args(argv)

    os.environ.setdefault("BRAIN_HOME", str(CACHE / "brain-home"))
    import brain as brainlib
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import combine_functions, gather_functions
    from brain.search.tokenize import tokens
    from brain.tokens import estimate_tokens

    tasks = pick_tasks([t for t in load_tasks(args.tasks) if t.get("gold_functions")], args.only, args.limit)
    by_release: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        by_release[task["pypi"]].append(task)

    rows, cli_seconds, cli_baseline, evidence_out = [], [], [], []
    tmp = (Path(args.trees) if args.trees else CACHE) / "tmp-functions"
    tmp.mkdir(parents=True, exist_ok=True)
    for pypi in sorted(by_release):
        folder = workspace_for(pypi, Path(args.trees) if args.trees else CACHE / "functions")
        prepare(folder, False)
        b = brainlib.open(folder)
        index = b.index
        fview, cview = FunctionView(index.db), index.code_view()
        sizes: dict[str, int] = {}

        def size(path: str) -> int:
            if path not in sizes:
                try:
                    sizes[path] = estimate_tokens((folder / path).read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    sizes[path] = 0
            return sizes[path]

        source_files = sorted(p for p, (_, test) in cview.files.items() if not test)
        for task in by_release[pypi]:
            text, gold = task["problem_statement"], task["gold_functions"]
            started = time.perf_counter()
            result = brainlib.open(folder).boot(text, budget=BUDGET, record=False).to_dict()
            seconds = time.perf_counter() - started
            ranked = [f["id"] for f in result["functions"]]
            query = tokens(text, stop=True)
            ids = [i for i, _ in fview.bm25(query, 50)]
            defs = fview.by_ids(ids)
            bm25 = [defs[i].key for i in ids if i in defs]
            shown = {f["id"]: f["code"] for f in result["functions"] if f["code"]}
            bm25_files = [p for p, _ in cview.bm25(query, len(source_files), body_only=True)]
            baseline_order = bm25_files + [p for p in source_files if p not in set(bm25_files)]
            boot_order = list(dict.fromkeys([f["path"] for f in result["functions"]] + result["files"] + baseline_order))
            seen = {g for g in gold if shown.get(g) == "whole"}
            brain_reads, brain_opened = reads_needed(gold, seen, boot_order)
            files_reads, _ = reads_needed(gold, seen, list(dict.fromkeys(result["files"] + baseline_order)))
            base_reads, base_opened = reads_needed(gold, set(), baseline_order)
            row = {
                "id": task["instance_id"], "release": pypi, "gold": gold,
                "brain": rank_all(gold, ranked), "bm25": rank_all(gold, bm25),
                "in_context": all(g in shown for g in gold), "whole_in_context": all(shown.get(g) == "whole" for g in gold),
                "reads": brain_reads, "reads_files_order": files_reads, "reads_baseline": base_reads,
                "tokens_read": sum(size(p) for p in brain_opened), "tokens_read_baseline": sum(size(p) for p in base_opened),
                "boot_tokens": result["tokens"], "seconds": round(seconds, 4), "top": ranked[:5],
            }
            rows.append(row)
            if args.evidence:
                # the boot's own file ranking (memoized per text) and the definitions' evidence gathered on it:
                # fit_weights.py --functions re-ranks it under any weights (`combine_functions`) without the index
                b2 = brainlib.open(folder)
                found = b2.locate(text, limit=b2.settings.get("search.boot_files") or 20)
                ev = gather_functions(fview, cview, text, found)
                same = [h.key for h in combine_functions(ev, limit=len(ranked) or 20)] == ranked
                evidence_out.append({"id": row["id"], "repo": "django/django", "lang": "Python", "gold": gold,
                                     "boot": ranked, "boot_equal": same, "files": found.paths[:20],
                                     "evidence": ev.to_json()})
            if args.misses and (row["brain"] is None or row["brain"] > 10):
                # where each gold function's file stands in the boot's files: a file-ranking miss or a wrong function
                files = [result["files"].index(g.split("::", 1)[0]) + 1 if g.split("::", 1)[0] in result["files"] else None
                         for g in gold]
                print(f"{row['id']} rank={row['brain']} bm25={row['bm25']} gold={gold} gold_file_ranks={files} "
                      f"top={ranked[:3]}")
            if len(cli_seconds) < args.cli:
                task_file = tmp / "task.txt"
                task_file.write_text(text, encoding="utf-8")
                cmd = [sys.executable, "-m", "brain", "-C", str(folder), "boot", "--task-file", str(task_file),
                       "--budget", str(BUDGET), "--json", "--no-record"]
                started = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True)
                cli_seconds.append(time.perf_counter() - started)
                if args.cli_baseline_src:
                    env = {**os.environ, "PYTHONPATH": str(Path(args.cli_baseline_src).resolve())}
                    started = time.perf_counter()
                    subprocess.run(cmd, capture_output=True, check=True, env=env)
                    cli_baseline.append(time.perf_counter() - started)

    n = len(rows)

    def acc(key: str) -> dict:
        return {f"acc@{k}": round(sum(1 for r in rows if r[key] is not None and r[key] <= k) / n, 3) for k in KS}

    reads, base_reads = [r["reads"] for r in rows], [r["reads_baseline"] for r in rows]
    tok, base_tok = [r["tokens_read"] for r in rows], [r["tokens_read_baseline"] for r in rows]
    with_boot = [r["tokens_read"] + r["boot_tokens"] for r in rows]
    summary = {
        "tasks": n, "budget": BUDGET,
        "functions": {"brain": acc("brain"), "bm25_bodies": acc("bm25")},
        "in_context": round(sum(r["in_context"] for r in rows) / n, 3),
        "whole_in_context": round(sum(r["whole_in_context"] for r in rows) / n, 3),
        "reads": {"brain": spread(reads), "brain_files_order": spread([r["reads_files_order"] for r in rows]),
                  "baseline_bm25": spread(base_reads),
                  "ratio_mean": round(statistics.fmean(reads) / max(statistics.fmean(base_reads), 1e-9), 3)},
        "tokens_read": {"brain_files": spread(tok), "brain_files_plus_boot": spread(with_boot),
                        "baseline_bm25": spread(base_tok),
                        "ratio_mean_with_boot": round(statistics.fmean(with_boot) / max(statistics.fmean(base_tok), 1e-9), 3)},
        "boot_tokens": {"max": max(r["boot_tokens"] for r in rows), "median": statistics.median(r["boot_tokens"] for r in rows),
                        "over_budget": sum(r["boot_tokens"] > BUDGET for r in rows)},
        "boot_seconds_inprocess": {"median": round(statistics.median(r["seconds"] for r in rows), 4),
                                   "p95": round(percentile([r["seconds"] for r in rows], 0.95), 4)},
    }
    if cli_seconds:
        summary["boot_seconds_cli"] = {"runs": len(cli_seconds), "median": round(statistics.median(cli_seconds), 4),
                                       "p95": round(percentile(cli_seconds, 0.95), 4)}
    if cli_baseline:
        summary["boot_seconds_cli_baseline"] = {"runs": len(cli_baseline), "median": round(statistics.median(cli_baseline), 4),
                                                "src": "the --cli-baseline-src package, same tasks, interleaved"}
        summary["boot_seconds_cli"]["ratio_to_baseline"] = round(statistics.median(cli_seconds) /
                                                                 statistics.median(cli_baseline), 3)
    summary["load"] = os.getloadavg()
    print(f"tasks: {n}  budget: {BUDGET}  load: {', '.join(f'{x:.2f}' for x in summary['load'])}")
    print("| function ranking | Acc@1 | Acc@5 | Acc@10 |")
    print("|---|---|---|---|")
    for name, s in (("brain boot `functions`", summary["functions"]["brain"]),
                    ("BM25 over function and class bodies (same run)", summary["functions"]["bm25_bodies"])):
        print(f"| {name} | {s['acc@1']:.3f} | {s['acc@5']:.3f} | {s['acc@10']:.3f} |")
    print(f"gold functions' code in the boot: {summary['in_context']:.3f} (all whole: {summary['whole_in_context']:.3f})")
    r, b = summary["reads"]["brain"], summary["reads"]["baseline_bm25"]
    print(f"reads per task: brain mean {r['mean']:.2f} p50 {r['p50']} p90 {r['p90']}; BM25 reader mean {b['mean']:.2f} "
          f"p50 {b['p50']} p90 {b['p90']}; ratio {summary['reads']['ratio_mean']:.3f}")
    f = summary["reads"]["brain_files_order"]
    print(f"  (a reader following the boot's `files` alone, functions' files not first: mean {f['mean']:.2f} "
          f"p50 {f['p50']} p90 {f['p90']})")
    t = summary["tokens_read"]
    print(f"tokens read: brain files mean {t['brain_files']['mean']:.0f} (+ boot: {t['brain_files_plus_boot']['mean']:.0f}); "
          f"BM25 reader mean {t['baseline_bm25']['mean']:.0f}; ratio with boot {t['ratio_mean_with_boot']:.3f}")
    print(f"boot tokens: max {summary['boot_tokens']['max']}, over budget {summary['boot_tokens']['over_budget']}; "
          f"boot seconds in-process median {summary['boot_seconds_inprocess']['median']:.3f}"
          + (f"; CLI median {summary['boot_seconds_cli']['median']:.3f} over {len(cli_seconds)} runs" if cli_seconds else "")
          + (f" (before this change: {summary['boot_seconds_cli_baseline']['median']:.3f}, ratio "
             f"{summary['boot_seconds_cli']['ratio_to_baseline']:.2f})" if cli_baseline else ""))
    write_results(args.out, summary, rows)
    if evidence_out:
        write_evidence(args.evidence, evidence_out)
        print(f"function evidence of {len(evidence_out)} tasks: {args.evidence} "
              f"({sum(not e['boot_equal'] for e in evidence_out)} re-ranked differently from their boot)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
