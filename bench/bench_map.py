"""Benchmark `brain map` on Django 4.2's source release: cold, no-op, one-file change, memory.

Prepare the tree once (network: PyPI only):

    pip download --no-deps --no-binary :all: django==4.2 -d bench/.cache/sdists
    tar xzf bench/.cache/sdists/Django-4.2.tar.gz -C bench/.cache

Run:

    .venv/bin/python bench/bench_map.py [--tree bench/.cache/Django-4.2] [--repeat 3]

Each measured run is a real `python -m brain map --json` process (its wall time and
peak RSS from wait4, forked from a small launcher so the benchmark's own memory is not
counted in the child's peak), on a copy of the tree in a temporary folder, so the source
release stays untouched. Prints the figures and the targets (cold <= 10 s, no-op
<= 0.5 s, one-file change <= 0.3 s in process, peak memory <= 300 MB), the median
Exposes size in tokens and the largest card, and writes them to bench/results/map.json.

aider's repo map is timed on its own copy of the same tree in the same run, for the
ratios brain/aider, where a separate venv has aider-chat (its pinned tree-sitter and
numpy stay out of brain's venv). Prepare it once (network: PyPI only):

    python3 -m venv bench/.cache/aider-venv && bench/.cache/aider-venv/bin/pip install aider-chat==0.86.2

aider-chat 0.86.2 pins tree-sitter-language-pack 0.13.0, whose wheels ship the
compiled grammars (from 1.0 the pack downloads them at run time, which the driver
refuses). --aider-python picks another interpreter, --aider-python '' skips aider.
Each aider run is a process of that interpreter running bench/aider_map_driver.py:
aider's RepoMap with no files in the chat and, as the other files, the .py files of
brain's modules, so both read the same sources (--aider-files all: every .py file,
tests included); tokens are counted by brain's offline estimator, not litellm or
tiktoken. Its network is cut off by `unshare -n` where that works and its HOME is a
temporary folder. Runs: cold with aider's tag cache deleted, warm with the cache
from the previous run, and warm after the same one-file change as brain's. Ratios
are brain/aider (below 1: brain takes less).
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


AIDER_VENV_PYTHON = HERE / ".cache" / "aider-venv" / "bin" / "python"
AIDER_DRIVER = HERE / "aider_map_driver.py"
AIDER_PREPARE = ("python3 -m venv bench/.cache/aider-venv && "
                 "bench/.cache/aider-venv/bin/pip install aider-chat==0.86.2")


# Runs the measured process for run_process and reports its wall time, rusage and exit status. On Linux a
# child's peak RSS starts at its parent's RSS at fork time (the copied page tables count), so forking the
# measured process from this benchmark (tens of MB, more after in-process runs) would report at least that much
# for it; forking it from this small interpreter (-I -S: no site, a few MB) keeps that floor low.
LAUNCHER = """
import os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_pid, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
with open(sys.argv[1], "w") as out:
    out.write(f"{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime} {os.waitstatus_to_exitcode(status)}")
"""


def run_process(argv: list[str], cwd: Path, env: dict) -> tuple[float, int, float, int, bytes, bytes]:
    """(wall seconds, peak RSS in MB, CPU seconds, exit code, stdout, stderr) of one process.

    The process is started by LAUNCHER (see there), which times it from fork to exit and
    reaps it with wait4, so its rusage is its own. Output goes to temporary files, not
    pipes, so a chatty child cannot block on a full pipe while it runs.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rusage") as figures:
        code = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, figures.name, *argv], cwd=cwd, env=env,
                              stdout=out, stderr=err).returncode
        fields = figures.read().split()
        if len(fields) != 4:
            raise RuntimeError(f"the launcher failed ({code}) for {argv[0]}")
        wall, maxrss_kb, cpu, status = float(fields[0]), int(fields[1]), float(fields[2]), int(fields[3])
        out.seek(0)
        err.seek(0)
        return wall, maxrss_kb // 1024, cpu, status, out.read(), err.read()


CPU: list[float] = []  # CPU seconds (user + system) of the last run_brain, for a load-independent figure


def run_brain(repo: Path, *args: str, env: dict) -> tuple[float, int, dict]:
    """(wall seconds, peak RSS in MB, parsed JSON) of one `python -m brain ...` process."""
    wall, rss, cpu, code, out, err = run_process([sys.executable, "-m", "brain", *args], repo, env)
    CPU.append(cpu)
    if code not in (0, 1):
        raise SystemExit(f"brain {' '.join(args)} failed ({code}): {err.decode()[-2000:]}")
    data = json.loads(out) if out.strip() else {}
    return wall, rss, data


def card_stats(repo: Path) -> tuple[list[int], tuple[int, str], int, int]:
    """(Exposes sizes, (tokens, path) of the largest card, number of cards, tokens of all cards)."""
    sizes = []
    largest = (0, "")
    total = 0
    cards = sorted((repo / ".brain" / "modules").rglob("*.md"))
    for path in cards:
        text = path.read_text()
        tokens = estimate_tokens(text)
        total += tokens
        if tokens > largest[0]:
            largest = (tokens, path.relative_to(repo / ".brain").as_posix())
        sizes.append(estimate_tokens(parse_card(text).sections.get("Exposes", "")))
    return sizes, largest, len(cards), total


