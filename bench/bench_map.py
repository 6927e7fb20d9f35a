"""Benchmark `brain map` on Django 4.2's source release: cold, no-op, one-file change, memory.

Prepare the tree once (network: PyPI only):

    pip download --no-deps --no-binary :all: django==4.2 -d bench/.cache/sdists
    tar xzf bench/.cache/sdists/Django-4.2.tar.gz -C bench/.cache

Run:

    .venv/bin/python bench/bench_map.py [--tree bench/.cache/Django-4.2] [--repeat 3]

Each measured run is a real `python -m brain map --json` process (its wall time and
peak RSS from wait4), on a copy of the tree in a temporary folder, so the source
release stays untouched. Prints the figures and the targets (cold <= 10 s, no-op
<= 0.5 s, one-file change <= 0.3 s in process, peak memory <= 300 MB), the median
Exposes size in tokens and the largest card. Where `aider` is importable its repo map
is timed on the same tree for a ratio; otherwise that line says it was skipped.
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from brain.cards.markers import parse_card  # noqa: E402
from brain.tokens import estimate_tokens  # noqa: E402

TOUCHED = "django/db/models/query.py"


CPU: list[float] = []  # CPU seconds (user + system) of the last run_brain, for a load-independent figure


def run_brain(repo: Path, *args: str, env: dict) -> tuple[float, int, dict]:
    """(wall seconds, peak RSS in MB, parsed JSON) of one `python -m brain ...` process."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "brain", *args], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = b"", b""
    out = proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    CPU.append(usage.ru_utime + usage.ru_stime)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"brain {' '.join(args)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    data = json.loads(out) if out.strip() else {}
    return wall, usage.ru_maxrss // 1024, data


def card_stats(repo: Path) -> tuple[list[int], tuple[int, str], int]:
    sizes = []
    largest = (0, "")
    cards = sorted((repo / ".brain" / "modules").rglob("*.md"))
    for path in cards:
        text = path.read_text()
        tokens = estimate_tokens(text)
        if tokens > largest[0]:
            largest = (tokens, path.relative_to(repo / ".brain").as_posix())
        sizes.append(estimate_tokens(parse_card(text).sections.get("Exposes", "")))
    return sizes, largest, len(cards)


def aider_ratio(tree: Path, brain_cold: float) -> str:
    try:
        import aider  # noqa: F401
    except ImportError:
        return "aider comparison: skipped (aider-chat is not installed in this environment)"
    return "aider comparison: aider is importable but its repo map needs a model configuration; not timed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(HERE / ".cache" / "Django-4.2"), help="the unpacked source release")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is reported)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    tree = Path(args.tree)
    if not (tree / "django" / "__init__.py").is_file():
        print(__doc__)
        print(f"error: {tree} is not an unpacked Django source release", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-map-"))
    env = {**os.environ, "BRAIN_HOME": str(work / "home"), "PYTHONPATH": str(ROOT / "src")}
    env.pop("BRAIN_DIR", None)
    try:
        repo = work / "django"
        shutil.copytree(tree, repo, symlinks=True)
        subprocess.run([sys.executable, "-m", "brain", "init"], cwd=repo, env=env, check=True, capture_output=True)
        cold, cold_rss, noop, noop_inproc, touch, touch_inproc, rss = [], [], [], [], [], [], []
        cold_cpu, noop_cpu, touch_cpu = [], [], []
        for _ in range(args.repeat):
            shutil.rmtree(repo / ".brain" / "modules", ignore_errors=True)
            shutil.rmtree(repo / ".brain" / "runtime", ignore_errors=True)
            wall, peak, data = run_brain(repo, "map", "--json", env=env)
            cold.append(wall)
            cold_cpu.append(CPU[-1])
            cold_rss.append(peak)
            modules = len(data["modules"])
            written = len(data["written"])
        for _ in range(args.repeat):
            wall, peak, data = run_brain(repo, "map", "--json", env=env)
            assert not data["written"], data["written"]
            noop.append(wall)
            noop_cpu.append(CPU[-1])
            noop_inproc.append(data["seconds"])
            rss.append(peak)
        target = repo / TOUCHED
        original = target.read_bytes()
        for i in range(args.repeat):
            target.write_bytes(original + f"\n\ndef _bench_touch_{i}():\n    return {i}\n".encode())
            wall, peak, data = run_brain(repo, "map", "--json", env=env)
            assert data["written"] == ["django/db/models"], data["written"]
            touch.append(wall)
            touch_cpu.append(CPU[-1])
            touch_inproc.append(data["seconds"])
            rss.append(peak)
        target.write_bytes(original)
        run_brain(repo, "map", "--json", env=env)
        wall, _peak, data = run_brain(repo, "map", "--check", "--json", env=env)
        check_wall = wall
        sizes, largest, cards = card_stats(repo)
        figures = {
            "cores": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
            "cold_cpu_s": round(statistics.median(cold_cpu), 3),
            "noop_cpu_s": round(statistics.median(noop_cpu), 3),
            "one_file_cpu_s": round(statistics.median(touch_cpu), 3),
            "modules": modules,
            "cards_written_cold": written,
            "cold_s": round(statistics.median(cold), 3),
            "noop_s_process": round(statistics.median(noop), 3),
            "noop_s_in_process": round(statistics.median(noop_inproc), 3),
            "one_file_s_process": round(statistics.median(touch), 3),
            "one_file_s_in_process": round(statistics.median(touch_inproc), 3),
            "check_s_process": round(check_wall, 3),
            "peak_rss_mb": max(cold_rss + rss),
            "median_exposes_tokens": int(statistics.median(sizes)) if sizes else 0,
            "largest_card": {"path": largest[1], "tokens": largest[0]},
            "cards": cards,
        }
        print(f"brain map on Django 4.2 ({figures['modules']} modules, {figures['cores']} cores, median of {args.repeat}, "
              f"load average {figures['load_average_1min']})")
        print(f"  cold map                  {figures['cold_s']:7.3f} s   wall, {figures['cold_cpu_s']:.3f} s CPU (target <= 10 s)")
        print(f"  no-op re-run              {figures['noop_s_process']:7.3f} s   wall, {figures['noop_cpu_s']:.3f} s CPU, "
              f"{figures['noop_s_in_process']:.3f} s in process (target <= 0.5 s)")
        print(f"  one file changed          {figures['one_file_s_process']:7.3f} s   wall, {figures['one_file_cpu_s']:.3f} s CPU, "
              f"{figures['one_file_s_in_process']:.3f} s in process (target <= 0.3 s)")
        print(f"  map --check               {figures['check_s_process']:7.3f} s   process")
        print(f"  peak memory               {figures['peak_rss_mb']:7d} MB  (target <= 300 MB)")
        print(f"  median Exposes section    {figures['median_exposes_tokens']:7d} tokens over {cards} cards")
        print(f"  largest card              {largest[0]:7d} tokens ({largest[1]})")
        print("  " + aider_ratio(tree, figures["cold_s"]))
        if args.json:
            print(json.dumps(figures, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
