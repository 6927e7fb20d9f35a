"""Benchmark `brain map` on real trees of Go, Rust, Java, C, C++ and JavaScript projects.

The trees come from bare git mirrors already on the machine (one folder per project,
``<owner>+<name>/repo``); nothing is downloaded and nothing of them is written to the
repository. Give the folder that holds them:

    .venv/bin/python bench/bench_map_langs.py --mirrors DIR [--only tokio-rs+tokio ...] [--repeat 3]
        [--copies tokio-rs+tokio=4]   # also a real ~2,000-file tree: 4 copies of tokio side by side
    (or BRAIN_BENCH_MIRRORS=DIR)

For each project: its HEAD is extracted with ``git archive`` into a temporary folder and
committed to a fresh git repository (so brain lists files as it would in a clone), source
files are counted per language, and each measured run is a real ``python -m brain map
--json`` process (wall time, CPU time and peak RSS from wait4): cold (no cards, no
caches), no-op (nothing changed), one file changed (a comment appended to the largest
source file of the project's main language), plus the one-file refresh timed in process
through the library. Targets: cold <= 10 s for 2,000 source files on 2 cores, no-op <=
0.5 s, one file changed <= 0.3 s, peak memory <= 300 MB. Writes
bench/results/map-langs.json with the figures and the machine's load while they ran.
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
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

from bench_map import card_stats, run_brain  # noqa: E402

from brain.cards.discovery import file_language, scan  # noqa: E402

COMMENT = {"go": "//", "rust": "//", "java": "//", "kotlin": "//", "c": "/*", "cpp": "//", "node": "//", "python": "#"}


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def extract_tree(mirror: Path, dest: Path, copies: int = 1) -> None:
    """HEAD of the mirror in ``dest`` (or ``copies`` side by side in dest/copy-N/, a real tree of N times the files)."""
    dest.mkdir(parents=True)
    for index in range(copies):
        target = dest if copies == 1 else dest / f"copy-{index + 1}"
        target.mkdir(exist_ok=True)
        archive = subprocess.Popen(["git", "--git-dir", str(mirror), "archive", "HEAD"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
        archive.stdout.close()
        if archive.wait() != 0:
            raise SystemExit(f"git archive failed for {mirror}")
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(argv, cwd=dest, check=True, env=env, capture_output=True)


def count_files(tree: Path) -> tuple[dict[str, int], int, list]:
    """(source files per language among the files `brain map` sees, total, the listing)."""
    infos = scan(tree, prune=True)
    counts: dict[str, int] = {}
    for info in infos:
        lang = file_language(info.path)
        if lang and lang != "other":
            counts[lang] = counts.get(lang, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])), sum(counts.values()), infos


def bench_one(name: str, mirror: Path, work: Path, repeat: int, env: dict, copies: int = 1) -> dict:
    tree = work / (name if copies == 1 else f"{name}-x{copies}")
    extract_tree(mirror, tree, copies)
    counts, total, infos = count_files(tree)
    main_lang = next(iter(counts), "other")
    run_brain(tree, "init", "--json", env=env)
    cold, cold_rss, cold_cpu = [], [], []
    from bench_map import CPU

    for _ in range(repeat):
        for sub in ("modules", "runtime"):
            subprocess.run(["rm", "-rf", str(tree / ".brain" / sub)], check=True)
        wall, rss, data = run_brain(tree, "map", "--json", env=env)
        cold.append(wall)
        cold_rss.append(rss)
        cold_cpu.append(CPU[-1])
    cards = len(data.get("written", []))
    noop, noop_rss = [], []
    for _ in range(repeat):
        wall, rss, data = run_brain(tree, "map", "--json", env=env)
        noop.append(wall)
        noop_rss.append(rss)
        assert not data.get("written"), data.get("written")
    sources = [i for i in infos if file_language(i.path) == main_lang]
    target = max(sources, key=lambda i: (i.size, i.path)).path if sources else None
    one, one_rss, in_process = [], [], []
    if target:
        path = tree / target
        original = path.read_bytes()
        mark = COMMENT.get(main_lang, "//")
        for i in range(repeat):
            path.write_bytes(original + f"\n{mark} bench touch {i}{' */' if mark == '/*' else ''}\n".encode())
            wall, rss, data = run_brain(tree, "map", "--json", env=env)
            one.append(wall)
            one_rss.append(rss)
            assert len(data.get("written", [])) == 1, data.get("written")
        import brain as brainlib

        opened = brainlib.open(tree)
        for i in range(repeat):
            path.write_bytes(original + f"\n{mark} bench touch in process {i}{' */' if mark == '/*' else ''}\n".encode())
            started = time.perf_counter()
            report = opened.map()
            in_process.append(time.perf_counter() - started)
            assert len(report.written) == 1, report.written
        path.write_bytes(original)
    sizes, largest, n_cards, all_tokens = card_stats(tree)
    unread = sum(len(v) for v in (data.get("unread") or {}).values())
    return {
        "copies": copies,
        "files_by_language": counts,
        "source_files": total,
        "main_language": main_lang,
        "cards": n_cards,
        "cold_s": round(statistics.median(cold), 3),
        "cold_cpu_s": round(statistics.median(cold_cpu), 3),
        # scaled to the target's size only where the tree is big enough for the start-up cost not to dominate
        "cold_s_per_2000_files": round(statistics.median(cold) * 2000 / total, 2) if total >= 500 else None,
        "noop_s": round(statistics.median(noop), 3),
        "one_file_s_process": round(statistics.median(one), 3) if one else None,
        "one_file_s_in_process": round(statistics.median(in_process), 3) if in_process else None,
        "one_file_changed": target,
        "peak_rss_mb": max(cold_rss + noop_rss + one_rss),
        "exposes_tokens_median": int(statistics.median(sizes)) if sizes else 0,
        "largest_card": {"tokens": largest[0], "path": largest[1]},
        "all_cards_tokens": all_tokens,
        "files_not_read": unread,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", default=os.environ.get("BRAIN_BENCH_MIRRORS"),
                        help="folder holding <owner>+<name>/repo bare mirrors (or BRAIN_BENCH_MIRRORS)")
    parser.add_argument("--only", nargs="*", help="project folder names to run (default: every mirror found)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", nargs="*", default=[], metavar="NAME=N",
                        help="also measure NAME as N copies side by side (copy-1/ … copy-N/): a real tree of N times its "
                             "files, e.g. tokio-rs+tokio=4 for about 2,000 Rust files, instead of scaling a small run")
    parser.add_argument("--out", default=str(HERE / "results" / "map-langs.json"))
    args = parser.parse_args(argv)
    if not args.mirrors:
        parser.error("give --mirrors DIR or set BRAIN_BENCH_MIRRORS")
    mirrors = Path(args.mirrors)
    found = sorted(p.parent.name for p in mirrors.glob("*/repo") if (p / "HEAD").is_file())
    names = [n for n in found if not args.only or n in args.only]
    if not names:
        parser.error(f"no mirror found in {mirrors} (expected <owner>+<name>/repo)")
    env = {key: value for key, value in os.environ.items() if key not in ("BRAIN_DIR", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(ROOT / "src")
    results: dict = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
                     "load_before": load(), "repeat": args.repeat,
                     "targets": {"cold_s_per_2000_files": 10, "noop_s": 0.5, "one_file_s": 0.3, "peak_rss_mb": 300},
                     "projects": {}}
    with tempfile.TemporaryDirectory(prefix="brain-bench-langs-") as tmp:
        env["BRAIN_HOME"] = str(Path(tmp) / "home")
        runs = [(name, 1) for name in names]
        for spec in args.copies:
            name, _, count = spec.partition("=")
            if not count.isdigit() or int(count) < 2 or not (mirrors / name / "repo" / "HEAD").is_file():
                parser.error(f"--copies wants NAME=N with N >= 2 and a mirror NAME: {spec!r}")
            runs.append((name, int(count)))
        for name, copies in runs:
            figures = bench_one(name, mirrors / name / "repo", Path(tmp), args.repeat, env, copies)
            if copies > 1:
                name = f"{name} x{copies}"
            results["projects"][name] = figures
            print(f"{name:34} {figures['source_files']:5} files ({', '.join(f'{k} {v}' for k, v in figures['files_by_language'].items())})")
            per_2000 = figures["cold_s_per_2000_files"]
            print(f"{'':34} cold {figures['cold_s']:.2f} s (cpu {figures['cold_cpu_s']:.2f} s"
                  + (f", {per_2000:.2f} s per 2,000 files" if per_2000 is not None else "") + f")  no-op {figures['noop_s']:.2f} s  one file {figures['one_file_s_process']} s process / "
                  f"{figures['one_file_s_in_process']} s in process  peak {figures['peak_rss_mb']} MB  "
                  f"{figures['cards']} cards, Exposes median {figures['exposes_tokens_median']} tokens")
            sys.stdout.flush()
    results["load_after"] = load()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"load before {results['load_before']}, after {results['load_after']}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