def network_guard() -> list[str]:
    """`unshare -n` (a new network namespace with no interfaces up) where it works here, else nothing."""
    if shutil.which("unshare") is None:
        return []
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return ["unshare", "-n"] if probe.returncode == 0 else []


def run_aider(guard: list[str], python: str, root: Path, env: dict, map_tokens: int, files: Path | None,
              result: Path) -> tuple[float, int, float, dict]:
    """(wall seconds, peak RSS in MB, CPU seconds, the driver's JSON) of one aider repo map process."""
    argv = [*guard, python, str(AIDER_DRIVER), str(root), "--tokens-module",
            str(ROOT / "src" / "brain" / "tokens.py"), "--out", str(result), "--map-tokens", str(map_tokens)]
    if files is not None:
        argv += ["--files-from", str(files)]
    result.unlink(missing_ok=True)
    wall, rss, cpu, code, _out, err = run_process(argv, root, env)
    if code != 0 or not result.is_file():
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the aider driver failed with exit code {code}: {last}")
    return wall, rss, cpu, json.loads(result.read_text())


def python_touch(original: bytes, i: int) -> bytes:
    """The one-file change of the Django run: a new function appended."""
    return original + f"\n\ndef _bench_touch_{i}():\n    return {i}\n".encode()


def bench_aider(python: str, tree: Path, work: Path, repeat: int, map_tokens: int, files: list[str] | None, *,
                touched: str = TOUCHED, touch=python_touch, name: str = "aider-django",
                files_given: str = "the .py files of brain's modules", coverage: bool = False) -> dict:
    """Cold, warm and one-file-changed runs of aider's repo map on a copy of ``tree``.

    ``files`` (relative paths) are the ones aider maps; None maps every .py file. ``touched`` is
    the file changed, ``touch(original bytes, run number)`` its changed content. The copy leaves
    out ``.brain``. With ``coverage``, one more (untimed) driver run counts per file extension
    the files aider parses and finds definitions in.
    """
    root = work / name
    shutil.copytree(tree, root, symlinks=True, ignore=shutil.ignore_patterns(".brain"))
    home = work / f"{name}-home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "BRAIN_DIR")}
    env["HOME"] = str(home)
    result = work / f"{name}-result.json"
    listing = None
    if files is not None:
        listing = work / f"{name}-files.txt"
        listing.write_text("".join(f"{path}\n" for path in files))
    guard = network_guard()
    before = {p.name for p in root.iterdir()}
    cold, cold_cpu, warm, warm_cpu, one, one_cpu, rss = [], [], [], [], [], [], []
    for _ in range(repeat):
        for cache in root.glob(".aider.tags.cache.v*"):
            shutil.rmtree(cache)
        wall, peak, cpu, data = run_aider(guard, python, root, env, map_tokens, listing, result)
        cold.append(wall)
        cold_cpu.append(cpu)
        rss.append(peak)
    for _ in range(repeat):
        wall, peak, cpu, data = run_aider(guard, python, root, env, map_tokens, listing, result)
        warm.append(wall)
        warm_cpu.append(cpu)
        rss.append(peak)
    target = root / touched
    original = target.read_bytes()
    for i in range(repeat):
        target.write_bytes(touch(original, i))
        wall, peak, cpu, _data = run_aider(guard, python, root, env, map_tokens, listing, result)
        one.append(wall)
        one_cpu.append(cpu)
        rss.append(peak)
    target.write_bytes(original)
    covered = {}
    if coverage:
        result.unlink(missing_ok=True)
        argv = [*guard, python, str(AIDER_DRIVER), str(root), "--tokens-module", str(ROOT / "src" / "brain" / "tokens.py"),
                "--out", str(result), "--map-tokens", str(map_tokens), "--coverage"]
        if listing is not None:
            argv += ["--files-from", str(listing)]
        *_times, code, _out, err = run_process(argv, root, env)
        if code != 0 or not result.is_file():
            last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"the aider driver's coverage run failed with exit code {code}: {last}")
        covered = {"coverage": json.loads(result.read_text())["coverage"]}
    new_in_tree = sorted({p.name for p in root.iterdir()} - before)
    written_in_home = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    return {
        "cold_s": round(statistics.median(cold), 3),
        "cold_cpu_s": round(statistics.median(cold_cpu), 3),
        "warm_s": round(statistics.median(warm), 3),
        "warm_cpu_s": round(statistics.median(warm_cpu), 3),
        "one_file_s": round(statistics.median(one), 3),
        "one_file_cpu_s": round(statistics.median(one_cpu), 3),
        "peak_rss_mb": max(rss),
        "network": "cut off (unshare -n)" if guard else "not cut off (unshare -n unavailable)",
        "files_given": files_given if files is not None else "every .py file",
        "new_in_tree": new_in_tree,
        "written_in_home": written_in_home,
        **{key: value for key, value in data.items() if key != "seconds_in_process"},
        **covered,
    }


