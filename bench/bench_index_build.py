"""Benchmark the code index `brain map` builds in its read pass, and the first task boot after it.

Trees: Django 4.2's source release (as bench_map.py prepares it), and a big tree made of mirrors
side by side (each HEAD extracted with ``git archive``; nothing downloaded, nothing written to the
repository), e.g. about 20,000 files from four projects:

    .venv/bin/python bench/bench_index_build.py [--tree bench/.cache/Django-4.2] [--repeat 3] \\
        [--mirrors DIR --big prettier+prettier JetBrains+Exposed curl+curl google+guice]

Each tree is committed to a fresh git repository. Every measured run is a real process started by
bench_map.py's launcher (CPU = user + system time of the process and its worker processes, wall, peak
RSS from wait4), in this order, each ``--repeat`` times (median reported):

- ``python -c pass``: the interpreter floor;
- the cold map alone: ``brain map --json`` with ``search.enabled: false`` (no index), cards and
  runtime/ deleted: the same-run baseline for what the index adds;
- the cold map with the index: ``brain map --json`` (cards, runtime/ deleted): map + code + function
  index + graph in one pass; files/s over the source files the index lists;
- the first task boot after it: ``brain boot --task T --json --no-record`` (target <= 1 s CPU on Django);
- with ``--baseline SRC`` (another checkout's ``src/``, e.g. main's), its map alone, map + index and first
  task boot too, each run right after this tree's (the same load): what a change to the build bought;
- the first task boot without a map before it (index.db deleted: the boot builds the index itself, as
  every first boot did before), once: what an agent waited for.

Targets: first task boot after `brain map` on Django <= 1 s CPU; the big tree mapped and indexed
<= 60 s CPU and <= 300 MB peak RSS. The load average is printed before and after. Writes
bench/results/index-build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

from bench_map import run_process  # noqa: E402

DJANGO_TASK = ("QuerySet.bulk_create() crashes on mixed case columns in unique_fields/update_fields: the ON "
               "CONFLICT clause uses the field name instead of its db_column")
BIG_TASK = "the plugin printer crashes on an empty array when formatting a nested object with comments"


def load() -> float:
    return round(os.getloadavg()[0], 2)


def git_tree(dest: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(argv, cwd=dest, check=True, env=env, capture_output=True)


def big_tree(mirrors: Path, names: list[str], dest: Path) -> None:
    dest.mkdir(parents=True)
    for name in names:
        target = dest / name.replace("+", "-")
        target.mkdir()
        archive = subprocess.Popen(["git", "--git-dir", str(mirrors / name / "repo"), "archive", "HEAD"],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
        archive.stdout.close()
        if archive.wait() != 0:
            raise SystemExit(f"git archive failed for {name}")
    git_tree(dest)


def measure(argv: list[str], cwd: Path, env: dict) -> dict:
    wall, rss, cpu, code, out, err = run_process(argv, cwd, env)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])} failed ({code}): {err.decode()[-2000:]}")
    return {"wall": wall, "cpu": cpu, "rss": rss, "out": out, "err": err}


def median(runs: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)


def clean(repo: Path, *, index_only: bool = False) -> None:
    runtime = repo / ".brain" / "runtime"
    if index_only:
        for path in runtime.glob("index.db*"):
            path.unlink()
        return
    shutil.rmtree(repo / ".brain" / "modules", ignore_errors=True)
    shutil.rmtree(runtime, ignore_errors=True)


def bench_tree(label: str, repo: Path, task: str, repeat: int, env: dict, baseline: str | None = None) -> dict:
    brain = [sys.executable, "-m", "brain"]
    base_env = {**env, "PYTHONPATH": baseline} if baseline else None
    subprocess.run([*brain, "init"], cwd=repo, env=env, check=True, capture_output=True)
    local = repo / ".brain" / "brain.local.yml"
    figures: dict = {"load_before": load()}
    figures["python_pass"] = {"cpu": median(runs := [measure([sys.executable, "-c", "pass"], repo, env)
                                                    for _ in range(repeat)], "cpu"), "wall": median(runs, "wall")}
    alone, base_alone = [], []
    local.write_text("search:\n  enabled: false\n")
    for _ in range(repeat):
        clean(repo)
        alone.append(measure([*brain, "map", "--json"], repo, env))
        if base_env:  # the baseline source tree's map alone, interleaved: the same load
            clean(repo)
            base_alone.append(measure([*brain, "map", "--json"], repo, base_env))
    local.unlink()
    built, boots, base_built, base_boots = [], [], [], []
    for _ in range(repeat):
        clean(repo)
        built.append(measure([*brain, "map", "--json"], repo, env))
        boots.append(measure([*brain, "boot", "--task", task, "--json", "--no-record"], repo, env))
        if base_env:
            clean(repo)
            base_built.append(measure([*brain, "map", "--json"], repo, base_env))
            base_boots.append(measure([*brain, "boot", "--task", task, "--json", "--no-record"], repo, base_env))
    index = json.loads(built[-1]["out"])["index"]
    clean(repo, index_only=True)
    unmapped = measure([*brain, "boot", "--task", task, "--json", "--no-record"], repo, env)
    figures.update({
        "map_alone": {"cpu": median(alone, "cpu"), "wall": median(alone, "wall"), "rss_mb": max(r["rss"] for r in alone)},
        "map_and_index": {"cpu": median(built, "cpu"), "wall": median(built, "wall"),
                          "rss_mb": max(r["rss"] for r in built)},
        "index": index,
        "first_task_boot_after_map": {"cpu": median(boots, "cpu"), "wall": median(boots, "wall"),
                                      "stderr_lines": len(boots[-1]["err"].decode().splitlines())},
        "first_task_boot_without_map": {"cpu": round(unmapped["cpu"], 3), "wall": round(unmapped["wall"], 3),
                                        "progress_lines": sum(1 for line in unmapped["err"].decode().splitlines()
                                                              if "code index" in line)},
        "load_after": load(),
        "repeat": repeat,
    })
    added = figures["map_and_index"]["cpu"] - figures["map_alone"]["cpu"]
    figures["index_cpu_added"] = round(added, 3)
    figures["files_per_s_cpu"] = round(index["files"] / figures["map_and_index"]["cpu"], 1)
    figures["index_ms_per_read_file"] = round(1000 * added / max(1, index.get("read") or index["changed"]), 2)
    figures["index_over_map_alone"] = round(added / figures["map_alone"]["cpu"], 3)
    if base_env:
        base = {"map_alone": {"cpu": median(base_alone, "cpu"), "wall": median(base_alone, "wall")},
                "map_and_index": {"cpu": median(base_built, "cpu"), "wall": median(base_built, "wall"),
                                  "rss_mb": max(r["rss"] for r in base_built)},
                "first_task_boot_after_map": {"cpu": median(base_boots, "cpu"), "wall": median(base_boots, "wall")}}
        base["index_cpu_added"] = round(base["map_and_index"]["cpu"] - base["map_alone"]["cpu"], 3)
        base["index_ms_per_read_file"] = round(1000 * base["index_cpu_added"] / max(1, index.get("read") or index["changed"]), 2)
        base["index_over_map_alone"] = round(base["index_cpu_added"] / base["map_alone"]["cpu"], 3)
        figures["baseline"] = base
    print(f"{label}: {index['files']} source files indexed ({index['functions']} in the function index), "
          f"load {figures['load_before']} -> {figures['load_after']}, median of {repeat}")
    print(f"  python -c pass              {figures['python_pass']['cpu']:7.3f} s CPU  {figures['python_pass']['wall']:7.3f} s wall")
    for key, name in (("map_alone", "cold map alone (no index)"), ("map_and_index", "cold map + index")):
        f = figures[key]
        print(f"  {name:27} {f['cpu']:7.3f} s CPU  {f['wall']:7.3f} s wall  {f['rss_mb']:5d} MB peak")
    print(f"  index added                 {added:7.3f} s CPU  ({figures['index_ms_per_read_file']} ms per file read, "
          f"{figures['files_per_s_cpu']} files/s of CPU for map + index)")
    for key, name in (("first_task_boot_after_map", "first task boot after map"),
                      ("first_task_boot_without_map", "first task boot, no map")):
        f = figures[key]
        print(f"  {name:27} {f['cpu']:7.3f} s CPU  {f['wall']:7.3f} s wall")
    print(f"  index added / map alone     {figures['index_over_map_alone']:7.3f}  (target <= 1 per file read)")
    if base_env:
        b = figures["baseline"]
        print(f"  baseline ({baseline}), same run:")
        print(f"    cold map alone            {b['map_alone']['cpu']:7.3f} s CPU  {b['map_alone']['wall']:7.3f} s wall")
        print(f"    cold map + index          {b['map_and_index']['cpu']:7.3f} s CPU  {b['map_and_index']['wall']:7.3f} s wall  "
              f"{b['map_and_index']['rss_mb']:5d} MB peak")
        print(f"    index added               {b['index_cpu_added']:7.3f} s CPU  ({b['index_ms_per_read_file']} ms per file read, "
              f"{b['index_over_map_alone']} of the map alone)")
        print(f"    first task boot after map {b['first_task_boot_after_map']['cpu']:7.3f} s CPU")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(HERE / ".cache" / "Django-4.2"), help="the unpacked Django source release")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mirrors", default=os.environ.get("BRAIN_BENCH_MIRRORS", ""),
                        help="folder of <owner>+<name>/repo bare mirrors for --big")
    parser.add_argument("--big", nargs="*", default=[], metavar="NAME", help="mirrors put side by side as the big tree")
    parser.add_argument("--skip-django", action="store_true")
    parser.add_argument("--out", default=str(HERE / "results" / "index-build.json"))
    parser.add_argument("--baseline", metavar="SRC", help="another source tree (e.g. main's src/) measured in the same "
                        "run, interleaved with this one: map alone, map + index and the first task boot")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-index-"))
    env = {**os.environ, "BRAIN_HOME": str(work / "home"), "PYTHONPATH": str(ROOT / "src")}
    env.pop("BRAIN_DIR", None)
    baseline = str(Path(args.baseline).resolve()) if args.baseline else None
    results: dict = {"cores": os.cpu_count()}
    try:
        if not args.skip_django:
            tree = Path(args.tree)
            if not (tree / "django" / "__init__.py").is_file():
                print(__doc__)
                print(f"error: {tree} is not an unpacked Django source release", file=sys.stderr)
                return 2
            repo = work / "django"
            shutil.copytree(tree, repo, symlinks=True)
            git_tree(repo)
            results["django"] = bench_tree("Django 4.2", repo, DJANGO_TASK, args.repeat, env, baseline)
        if args.big:
            if not args.mirrors:
                parser.error("--big needs --mirrors DIR (or BRAIN_BENCH_MIRRORS)")
            repo = work / "big"
            big_tree(Path(args.mirrors), args.big, repo)
            files = int(subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.count("\n"))
            results["big"] = bench_tree(f"{' + '.join(args.big)} ({files} files)", repo, BIG_TASK, args.repeat, env,
                                        baseline)
            results["big"]["tree"] = {"mirrors": args.big, "files": files}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
