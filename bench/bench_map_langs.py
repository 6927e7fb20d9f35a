"""Benchmark `brain map` and `brain boot --task` on real trees of Go, Rust, Java, C, C++ and JavaScript/TypeScript
projects, beside aider's repo map on the same trees in the same run.

The trees come from bare git mirrors already on the machine (one folder per project,
``<owner>+<name>/repo``); nothing is downloaded and nothing of them is written to the
repository. Give the folder that holds them:

    .venv/bin/python bench/bench_map_langs.py --mirrors DIR [--only tokio-rs+tokio ...] [--repeat 3]
        [--copies tokio-rs+tokio=4]   # also a real ~2,000-file tree: 4 copies of tokio side by side
        [--aider-python PY | --aider-python '']   # default: bench/.cache/aider-venv if present
        [--boots 5]                   # task texts booted per project (0: no boot timing)
    (or BRAIN_BENCH_MIRRORS=DIR)

For each project: its HEAD is extracted with ``git archive`` into a temporary folder and
committed to a fresh git repository (so brain lists files as it would in a clone), source
files are counted per language, and each measured run is a real ``python -m brain map
--json`` process (wall time, CPU time and peak RSS from wait4): cold (no cards, no
caches), no-op (nothing changed), one file changed (a comment appended to the largest
source file of the project's main language), plus the one-file refresh timed in process
through the library. Targets: cold <= 10 s for 2,000 source files on 2 cores, no-op <=
0.5 s, one file changed <= 0.3 s, peak memory <= 300 MB.

aider's repo map (bench_map.py's driver and helpers: aider-chat 0.86.2 in its own venv,
network cut off, tokens counted by brain's estimator) is then timed on a copy of the same
tree, given the same source files brain's modules read (every file of brain's languages in
`brain map --list`): cold with its tag cache deleted, warm (the no-op's counterpart) and after
the same one-file change; ratios are brain/aider (below 1: brain takes less). One untimed
aider run counts per file extension the files aider has a tag query for and finds
definitions in, so a language aider cannot parse offline is named in the output, not
silently dropped.

`brain boot --task TEXT --json --no-record` is then timed as a CLI process (after `brain
index`), each task text ``--repeat`` times: median and p95 per project. The texts are the
first ``--boots`` bug reports of the project in the multi-language dev set
(../shared/bench/multilang-dev.jsonl), or, for a project that has none there, the plausible
reports written below (MONOREPO_TASKS). Copies are not booted.

Writes bench/results/map-langs.json with the figures and the machine's load while they ran,
and prints a markdown table of them.
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
sys.path.insert(0, str(HERE))

from bench_map import (AIDER_VENV_PYTHON, CPU, aider_figures, aider_ratios, card_stats,  # noqa: E402
                       run_brain, run_process)
from locbench import BUDGET, load_tasks, percentile, shared_tasks  # noqa: E402

from brain.cards.discovery import file_language, scan  # noqa: E402

COMMENT = {"go": "//", "rust": "//", "java": "//", "kotlin": "//", "c": "/*", "cpp": "//", "node": "//", "python": "#"}

# Plausible bug reports for a project the dev set has no task of (the JavaScript/TypeScript monorepo),
# written like the issues its users file; only their boot time is measured.
MONOREPO_TASKS = {
    "jestjs/jest": [
        "jest.useFakeTimers() with advanceTimersByTime does not run a setInterval callback that was scheduled "
        "from inside a queueMicrotask callback. With legacy fake timers it works; with modern fake timers the "
        "interval never fires and the test times out after 5000 ms.",
        "toMatchInlineSnapshot fails to write the snapshot when prettier 3 is installed: 'TypeError: "
        "prettier.resolveConfig.sync is not a function'. Running jest --ci=false -u does not update the inline "
        "snapshot in the test file.",
        "moduleNameMapper with a regex capture group ('^@app/(.*)$': '<rootDir>/src/$1') resolves the wrong file "
        "when the path also matches a haste module name; the resolver returns the node_modules package instead "
        "of the mapped file. Could not locate module @app/utils mapped as ...",
        "expect(received).toHaveBeenCalledWith(expected) prints a confusing diff when an argument is a Map "
        "containing undefined values: the diff shows both maps as equal but the matcher fails. Same with Set "
        "and asymmetric matchers like expect.any(Number).",
        "jest --watch does not re-run the related tests after a file is renamed with git mv; the haste map keeps "
        "the old path and 'No tests found related to files changed since last commit' is printed until jest is "
        "restarted with --clearCache.",
    ],
}


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


def comment_touch(lang: str, label: str = ""):
    """touch(original bytes, run number): the file with one comment line appended (the one-file change)."""
    mark = COMMENT.get(lang, "//")
    close = " */" if mark == "/*" else ""

    def touch(original: bytes, i: int) -> bytes:
        return original + f"\n{mark} bench touch {label}{i}{close}\n".encode()

    return touch


def source_files(tree: Path, env: dict) -> list[str]:
    """The files of brain's modules in brain's languages (what aider is given): `brain map --list`."""
    _wall, _rss, listed = run_brain(tree, "map", "--list", "--json", env=env)
    files = {path for module in listed for path in module["files"]}
    return sorted(path for path in files if file_language(path) not in (None, "other"))


def task_texts(repo: str, dev_tasks: list[dict], count: int) -> tuple[list[str], str]:
    """(up to ``count`` task texts for ``repo``, where they come from)."""
    texts = [t["problem_statement"] for t in dev_tasks if t["repo"] == repo][:count]
    if texts:
        return texts, "multilang dev set"
    return MONOREPO_TASKS.get(repo, [])[:count], "written in bench_map_langs.py"


def bench_boot(tree: Path, texts: list[str], repeat: int, env: dict) -> dict:
    """`brain index`, then each text booted ``repeat`` times as a CLI process: wall seconds median, p95, max."""
    wall, _rss, _cpu, code, _out, err = run_process([sys.executable, "-m", "brain", "index", "--quiet"], tree, env)
    if code != 0:
        raise SystemExit(f"brain index failed ({code}): {err.decode()[-2000:]}")
    index_s = wall
    seconds, cpus, peaks, tokens = [], [], [], []
    for text in texts:
        for _ in range(repeat):
            wall, rss, cpu, code, out, err = run_process(
                [sys.executable, "-m", "brain", "boot", "--task", text, "--budget", str(BUDGET), "--json",
                 "--no-record"], tree, env)
            if code != 0:
                raise SystemExit(f"brain boot failed ({code}): {err.decode()[-2000:]}")
            seconds.append(wall)
            cpus.append(cpu)
            peaks.append(rss)
            tokens.append(json.loads(out)["tokens"])
    return {
        "tasks": len(texts), "runs": len(seconds), "index_s_process": round(index_s, 3),
        "median_s": round(statistics.median(seconds), 3), "p95_s": round(percentile(seconds, 0.95), 3),
        "max_s": round(max(seconds), 3), "median_cpu_s": round(statistics.median(cpus), 3),
        "peak_rss_mb": max(peaks), "tokens_median": int(statistics.median(tokens)), "budget": BUDGET,
    }


def bench_one(name: str, mirror: Path, work: Path, repeat: int, env: dict, copies: int = 1, *,
              aider_python: str | None = None, map_tokens: int = 8192, boot_texts: list[str] | None = None) -> dict:
    tree = work / (name if copies == 1 else f"{name}-x{copies}")
    extract_tree(mirror, tree, copies)
    counts, total, infos = count_files(tree)
    main_lang = next(iter(counts), "other")
    run_brain(tree, "init", "--json", env=env)
    cold, cold_rss, cold_cpu = [], [], []

    for _ in range(repeat):
        for sub in ("modules", "runtime"):
            subprocess.run(["rm", "-rf", str(tree / ".brain" / sub)], check=True)
        wall, rss, data = run_brain(tree, "map", "--json", env=env)
        cold.append(wall)
        cold_rss.append(rss)
        cold_cpu.append(CPU[-1])
    noop, noop_rss, noop_cpu = [], [], []
    for _ in range(repeat):
        wall, rss, data = run_brain(tree, "map", "--json", env=env)
        noop.append(wall)
        noop_rss.append(rss)
        noop_cpu.append(CPU[-1])
        assert not data.get("written"), data.get("written")
    sources = [i for i in infos if file_language(i.path) == main_lang]
    target = max(sources, key=lambda i: (i.size, i.path)).path if sources else None
    touch = comment_touch(main_lang)
    one, one_rss, one_cpu, in_process = [], [], [], []
    if target:
        path = tree / target
        original = path.read_bytes()
        for i in range(repeat):
            path.write_bytes(touch(original, i))
            wall, rss, data = run_brain(tree, "map", "--json", env=env)
            one.append(wall)
            one_rss.append(rss)
            one_cpu.append(CPU[-1])
            assert len(data.get("written", [])) == 1, data.get("written")
        import brain as brainlib

        opened = brainlib.open(tree)
        touch_in_process = comment_touch(main_lang, "in process ")
        for i in range(repeat):
            path.write_bytes(touch_in_process(original, i))
            started = time.perf_counter()
            report = opened.map()
            in_process.append(time.perf_counter() - started)
            assert len(report.written) == 1, report.written
        path.write_bytes(original)
    sizes, largest, n_cards, all_tokens = card_stats(tree)
    unread = sum(len(v) for v in (data.get("unread") or {}).values())
    figures = {
        "copies": copies,
        "files_by_language": counts,
        "source_files": total,
        "main_language": main_lang,
        "cards": n_cards,
        "load_1_5_15": load(),
        "cold_s": round(statistics.median(cold), 3),
        "cold_cpu_s": round(statistics.median(cold_cpu), 3),
        # scaled to the target's size only where the tree is big enough for the start-up cost not to dominate
        "cold_s_per_2000_files": round(statistics.median(cold) * 2000 / total, 2) if total >= 500 else None,
        "noop_s_process": round(statistics.median(noop), 3),
        "noop_cpu_s": round(statistics.median(noop_cpu), 3),
        "one_file_s_process": round(statistics.median(one), 3) if one else None,
        "one_file_cpu_s": round(statistics.median(one_cpu), 3) if one else None,
        "one_file_s_in_process": round(statistics.median(in_process), 3) if in_process else None,
        "one_file_changed": target,
        "peak_rss_mb": max(cold_rss + noop_rss + one_rss),
        "exposes_tokens_median": int(statistics.median(sizes)) if sizes else 0,
        "largest_card": {"tokens": largest[0], "path": largest[1]},
        "all_cards_tokens": all_tokens,
        "files_not_read": unread,
    }
    given = source_files(tree, env)
    figures["aider_files"] = len(given)
    if target and target not in given:
        aider = {"skipped": f"the changed file {target} is not among the files of brain's modules"}
    elif not target:
        aider = {"skipped": "no source file to change"}
    else:
        aider = aider_figures(aider_python, tree, work, repeat, map_tokens, given, touched=target, touch=touch,
                              name=f"aider-{tree.name}", files_given="the source files of brain's modules",
                              coverage=True)
    if "skipped" not in aider:
        aider["ratios_brain_over_aider"] = aider_ratios(aider, figures)
        aider["not_parsed"] = not_parsed(aider["coverage"])
    figures["aider"] = aider
    if boot_texts:
        figures["boot"] = bench_boot(tree, boot_texts, repeat, env)
    shutil.rmtree(work / f"aider-{tree.name}", ignore_errors=True)
    shutil.rmtree(tree, ignore_errors=True)
    return figures


def not_parsed(coverage: dict) -> dict[str, int]:
    """Extensions (with their file counts) aider has no tag query for offline: it names such files, unparsed."""
    return {ext: row["files"] for ext, row in coverage.items() if not row["tag_query"]}


def print_project(name: str, f: dict) -> None:
    langs = ", ".join(f"{k} {v}" for k, v in f["files_by_language"].items())
    print(f"{name}: {f['source_files']} source files ({langs}); load {f['load_1_5_15']}")
    per_2000 = f["cold_s_per_2000_files"]
    print(f"  brain  cold {f['cold_s']:.2f} s (cpu {f['cold_cpu_s']:.2f} s"
          + (f", {per_2000:.2f} s per 2,000 files" if per_2000 is not None else "")
          + f")  no-op {f['noop_s_process']:.2f} s  one file {f['one_file_s_process']} s process / "
          f"{f['one_file_s_in_process']} s in process  peak {f['peak_rss_mb']} MB  "
          f"{f['cards']} cards, Exposes median {f['exposes_tokens_median']} tokens")
    a = f["aider"]
    if "skipped" in a:
        print(f"  aider  skipped: {a['skipped']}")
    else:
        r = a["ratios_brain_over_aider"]
        with_defs = sum(row["files_with_definitions"] for row in a["coverage"].values())
        print(f"  aider  cold {a['cold_s']:.2f} s (cpu {a['cold_cpu_s']:.2f} s)  warm {a['warm_s']:.2f} s  "
              f"one file {a['one_file_s']:.2f} s  peak {a['peak_rss_mb']} MB; map {a['map_tokens']} tokens naming "
              f"{a['map_files']} of {a['files']} files; definitions found in {with_defs} files")
        if a["not_parsed"]:
            print("         aider has no offline tag query for " + ", ".join(f"{ext} ({n} files)" for ext, n in
                                                                         a["not_parsed"].items())
                  + ": it lists them by name only")
        print(f"  brain/aider  cold {r['cold']} wall ({r['cold_cpu']} cpu)  no-op/warm {r['noop_vs_warm']}  "
              f"one file {r['one_file']}  peak memory {r['peak_rss']}")
    if "boot" in f:
        b = f["boot"]
        print(f"  brain boot --task  {b['tasks']} texts x {b['runs'] // max(b['tasks'], 1)}: median {b['median_s']:.3f} s "
              f"(cpu {b['median_cpu_s']:.3f} s)  "
              f"p95 {b['p95_s']:.3f} s  max {b['max_s']:.3f} s  peak {b['peak_rss_mb']} MB  "
              f"(index built in {b['index_s_process']:.1f} s; {f['boot_source']})")
    sys.stdout.flush()


def markdown_table(projects: dict) -> str:
    """One row per project: brain's figures, aider's, the ratios brain/aider and the CLI boot."""
    head = ("| project | source files | brain cold s | aider cold s | cold ratio | brain no-op s | aider warm s | "
            "no-op ratio | brain one file s | aider one file s | one-file ratio | brain peak MB | aider peak MB | "
            "boot median s (cpu) | boot p95 s | load |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, f in projects.items():
        a, b = f["aider"], f.get("boot")
        ok = "skipped" not in a
        r = a.get("ratios_brain_over_aider", {})

        def cell(value):
            return "–" if value is None else f"{value}"

        rows.append("| " + " | ".join([
            name, str(f["source_files"]),
            f"{f['cold_s']:.2f}", cell(a.get("cold_s")) if ok else "–", cell(r.get("cold")),
            f"{f['noop_s_process']:.2f}", cell(a.get("warm_s")) if ok else "–", cell(r.get("noop_vs_warm")),
            cell(f["one_file_s_process"]), cell(a.get("one_file_s")) if ok else "–", cell(r.get("one_file")),
            str(f["peak_rss_mb"]), cell(a.get("peak_rss_mb")) if ok else "–",
            f"{b['median_s']} ({b['median_cpu_s']})" if b else "–", cell(b and b["p95_s"]), f["load_1_5_15"].split()[0],
        ]) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", default=os.environ.get("BRAIN_BENCH_MIRRORS"),
                        help="folder holding <owner>+<name>/repo bare mirrors (or BRAIN_BENCH_MIRRORS)")
    parser.add_argument("--only", nargs="*", help="project folder names to run (default: every mirror found)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", nargs="*", default=[], metavar="NAME=N",
                        help="also measure NAME as N copies side by side (copy-1/ … copy-N/): a real tree of N times its "
                             "files, e.g. tokio-rs+tokio=4 for about 2,000 Rust files, instead of scaling a small run")
    parser.add_argument("--aider-python", default=str(AIDER_VENV_PYTHON) if AIDER_VENV_PYTHON.exists() else "",
                        help="the python of a venv with aider-chat (default: bench/.cache/aider-venv if present; "
                             "'' skips aider)")
    parser.add_argument("--aider-map-tokens", type=int, default=8192,
                        help="aider's map budget (8192: its budget with no files in the chat, 1024 x 8)")
    parser.add_argument("--boots", type=int, default=5, help="task texts booted per project (0: no boot timing)")
    parser.add_argument("--tasks", default=str(shared_tasks("multilang-dev.jsonl")),
                        help="the dev set whose bug reports are the boot texts")
    parser.add_argument("--out", default=str(HERE / "results" / "map-langs.json"))
    parser.add_argument("--table", metavar="JSON", help="only print the markdown table of a results file written before")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown_table(json.loads(Path(args.table).read_text())["projects"]))
        return 0
    if not args.mirrors:
        parser.error("give --mirrors DIR or set BRAIN_BENCH_MIRRORS")
    mirrors = Path(args.mirrors)
    found = sorted(p.parent.name for p in mirrors.glob("*/repo") if (p / "HEAD").is_file())
    names = [n for n in found if not args.only or n in args.only]
    if not names:
        parser.error(f"no mirror found in {mirrors} (expected <owner>+<name>/repo)")
    dev_tasks = load_tasks(args.tasks) if args.boots and Path(args.tasks).is_file() else []
    env = {key: value for key, value in os.environ.items() if key not in ("BRAIN_DIR", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(ROOT / "src")
    results: dict = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
                     "load_before": load(), "repeat": args.repeat,
                     "targets": {"cold_s_per_2000_files": 10, "noop_s": 0.5, "one_file_s": 0.3, "peak_rss_mb": 300,
                                 "boot_median_s": 0.5},
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
            texts, source = task_texts(name.replace("+", "/", 1), dev_tasks, args.boots) if copies == 1 else ([], "")
            figures = bench_one(name, mirrors / name / "repo", Path(tmp), args.repeat, env, copies,
                                aider_python=args.aider_python, map_tokens=args.aider_map_tokens, boot_texts=texts)
            if texts:
                figures["boot_source"] = source
            if copies > 1:
                name = f"{name} x{copies}"
            results["projects"][name] = figures
            print_project(name, figures)
    results["load_after"] = load()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(markdown_table(results["projects"]))
    print(f"\nload before {results['load_before']}, after {results['load_after']}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
