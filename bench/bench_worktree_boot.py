"""The first task boot in a new git worktree: seeded from a sibling's index against built from nothing.

Agent runners give each parallel agent a fresh `git worktree add`; its first task boot must bring the
code index of that checkout up to date. On Django 4.2's source release (bench_task_boot.py's tree:
a git repository with `brain init` and `brain map` done in the main working tree, `.brain/` committed),
each round adds new worktrees and times, as CLI processes (CPU of the process and its children, git
included, by bench_map.py's launcher), the first ``brain boot --task-file T --json --no-record`` there:

- ``seeded``: this checkout's code (a new worktree's index starts as a copy of a sibling's, search.seed);
- ``seeded, one file edited``: the same with one source file changed before the boot (every file's
  stamp differs, every text is checked once against its checksum);
- ``baseline``: the ``--baseline-src`` code (e.g. main before the change, from ``git archive``) in the
  same kind of new worktree: the index built from nothing;

then a second boot in the seeded worktree, and whether each seeded answer (files, ranked functions)
equals the answer after ``brain index --rebuild`` there. Medians over --rounds, with the load average.

    git archive main src | tar -x -C OUT
    .venv/bin/python bench/bench_worktree_boot.py --baseline-src OUT/src [--rounds 3]

Writes bench/results/worktree-boot.json.
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

from bench_localization import CACHE, DEFAULT_TASKS  # noqa: E402
from bench_map import run_process  # noqa: E402
from bench_task_boot import boot, prepared_tree  # noqa: E402
from locbench import load_tasks  # noqa: E402

EDITED = "django/db/models/query.py"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench", *args], cwd=repo,
                   check=True, capture_output=True)


def main_tree(release: str, env: dict) -> Path:
    """A clone of bench_task_boot.py's release repository (its own, so that tree is left as it is) whose
    `.brain/` is committed (what a new worktree checks out), the main tree's index built by `brain map`."""
    source = prepared_tree(release, None)
    repo = CACHE / "worktree-boot" / source.name
    if not (repo / ".git").is_dir():
        shutil.rmtree(repo, ignore_errors=True)
        repo.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "brain", "init"], cwd=repo, env=env, check=True, capture_output=True)
        git(repo, "add", "-A", ".brain", "AGENTS.md")
        git(repo, "commit", "-q", "-m", "brain")
    subprocess.run([sys.executable, "-m", "brain", "map", "--json"], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def new_worktree(repo: Path, name: str) -> Path:
    tree = repo.parent / f"{repo.name}-wt-{name}"
    if tree.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo, capture_output=True)
        shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["git", "branch", "-D", f"wt-{name}"], cwd=repo, capture_output=True)
    git(repo, "worktree", "add", "-q", str(tree), "-b", f"wt-{name}")
    return tree


def remove_worktree(repo: Path, tree: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo, capture_output=True)
    shutil.rmtree(tree, ignore_errors=True)


def rebuilt_answer(tree: Path, task_file: Path, env: dict) -> tuple:
    run_process([sys.executable, "-m", "brain", "index", "--rebuild", "--quiet"], tree, env)
    return boot(tree, task_file, env)[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-src", required=True, help="the src/ folder of the code to compare with")
    ap.add_argument("--release", default="django==4.2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "worktree-boot.json"))
    args = ap.parse_args(argv)

    baseline = Path(args.baseline_src).resolve()
    for src in (ROOT / "src", baseline):
        compileall.compile_dir(str(src), quiet=1)
    env_new = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "BRAIN_HOME": str(CACHE / "brain-home")}
    env_base = {**env_new, "PYTHONPATH": str(baseline)}
    task = next(t for t in load_tasks(DEFAULT_TASKS) if t["pypi"].lower() == args.release.lower())
    task_file = CACHE / "task-boot" / "worktree-task.txt"
    task_file.parent.mkdir(parents=True, exist_ok=True)
    task_file.write_text(task["problem_statement"])
    repo = main_tree(args.release, env_new)
    load_before = os.getloadavg()[0]
    runs: dict[str, list] = {"seeded": [], "seeded_edited": [], "baseline": [], "second": []}
    differ = 0
    for rnd in range(args.rounds):
        for kind in ("baseline", "seeded", "seeded_edited"):
            tree = new_worktree(repo, f"{kind}-{rnd}")
            if kind == "seeded_edited":
                with open(tree / EDITED, "a") as handle:
                    handle.write("\n# edited in this worktree\n")
            cpu, wall, answer = boot(tree, task_file, env_base if kind == "baseline" else env_new)
            runs[kind].append((cpu, wall))
            if kind != "baseline":
                if kind == "seeded":
                    cpu2, wall2, _ = boot(tree, task_file, env_new)
                    runs["second"].append((cpu2, wall2))
                differ += answer != rebuilt_answer(tree, task_file, env_new)
            remove_worktree(repo, tree)
    load_after = os.getloadavg()[0]

    def med(kind: str, i: int) -> float:
        return round(statistics.median(r[i] for r in runs[kind]), 3)

    result = {"release": args.release, "rounds": args.rounds, "load": [round(load_before, 2), round(load_after, 2)],
              "cpu": {k: med(k, 0) for k in runs}, "wall": {k: med(k, 1) for k in runs},
              "runs": runs, "answers_differing_from_a_rebuild": differ}
    result["ratio_seeded_to_baseline"] = round(result["cpu"]["seeded"] / result["cpu"]["baseline"], 3)
    print(f"first task boot in a new worktree, {args.release}, {args.rounds} round(s), load {load_before:.2f} -> "
          f"{load_after:.2f}")
    print(f"{'':34} {'CPU s':>8} {'wall s':>8}")
    for kind, label in (("baseline", "baseline (index from nothing)"), ("seeded", "seeded from a sibling"),
                        ("seeded_edited", "seeded, one file edited first"), ("second", "second boot, seeded tree")):
        print(f"{label:34} {result['cpu'][kind]:8.3f} {result['wall'][kind]:8.3f}")
    print(f"ratio seeded / baseline (CPU): {result['ratio_seeded_to_baseline']}; seeded answers differing from a "
          f"rebuilt index's: {differ}")
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
