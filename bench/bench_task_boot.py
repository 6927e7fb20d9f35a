"""Warm task boots as CLI processes: CPU per boot, this checkout beside an earlier one, same answers.

Issue 21 item 3: a task boot's cost does not grow with the repository. On Django 4.2's source release
(downloaded and unpacked as bench_localization.py does, hard-linked into bench/.cache/task-boot/,
committed to a fresh git repository, then `brain init` and `brain map` once), each task of
../shared/bench/swe-lite-dev.jsonl filed against that release is booted as
``brain boot --task-file T --json --no-record``, with this checkout's ``brain`` and, interleaved,
with the ``brain`` package of ``--baseline-src`` (e.g. main's ``src/`` from ``git archive``). Every
run is a real process started by bench_map.py's launcher (CPU = user + system of the process and its
children, git included). Reported: median CPU and wall of each, their ratio, how many boots answered
differently (files or ranked functions: must be 0), a boot without a task beside a bare
``python -c pass``, and the load average before and after.

Both source trees are byte-compiled first (``compileall``): an installed package has its
``__pycache__``, so a first-run compile is not part of the figure.

    git archive main src | tar -x -C OUT       # the code to compare with
    .venv/bin/python bench/bench_task_boot.py --baseline-src OUT/src [--limit 16] [--tree DIR]
    .venv/bin/python bench/bench_task_boot.py --baseline-src OUT/src --limit 10 --mirrors DIR \\
        --big prettier+prettier JetBrains+Exposed curl+curl google+guice --out bench/results/task-boot-big.json

The big tree is bench_index_build.py's: mirrors' HEADs side by side (``git archive``), about 20,000 files.

Targets: Django 4.2 task boot <= 0.15 s CPU; a 20,000-file tree <= 0.25 s; a boot without a task
<= 5x `python -c pass`.
Writes bench/results/task-boot.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_index_build import BIG_TASK, big_tree, git_tree  # noqa: E402
from bench_localization import CACHE, DEFAULT_TASKS, release_dir  # noqa: E402
from bench_map import run_process  # noqa: E402
from locbench import load_tasks  # noqa: E402


def prepared_tree(pypi: str, tree: Path | None, mirrors: Path | None = None, big: list[str] = ()) -> Path:
    """A git repository holding the release (or the mirrors' HEADs side by side), with `brain init` and
    `brain map` done once."""
    if tree is not None:
        return tree
    if mirrors is not None:
        dst = CACHE / "task-boot" / ("big-" + "-".join(n.replace("+", "-") for n in big))
        if not (dst / ".git").is_dir():
            shutil.rmtree(dst, ignore_errors=True)
            big_tree(mirrors, big, dst)
    else:
        src = release_dir(pypi)
        dst = CACHE / "task-boot" / src.name
        if not (dst / ".git").is_dir():
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst, copy_function=os.link, ignore=shutil.ignore_patterns(".brain", "AGENTS.md"))
            git_tree(dst)
    # The trees are hard links of the unpacked release, and every other hard link made to those files
    # (another checkout's tree) changes their ctime: git's index then holds stale stat data for every
    # file and each `git status` re-reads them all (0.24 s of CPU on Django instead of 0.06). A user's
    # own git keeps that data fresh, so the bench refreshes it once, before any timed run.
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dst, capture_output=True)
    if not (dst / ".brain" / "runtime" / "index.db").is_file():
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "BRAIN_HOME": str(CACHE / "brain-home")}
        for argv in (["init"], ["map", "--json"]):
            subprocess.run([sys.executable, "-m", "brain", *argv], cwd=dst, env=env, check=True, capture_output=True)
    return dst


def baseline_tree(repo: Path) -> Path:
    """A copy of the prepared tree (its .git and .brain included) for the baseline's boots.

    The stored import graph and name tables are keyed by a hash of the resolution code's own files
    (``graph_store._rules_hash``): when the two checkouts differ there, each boot of one finds the other's
    key in a shared index.db and resolves the whole graph again (40-50 ms on Django), for both. Each
    side's own copy keeps its own tables, as a user's one checkout does."""
    dst = repo.with_name(repo.name + "-baseline")
    if not (dst / ".git").is_dir():
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(repo, dst, symlinks=True)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dst, capture_output=True)
    return dst


def boot(repo: Path, task_file: Path | None, env: dict) -> tuple[float, float, tuple]:
    argv = [sys.executable, "-m", "brain", "boot", "--json", "--no-record"]
    if task_file is not None:
        argv += ["--task-file", str(task_file)]
    wall, _rss, cpu, code, out, err = run_process(argv, repo, env)
    if code != 0:
        raise SystemExit(f"brain boot failed ({code}): {err.decode()[-2000:]}")
    data = json.loads(out)
    return cpu, wall, (data.get("files"), [f["id"] for f in data.get("functions", [])])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-src", required=True, help="the src/ folder of the code to compare with")
    ap.add_argument("--release", default="django==4.2", help="the tasks' release (pypi pin of the task file)")
    ap.add_argument("--tree", type=Path, help="an already prepared git tree (brain init + map done) instead")
    ap.add_argument("--limit", type=int, default=16, help="at most this many tasks (boots of the big tree's one task)")
    ap.add_argument("--mirrors", type=Path, help="with --big: a folder of bare mirrors (owner+name/repo)")
    ap.add_argument("--big", nargs="+", default=[], help="mirrors whose HEADs side by side make the tree "
                                                         "(its task: bench_index_build's BIG_TASK)")
    ap.add_argument("--own-trees", action="store_true",
                    help="the baseline boots its own copy of the tree (see baseline_tree)")
    ap.add_argument("--plain", type=int, default=10, help="boots without a task (and bare interpreters) to time")
    ap.add_argument("--out", default=str(HERE / "results" / "task-boot.json"))
    args = ap.parse_args(argv)

    baseline = Path(args.baseline_src).resolve()
    for src in (ROOT / "src", baseline):
        compileall.compile_dir(str(src), quiet=1)
    if args.big:
        tasks = [{"problem_statement": BIG_TASK}] * args.limit
        args.release = "big tree: " + " ".join(args.big)
    else:
        tasks = [t for t in load_tasks(DEFAULT_TASKS) if t["pypi"].lower() == args.release.lower()][: args.limit]
    repo = prepared_tree(args.release, args.tree, args.mirrors if args.big else None, args.big)
    base_repo = baseline_tree(repo) if args.own_trees else repo
    env_new = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "BRAIN_HOME": str(CACHE / "brain-home")}
    env_old = {**env_new, "PYTHONPATH": str(baseline)}
    task_file = CACHE / "task-boot" / "task.txt"
    task_file.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    boot(repo, None, env_new)  # the index and caches are warm before the first timed run
    if args.own_trees and tasks:  # and each side's own graph tables are resolved once
        task_file.write_text(tasks[0]["problem_statement"], encoding="utf-8")
        boot(repo, task_file, env_new), boot(base_repo, task_file, env_old)
    new, old, differ = [], [], 0
    for task in tasks:
        task_file.write_text(task["problem_statement"], encoding="utf-8")
        a, b = boot(repo, task_file, env_new), boot(base_repo, task_file, env_old)
        new.append(a)
        old.append(b)
        differ += a[2] != b[2]
    plain_new = [boot(repo, None, env_new) for _ in range(args.plain)]
    plain_old = [boot(base_repo, None, env_old) for _ in range(args.plain)]
    bare = [run_process([sys.executable, "-c", "pass"], repo, env_new)[2] for _ in range(args.plain)]

    def med(runs, i):
        return round(statistics.median(r[i] for r in runs), 4)

    result = {
        "release": args.release, "tasks": len(tasks), "load_before": load_before, "load_after": os.getloadavg(),
        "task_boot": {"cpu": med(new, 0), "wall": med(new, 1)},
        "task_boot_baseline": {"cpu": med(old, 0), "wall": med(old, 1), "src": "--baseline-src, interleaved"},
        "answers_differing": differ, "own_trees": args.own_trees,
        "plain_boot": {"cpu": med(plain_new, 0), "wall": med(plain_new, 1)},
        "plain_boot_baseline": {"cpu": med(plain_old, 0), "wall": med(plain_old, 1)},
        "python_pass": {"cpu": round(statistics.median(bare), 4)},
    }
    result["task_boot"]["ratio_to_baseline"] = round(result["task_boot"]["cpu"] / result["task_boot_baseline"]["cpu"], 3)
    result["plain_boot"]["times_python_pass"] = round(result["plain_boot"]["cpu"] / max(result["python_pass"]["cpu"], 1e-9), 2)
    print(f"{args.release}: {len(tasks)} tasks, load {', '.join(f'{x:.2f}' for x in load_before)} -> "
          f"{', '.join(f'{x:.2f}' for x in result['load_after'])}")
    print("| measure | this checkout | baseline | ratio |")
    print("|---|---|---|---|")
    t, tb = result["task_boot"], result["task_boot_baseline"]
    print(f"| task boot, median CPU (wall) | {t['cpu']:.3f} s ({t['wall']:.3f} s) | {tb['cpu']:.3f} s ({tb['wall']:.3f} s) "
          f"| {t['ratio_to_baseline']:.2f} |")
    p, pb = result["plain_boot"], result["plain_boot_baseline"]
    print(f"| boot without a task, median CPU | {p['cpu']:.3f} s ({p['times_python_pass']:.1f}x python -c pass) "
          f"| {pb['cpu']:.3f} s | {p['cpu'] / max(pb['cpu'], 1e-9):.2f} |")
    print(f"| `python -c pass`, median CPU | {result['python_pass']['cpu']:.3f} s | | |")
    print(f"boots answering differently (files or functions): {differ}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
