"""Benchmark of the conversation log, the handoff fold and `brain stats`.

    .venv/bin/python bench/bench_log.py                 # full run: stats over 1 GB of generated transcripts
    .venv/bin/python bench/bench_log.py --stats-mb 100  # quicker

Prints:
- append: one turn appended to log.jsonl (one O_APPEND write), per-turn latency;
- fold: the pure fold of one turn into the handoff state (+ rendering), and a whole
  `record_turn` (lock, append, fold, state file, atomic fsynced write of handoffs/<thread>.md);
- stats: `brain stats --json` as a cold process over generated Claude Code and Codex
  transcripts of 1/10 and all of the target size: wall time, MB/s, and peak RSS, so one
  sees memory stay flat while the input grows tenfold.
Writes the figures to bench/results/log.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from brain.log import ConversationLog, HandoffState, Limits, Turn, fold, render  # noqa: E402
from brain.log.samples import Call, Task, claude_lines, codex_lines  # noqa: E402

WORDS = ("parser cache token session claim handoff module card boot index search signal checkpoint "
         "decided next question answer because refactor test file src/brain/log/store.py docs/x.md").split()


def sentence(rng: random.Random, n: int = 18) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def turn_text(rng: random.Random, i: int) -> str:
    kinds = [lambda: sentence(rng) + "?", lambda: "We decided to " + sentence(rng, 10) + ".",
             lambda: "Next: " + sentence(rng, 8) + ".", lambda: sentence(rng, 30) + ".",
             lambda: f"I edited src/pkg/mod_{i % 50}.py and " + sentence(rng, 6) + "."]
    return " ".join(rng.choice(kinds)() for _ in range(3))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench_append(tmp: Path, n: int) -> dict:
    rng = random.Random(1)
    log = ConversationLog(tmp / "append")
    turns = [Turn("a+b", "alice" if i % 2 else "bob", turn_text(rng, i), to="bob" if i % 2 else "alice")
             for i in range(n)]
    times = []
    for turn in turns:
        t = time.perf_counter()
        log.append(turn)
        times.append(time.perf_counter() - t)
    return {"turns": n, "p50_ms": pct(times, 0.5) * 1e3, "p95_ms": pct(times, 0.95) * 1e3,
            "max_ms": max(times) * 1e3, "mean_ms": statistics.mean(times) * 1e3}


def bench_fold(tmp: Path, n: int) -> dict:
    rng = random.Random(2)
    turns = [Turn("a+b", "alice" if i % 2 else "bob", turn_text(rng, i)) for i in range(n)]
    state, times = HandoffState(thread="a+b"), []
    limits = Limits()
    for turn in turns:
        t = time.perf_counter()
        state = fold(state, turn, limits)
        render(state)
        times.append(time.perf_counter() - t)
    pure = {"p50_ms": pct(times, 0.5) * 1e3, "p95_ms": pct(times, 0.95) * 1e3, "max_ms": max(times) * 1e3,
            "mean_ms": statistics.mean(times) * 1e3}
    out = {"turns": n, "fold_and_render": pure, "record_turn": bench_record(tmp, turns[:2000])}
    if Path("/dev/shm").is_dir():  # the same without disk flushes: what the fold itself costs end to end
        with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
            out["record_turn_tmpfs"] = bench_record(Path(shm), turns[:2000])
    return out


def bench_record(tmp: Path, turns: list[Turn]) -> dict:
    """Whole record_turn calls: lock, append, fold, state cache, atomic fsynced handoffs/<thread>.md."""
    import brain as brainlib

    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    os.environ["BRAIN_HOME"] = str(tmp / "home")
    b = brainlib.init(repo)
    rec = []
    for turn in turns:
        t = time.perf_counter()
        b.record_turn("a+b", turn.speaker, turn.text, to="x")
        rec.append(time.perf_counter() - t)
    return {"turns": len(rec), "p50_ms": pct(rec, 0.5) * 1e3, "p95_ms": pct(rec, 0.95) * 1e3, "max_ms": max(rec) * 1e3,
            "handoff_bytes": len(b.read("handoffs/a+b.md").text.encode())}


def generate(folder: Path, target_bytes: int) -> list[Path]:
    """Claude Code and Codex transcripts (about 3:1) totalling ``target_bytes``."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    files, total, n = [], 0, 0
    start = 1_700_000_000.0
    while total < target_bytes:
        tasks = [Task(sentence(rng, 12), [Call(rng.randint(5_000, 180_000), sentence(rng, 40),
                                              reads=tuple(f"src/m{rng.randint(0, 99)}.py" for _ in range(rng.randint(0, 3))),
                                              edits=("src/a.py",) if rng.random() < 0.2 else ())
                                         for _ in range(rng.randint(5, 40))], compact_after=rng.random() < 0.1)
                 for _ in range(60)]
        writer = codex_lines if n % 4 == 3 else claude_lines
        path = folder / (f"rollout-{n:05d}.jsonl" if writer is codex_lines else f"s{n:05d}.jsonl")
        data = ("\n".join(writer(f"s{n}", "/p", start + n * 3600, tasks)) + "\n").encode()
        path.write_bytes(data)
        files.append(path)
        total += len(data)
        n += 1
    return files


