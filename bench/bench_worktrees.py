"""Coordination throughput of 8 git worktrees x 4 agents against 1 checkout with 32 agents (issue 19).

Every agent is a real process that opens the brain of its working tree (``brain.open``), starts a
session, then — released at once with all the others, one kind at a time — makes OPS claims, OPS signals (to an agent of
another worktree when there are several) and OPS live-state writes. Both layouts use the same
repository's one shared store (SQLite in the common git dir, or PostgreSQL with --postgres URL), so
the ratio says what worktrees cost over one checkout (goal: within 1.5x). Layouts alternate for
--rounds rounds; medians are printed with CPU (all agents' user+system), wall and the machine's load.

    .venv/bin/python bench/bench_worktrees.py                      # SQLite, 3 rounds of 30 ops per kind
    .venv/bin/python bench/bench_worktrees.py --ops 50 --rounds 5 --postgres postgresql://...

Writes bench/results/worktrees.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

AGENT = r"""
import json, os, sys
import brain
folder, role, ops = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = brain.open(folder)
coord = b.coord
me = coord.start_session(role).id
print(json.dumps({"session": me}), flush=True)
peer = json.loads(sys.stdin.readline())["peer"]
def claims(i):
    coord.claim(me, "src/shared.py" if i % 10 == 0 else f"src/{role}/file{i}.py")  # some overlap across agents
def signals(i):
    coord.signal(me, peer, f"note {i} from {role}")
def livestate(i):
    coord.livestate.set(me, progress=f"step {i}", writer=me)
for kind in (claims, signals, livestate):  # each kind released for every agent at once (a line on stdin)
    sys.stdin.readline()
    c0 = os.times()
    for i in range(ops):
        kind(i)
    c1 = os.times()
    print(json.dumps({"cpu_s": (c1.user - c0.user) + (c1.system - c0.system)}), flush=True)
coord.end_session(me)  # untimed: every run starts from the same empty board (held claims slow a grant)
print("{}", flush=True)
"""

KINDS = ("claim", "signal", "livestate")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
                        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"})


def make_repository(root: Path, worktrees: int) -> tuple[Path, list[Path]]:
    import brain

    repo = root / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# bench\n")
    brain.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    trees = []
    for i in range(worktrees):
        path = root / f"wt-{i}"
        git(repo, "worktree", "add", "-q", "-b", f"agent-{i}", str(path))
        trees.append(path)
    return repo, trees


def run_layout(folders: list[Path], ops: int, env: dict[str, str], tag: str) -> dict:
    """One agent per entry of ``folders`` (a folder repeated = agents of one checkout), released together."""
    procs: list[subprocess.Popen] = []
    try:
        return _released_together(procs, folders, ops, env, tag)
    finally:
        for p in procs:  # an agent that failed or outlived its run: never left behind
            if p.poll() is None:
                p.kill()
                p.wait()


def _released_together(procs: list, folders: list[Path], ops: int, env: dict[str, str], tag: str) -> dict:
    for i, folder in enumerate(folders):
        procs.append(subprocess.Popen([sys.executable, "-c", AGENT, str(folder), f"{tag}{i}", str(ops)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))
    sessions = [json.loads(p.stdout.readline())["session"] for p in procs]
    # each agent signals a peer: in the next worktree (the next block of agents), else the next agent
    step = len(folders) // len(set(folders)) if len(set(folders)) > 1 else 1
    for i, p in enumerate(procs):
        p.stdin.write(json.dumps({"peer": sessions[(i + step) % len(procs)]}) + "\n")
    out = {"agents": len(folders)}
    wall_total = cpu_total = 0.0
    for kind in KINDS:
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        cpu = sum(json.loads(p.stdout.readline())["cpu_s"] for p in procs)
        wall = time.perf_counter() - t0
        out[f"{kind}_ops_s"] = round(ops * len(procs) / wall, 1)
        wall_total += wall
        cpu_total += cpu
    for p in procs:
        p.stdout.readline()
        if p.wait(timeout=600) != 0:
            raise SystemExit(f"an agent failed (exit {p.returncode})")
    total = len(KINDS) * ops * len(procs)
    out.update({"ops": total, "wall_s": round(wall_total, 3), "ops_s": round(total / wall_total, 1),
                "cpu_s": round(cpu_total, 3)})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worktrees", type=int, default=8)
    parser.add_argument("--agents", type=int, default=4, help="agents per worktree")
    parser.add_argument("--ops", type=int, default=30, help="operations of each kind per agent")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL URL (a fresh schema is used) instead of SQLite")
    parser.add_argument("--out", default=str(HERE / "results" / "worktrees.json"))
    args = parser.parse_args()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="brain-bench-wt-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_MACHINE": "bench"}
        os.environ.update({"BRAIN_HOME": str(home), "BRAIN_MACHINE": "bench"})
        cleanup = None
        if args.postgres:
            from brain.backends.testing import isolated_postgres

            cleanup = isolated_postgres(args.postgres, prefix="brain_bench_wt")
            env["BRAIN_BACKEND"] = cleanup.__enter__()
        try:
            repo, trees = make_repository(Path(tmp), args.worktrees)
            layouts = {"one_checkout": [repo] * (args.worktrees * args.agents),
                       "worktrees": [t for t in trees for _ in range(args.agents)]}
            runs: dict[str, list[dict]] = {name: [] for name in layouts}
            for r in range(args.rounds):
                for name in (list(layouts) if r % 2 == 0 else list(layouts)[::-1]):  # alternate who goes first
                    runs[name].append(run_layout(layouts[name], args.ops, env, f"{name[:2]}{r}-"))
                    print(f"round {r + 1} {name}: {runs[name][-1]['ops_s']} ops/s, wall {runs[name][-1]['wall_s']} s, "
                          f"cpu {runs[name][-1]['cpu_s']} s", flush=True)
        finally:
            if cleanup is not None:
                cleanup.__exit__(None, None, None)
    load_end = os.getloadavg()

    def median(name: str, key: str) -> float:
        return round(statistics.median(run[key] for run in runs[name]), 3)

    keys = ("ops_s", "wall_s", "cpu_s", "claim_ops_s", "signal_ops_s", "livestate_ops_s")
    summary = {name: {key: median(name, key) for key in keys} for name in runs}
    ratio = round(summary["one_checkout"]["ops_s"] / summary["worktrees"]["ops_s"], 3)
    report = {"backend": "postgresql" if args.postgres else "sqlite", "worktrees": args.worktrees,
              "agents_per_worktree": args.agents, "ops_per_kind_per_agent": args.ops, "rounds": args.rounds,
              "cpus": os.cpu_count(), "load_start": [round(x, 2) for x in load_start],
              "load_end": [round(x, 2) for x in load_end], "median": summary,
              "ratio_one_checkout_over_worktrees": ratio, "goal": "ratio <= 1.5", "runs": runs}
    print(f"\n{report['backend']}: {args.worktrees} worktrees x {args.agents} agents vs 1 checkout x "
          f"{args.worktrees * args.agents} agents, {args.ops} ops of each kind per agent, {args.rounds} rounds "
          f"(load {load_start[0]:.1f} -> {load_end[0]:.1f}, {os.cpu_count()} CPUs)")
    for name, figures in summary.items():
        print(f"  {name:<13} {figures['ops_s']:>8} ops/s  wall {figures['wall_s']} s  cpu {figures['cpu_s']} s  "
              f"(claims {figures['claim_ops_s']}/s, signals {figures['signal_ops_s']}/s, "
              f"live state {figures['livestate_ops_s']}/s)")
    print(f"  ratio one checkout / worktrees: {ratio} (goal <= 1.5)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
