"""Cost of the safe git runner on the boot's `git status` (brain.gitsafe).

Baseline in the same run: the same `git status` as a plain subprocess (what brain ran before).
Measured, interleaved so machine load hits both sides alike:

- ``plain``: `git status --porcelain ...` with the inherited environment;
- ``safe``: ``GitRepo.output(...)`` on a repository whose config names no program (the common
  case: a cheap read of `.git/config` decides that no scan is needed);
- ``safe_scan``: the same after `filter.x.clean` is set in `.git/config` (one extra
  `git config --list --show-scope` per runner).

    python bench/bench_gitsafe.py [--runs 300]      # writes bench/results/gitsafe.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARGS = ["status", "--porcelain", "--untracked-files=all", "-z", "--", ".", ":(exclude).brain"]


def build(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(files):
        (repo / f"m{i:04d}.py").write_text(f"VALUE = {i}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "files"], cwd=repo, check=True, env=env)
    (repo / "m0000.py").write_text("VALUE = -1\n")
    return repo


def measure(repo: Path, runs: int) -> dict[str, list[float]]:
    from brain.gitsafe import GitRepo

    def plain():
        subprocess.run(["git", *ARGS], cwd=repo, capture_output=True, timeout=30)

    def safe():
        GitRepo(repo, timeout=30).output(*ARGS)

    times: dict[str, list[float]] = {"plain": [], "safe": []}
    for i in range(runs):
        for name, fn in ((("plain", plain), ("safe", safe)) if i % 2 else (("safe", safe), ("plain", plain))):
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    subprocess.run(["git", "config", "filter.x.clean", "cat"], cwd=repo, check=True)
    times["plain_with_filter"], times["safe_scan"] = [], []
    for i in range(runs):
        for name, fn in ((("plain_with_filter", plain), ("safe_scan", safe)) if i % 2
                         else (("safe_scan", safe), ("plain_with_filter", plain))):
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--files", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = build(Path(tmp), args.files)
        times = measure(repo, args.runs)
    p50 = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "runs": args.runs,
        "files": args.files,
        **{f"{k}_p50_ms": round(v, 3) for k, v in p50.items()},
        "safe_vs_plain_ratio": round(p50["safe"] / p50["plain"], 3),
        "safe_scan_vs_plain_ratio": round(p50["safe_scan"] / p50["plain_with_filter"], 3),
        "load": os.getloadavg()[0],
    }
    for key, value in result.items():
        print(f"{key:<28} {value}")
    out = HERE / "results" / "gitsafe.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