def aider_ratios(aider: dict, figures: dict) -> dict:
    """brain's figure over aider's for the same run kind (below 1: brain takes less)."""
    pairs = {"cold": ("cold_s", "cold_s"), "cold_cpu": ("cold_cpu_s", "cold_cpu_s"),
             "noop_vs_warm": ("noop_s_process", "warm_s"), "noop_vs_warm_cpu": ("noop_cpu_s", "warm_cpu_s"),
             "one_file": ("one_file_s_process", "one_file_s"), "one_file_cpu": ("one_file_cpu_s", "one_file_cpu_s"),
             "peak_rss": ("peak_rss_mb", "peak_rss_mb")}
    return {name: round(figures[ours] / aider[theirs], 3) if aider[theirs] else None
            for name, (ours, theirs) in pairs.items()}


def aider_lines(aider: dict, figures: dict) -> list[str]:
    """The printed comparison: what each side produces, then the times and ratios brain/aider."""
    if "skipped" in aider:
        return [f"aider comparison: skipped ({aider['skipped']})"]
    ratio = {name: "n/a" if value is None else f"{value:.3f}"
             for name, value in aider["ratios_brain_over_aider"].items()}
    return [
        f"aider {aider['aider_chat']} repo map on the same tree ({aider['grammar_package']} grammars from its wheels, "
        f"network {aider['network']}, tokens by brain's offline estimator; "
        "ratios brain/aider, below 1: brain takes less)",
        f"  aider produces   one ranked map of {aider['map_tokens']} tokens (budget {aider['map_budget_tokens']}) "
        f"naming {aider['map_files']} of the {aider['files']} files given ({aider['files_given']})",
        f"  brain produces   {figures['cards']} cards, one per module, {figures['cards_tokens']} tokens in all, "
        f"from {figures['module_files']} files ({figures['module_py_files']} .py)",
        f"  cold map                  {aider['cold_s']:7.3f} s   wall, {aider['cold_cpu_s']:.3f} s CPU "
        f"(tag cache deleted); brain/aider {ratio['cold']} wall, {ratio['cold_cpu']} CPU",
        f"  warm re-run               {aider['warm_s']:7.3f} s   wall, {aider['warm_cpu_s']:.3f} s CPU "
        f"(tag cache present); brain no-op/aider {ratio['noop_vs_warm']} wall, {ratio['noop_vs_warm_cpu']} CPU",
        f"  one file changed          {aider['one_file_s']:7.3f} s   wall, {aider['one_file_cpu_s']:.3f} s CPU; "
        f"brain/aider {ratio['one_file']} wall, {ratio['one_file_cpu']} CPU",
        f"  peak memory               {aider['peak_rss_mb']:7d} MB; brain/aider {ratio['peak_rss']}",
    ]


def aider_figures(python: str | None, tree: Path, work: Path, repeat: int, map_tokens: int,
                  files: list[str] | None, **options) -> dict:
    """bench_aider's figures (``options`` go to it), or {"skipped": why} when there is no aider
    interpreter or its run failed."""
    if not python:
        if AIDER_VENV_PYTHON.exists():
            return {"skipped": "--aider-python was empty"}
        return {"skipped": f"no aider venv at bench/.cache/aider-venv; prepare it with: {AIDER_PREPARE}"}
    if not Path(python).exists():
        return {"skipped": f"{python} does not exist; prepare the aider venv with: {AIDER_PREPARE}"}
    try:
        return bench_aider(python, tree, work, repeat, map_tokens, files, **options)
    except RuntimeError as err:
        return {"skipped": str(err)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(HERE / ".cache" / "Django-4.2"), help="the unpacked source release")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is reported)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--aider-python", default=str(AIDER_VENV_PYTHON) if AIDER_VENV_PYTHON.exists() else "",
                        help="the python of a venv with aider-chat (default: bench/.cache/aider-venv if present; "
                             "'' skips aider)")
    parser.add_argument("--aider-map-tokens", type=int, default=8192,
                        help="aider's map budget (8192: its budget with no files in the chat, 1024 x 8)")
    parser.add_argument("--aider-files", choices=("brain", "all"), default="brain",
                        help="what aider maps: the .py files of brain's modules (default) or every .py file")
    parser.add_argument("--out", default=str(HERE / "results" / "map.json"), help="where to write the figures")
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
            target.write_bytes(python_touch(original, i))
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
        sizes, largest, cards, cards_tokens = card_stats(repo)
        _wall, _peak, listed = run_brain(repo, "map", "--list", "--json", env=env)
        module_files = sorted(path for module in listed for path in module["files"])
        module_py = [path for path in module_files if path.endswith(".py")]
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
            "cards_tokens": cards_tokens,
            "module_files": len(module_files),
            "module_py_files": len(module_py),
        }
        figures["aider"] = aider_figures(args.aider_python, tree, work, args.repeat, args.aider_map_tokens,
                                         module_py if args.aider_files == "brain" else None)
        if "skipped" not in figures["aider"]:
            figures["aider"]["ratios_brain_over_aider"] = aider_ratios(figures["aider"], figures)
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
        for line in aider_lines(figures["aider"], figures):
            print("  " + line)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
        if args.json:
            print(json.dumps(figures, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
