"""A no-op `brain index` at 5,000 and 50,000 notes: no graph work when nothing changed.

    .venv/bin/python bench/bench_index_noop.py [--notes 5000 50000] [--repeat 3]

For each size, a fresh brain gets N generated notes under .brain/notes/, each with one
or two ``[[wiki links]]`` to other notes (and one in ten to a name no note has), and is
indexed once. Then, in CPU seconds of this process (``time.process_time``, which the
machine's load does not inflate) and wall seconds, best of ``--repeat``:

- baseline, same run: one full ``rebuild_graph`` (what every refresh cost before the
  graph followed what changed);
- a no-op ``SearchIndex.refresh`` (memory and code, as `brain index` runs it);
- a refresh after one note is rewritten (its own links re-resolved);
- a refresh after one note is added (its links, and those naming it, re-resolved);
- a no-op `python -m brain index` as a subprocess (the CPU of the child, start-up included),
  beside a bare `python -c pass`.

Target (issue 21): no-op `brain index` at 50,000 notes <= 0.3 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))


def make_brain(root: Path, notes: int, seed: int = 7):
    import brain as brainlib

    repo = root / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    b = brainlib.init(repo)
    rng = random.Random(seed)
    folder = b.dir / "notes"
    folder.mkdir(exist_ok=True)
    for i in range(notes):
        links = [f"[[n{rng.randrange(notes)}]]" for _ in range(rng.randint(1, 2))]
        if i % 10 == 0:
            links.append(f"[[nowhere-{i}]]")
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nabout {rng.randrange(1000)} things, see {' '.join(links)}.\n")
    return b


def cpu_and_wall(fn, repeat: int) -> tuple[float, float, object]:
    best_cpu, best_wall, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu, best_wall = min(best_cpu, time.process_time() - c), min(best_wall, time.perf_counter() - w)
    return best_cpu, best_wall, out


def child_cpu(argv: list[str], cwd: Path, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def run_size(notes: int, repeat: int) -> dict:
    from brain.search.graph import rebuild_graph

    with tempfile.TemporaryDirectory() as tmp:
        b = make_brain(Path(tmp), notes)
        c, w = time.process_time(), time.perf_counter()
        first = b.reindex()
        build = (time.process_time() - c, time.perf_counter() - w)
        index = b.index
        full = cpu_and_wall(lambda: rebuild_graph(index), repeat)
        noop = cpu_and_wall(b.reindex, repeat)
        assert noop[2]["graph"]["work"] == "none", noop[2]
        counter = [0]

        def edit():
            counter[0] += 1
            path = b.dir / "notes" / "n1.md"
            path.write_text(f"# Note 1\n\nrewritten {counter[0]}, see [[n2]] and [[n{counter[0] + 3}]].\n")
            return b.reindex()

        def add():
            counter[0] += 1
            (b.dir / "notes" / f"nowhere-{10 * counter[0]}.md").write_text("# appeared\n\nnamed by a link\n")
            return b.reindex()

        one = cpu_and_wall(edit, repeat)
        assert one[2]["graph"]["work"] == "links", one[2]
        added = cpu_and_wall(add, repeat)
        assert added[2]["graph"]["work"] == "links", added[2]
        env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
        os.environ.update(env)
        cli = child_cpu([sys.executable, "-m", "brain", "index"], b.repo, repeat)
        bare = child_cpu([sys.executable, "-c", "pass"], b.repo, repeat)
        index.close()
        return {"notes": notes, "edges": first["graph"]["edges"], "build_cpu_s": round(build[0], 2),
                "full_graph_cpu_s": round(full[0], 3), "full_graph_wall_s": round(full[1], 3),
                "noop_refresh_cpu_s": round(noop[0], 3), "noop_refresh_wall_s": round(noop[1], 3),
                "one_note_cpu_s": round(one[0], 3), "one_note_wall_s": round(one[1], 3),
                "note_added_cpu_s": round(added[0], 3), "note_added_wall_s": round(added[1], 3),
                "noop_cli_cpu_s": round(cli, 3), "bare_python_cpu_s": round(bare, 3)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, nargs="+", default=[5000, 50000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    rows = [run_size(n, args.repeat) for n in args.notes]
    if args.json:
        print(json.dumps({"load_start": round(load, 1), "load_end": round(os.getloadavg()[0], 1), "sizes": rows}))
        return 0
    print(f"no-op brain index (CPU s of the process, best of {args.repeat}; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f})")
    print(f"{'notes':>7} {'edges':>7} {'full graph':>11} {'no-op refresh':>14} {'one note':>9} {'note added':>11}"
          f" {'no-op CLI':>10} {'bare python':>12}")
    for r in rows:
        print(f"{r['notes']:>7} {r['edges']:>7} {r['full_graph_cpu_s']:>11} {r['noop_refresh_cpu_s']:>14} "
              f"{r['one_note_cpu_s']:>9} {r['note_added_cpu_s']:>11} {r['noop_cli_cpu_s']:>10} "
              f"{r['bare_python_cpu_s']:>12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