def run_stats(files: list[Path]) -> dict:
    listing = files[0].parent / "files.txt"
    size = sum(f.stat().st_size for f in files)
    code = ("import sys, resource, time, json\n"
            "sys.argv = ['brain', 'stats', '--json', '--no-discover', *open(sys.argv[1]).read().split()]\n"
            "from brain.cli.main import main\n"
            "import io, contextlib\n"
            "t = time.perf_counter()\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    rc = main(sys.argv[1:])\n"
            "data = json.loads(buf.getvalue())\n"
            "print(json.dumps({'rc': rc, 'seconds': time.perf_counter() - t, 'sessions': len(data['sessions']),"
            " 'lines': data['lines'], 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n")
    listing.write_text("\n".join(str(f) for f in files))
    out = subprocess.run([sys.executable, "-c", code, str(listing)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, cwd=files[0].parent)
    if out.returncode:
        raise SystemExit(out.stderr)
    data = json.loads(out.stdout)
    data.update({"files": len(files), "mb": size / 2**20, "mb_per_s": size / 2**20 / data["seconds"]})
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--stats-mb", type=int, default=1024)
    parser.add_argument("--keep", metavar="DIR", help="generate transcripts in DIR and keep them")
    parser.add_argument("--no-stats", action="store_true", help="skip the stats run (keeps its last figures)")
    args = parser.parse_args()
    results = {"load_average": os.getloadavg(), "cpus": os.cpu_count()}
    print(f"load average {results['load_average'][0]:.1f} on {results['cpus']} CPUs")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        results["append"] = bench_append(tmp, args.turns)
        print("append      p50 {p50_ms:.3f} ms  p95 {p95_ms:.3f} ms  max {max_ms:.3f} ms".format(**results["append"]))
        results["fold"] = bench_fold(tmp, args.turns)
        f = results["fold"]
        print("fold+render p50 {p50_ms:.3f} ms  p95 {p95_ms:.3f} ms  max {max_ms:.3f} ms".format(**f["fold_and_render"]))
        for key in ("record_turn", "record_turn_tmpfs"):
            if key in f:
                print(f"{key:<11} " + "p50 {p50_ms:.3f} ms  p95 {p95_ms:.3f} ms  max {max_ms:.3f} ms  "
                      "(handoff {handoff_bytes} bytes)".format(**f[key]))
        if args.no_stats:
            previous = ROOT / "bench" / "results" / "log.json"
            old = json.loads(previous.read_text()) if previous.exists() else {}
            results.update({k: v for k, v in old.items() if k.startswith("stats")})
            previous.write_text(json.dumps(results, indent=2))
            return
        gen = Path(args.keep) if args.keep else tmp / "transcripts"
        t = time.perf_counter()
        files = generate(gen, args.stats_mb * 2**20)
        print(f"generated {len(files)} transcripts, {sum(p.stat().st_size for p in files) / 2**20:.0f} MB "
              f"in {time.perf_counter() - t:.0f} s")
        small = files[: max(1, len(files) // 10)]
        results["stats_tenth"] = run_stats(small)
        results["stats_full"] = run_stats(files)
        for key in ("stats_tenth", "stats_full"):
            r = results[key]
            print(f"stats {r['mb']:7.0f} MB  {r['files']} files  {r['lines']} lines  {r['seconds']:.1f} s  "
                  f"{r['mb_per_s']:.1f} MB/s  peak RSS {r['rss_mb']:.0f} MB")
    out = ROOT / "bench" / "results" / "log.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
