"""Helpers shared by the localization benchmarks (Django releases, multi-language repositories).

Both build a brain on a source tree once (`brain init`, `brain map`, the index), boot each
task's report under the same token budget, and score the boot's ranked `files` against the
files the real fix changed, beside a BM25-over-files baseline on the same index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["BUDGET", "prepare", "boot", "rank_of", "bm25_files", "load_tasks", "pick_tasks", "percentile", "shared_tasks",
           "write_results", "git_dir", "extract_tree", "checkout_tree", "tree_at", "gather_evidence", "write_evidence",
           "EVIDENCE"]

BUDGET = 8000
# per-task evidence of the development sets (one JSONL per benchmark): what fit_weights.py's development-set
# guard re-ranks under candidate weights without booting anything (gitignored, like the corpus's evidence)
EVIDENCE = Path(__file__).resolve().parent / ".cache" / "evidence"


def shared_tasks(name: str) -> Path:
    """A task file of ../shared/bench, found from the main checkout or from a worktree one level deeper."""
    root = Path(__file__).resolve().parent.parent
    for base in (root.parent, root.parent.parent):
        if (base / "shared" / "bench" / name).is_file():
            return base / "shared" / "bench" / name
    return root.parent / "shared" / "bench" / name


def load_tasks(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def pick_tasks(tasks: list[dict], only: str | None, limit: int | None) -> list[dict]:
    """The tasks whose instance_id contains ``only`` (when given), then the first ``limit`` of them (when given)."""
    if only:
        tasks = [t for t in tasks if only in t["instance_id"]]
    if limit:
        tasks = tasks[:limit]
    return tasks


def write_results(path: str | Path, summary: dict, rows: list[dict]) -> None:
    """A benchmark's bench/results/<name>.json: its summary and one row per task."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")


def prepare(folder: Path, cli: bool, *, quiet: bool = False) -> float:
    """`brain init` and (when available) `brain map`, then the index; returns the seconds it took."""
    import brain as brainlib

    started = time.perf_counter()
    b = brainlib.init(folder)
    if cli:
        subprocess.run([sys.executable, "-m", "brain", "-C", str(folder), "map"], capture_output=True)
        subprocess.run([sys.executable, "-m", "brain", "-C", str(folder), "index", "--quiet"], check=True,
                       capture_output=True)
    else:
        if hasattr(b, "map"):
            try:
                b.map()
            except Exception as exc:  # the cards part is optional for these benchmarks
                if not quiet:
                    print(f"  brain map failed in {folder.name}: {exc}", file=sys.stderr)
        b.reindex()
    return time.perf_counter() - started


def boot(folder: Path, text: str, cli: bool, tmp: Path) -> dict:
    """The boot for one task: through `brain boot --task-file ... --json` or the library call it makes."""
    if cli:
        task_file = tmp / "task.txt"
        task_file.write_text(text, encoding="utf-8")
        out = subprocess.run([sys.executable, "-m", "brain", "-C", str(folder), "boot", "--task-file", str(task_file),
                              "--budget", str(BUDGET), "--json", "--no-record"], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)
    import brain as brainlib

    return brainlib.open(folder).boot(text, budget=BUDGET, record=False).to_dict()


def gather_evidence(view, text: str) -> dict | None:
    """A task's evidence at unit weight as JSON (``brain.search.ranking.gather`` with every candidate's
    neighbours read, what combining other weights needs), or None when the ranking cannot split it."""
    try:
        from brain.search import ranking
    except ImportError:
        return None
    if not hasattr(ranking, "gather"):
        return None
    return ranking.gather(view, text, links="all").to_json()


def write_evidence(path: str | Path, items: list[dict]) -> None:
    """One JSON line per task (id, lang, repo, gold, evidence, the boot's own ranked files), written whole
    through a temporary file so a killed run leaves the last complete dump in place."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(item, sort_keys=True) + "\n" for item in items), encoding="utf-8")
    tmp.replace(out)


def bm25_files(view, text: str, limit: int = 20) -> list[str]:
    """The baseline: identifier-aware BM25 over the source files' bodies (test files are not indexed)."""
    from brain.search.tokenize import tokens

    return [p for p, _ in view.bm25(tokens(text, stop=True), limit, body_only=True)]


def rank_of(gold: list[str], files: list[str]) -> int | None:
    """1-based rank of the first gold file in ``files``, or None."""
    for i, f in enumerate(files):
        if f in gold:
            return i + 1
    return None


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def git_dir(mirrors: Path, repo: str, who: str = "bench") -> Path:
    """The bare repository of ``owner/name`` in a mirror folder (``<owner>+<name>/repo`` or that folder itself)."""
    base = Path(mirrors) / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise SystemExit(f"{who}: no bare git mirror of {repo} under {mirrors} (expected {base}/repo)")


def extract_tree(git_dir_: Path, commit: str, dest: Path, who: str = "bench") -> Path:
    """``dest`` holding the tree of ``commit`` (``git archive | tar -x`` into a temporary folder renamed into
    place, so a killed run leaves no half tree); extracted once, reused after."""
    if dest.is_dir():
        return dest
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = subprocess.Popen(["git", "--git-dir", str(git_dir_), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tmp)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit(f"{who}: git archive {commit} failed in {git_dir_}")
    try:
        tmp.rename(dest)
    except OSError:  # another run extracted it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# git run on mirrors by the benchmarks: no hooks, no repository-named filters' surprises, no pager
_BENCH_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "--no-pager")


def checkout_tree(git_dir_: Path, commit: str, dest: Path, who: str = "bench") -> Path:
    """``dest`` as a git checkout detached at ``commit`` (``git clone --shared --no-checkout`` of the mirror, then
    ``checkout --detach``): brain sees the repository's real history up to ``commit``, never after (it reads only
    HEAD's log). Built in a temporary folder renamed into place; reused after."""
    if dest.is_dir():
        return dest
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", *_BENCH_GIT, "clone", "-q", "--shared", "--no-checkout", str(git_dir_), str(tmp)],
                       check=True, capture_output=True)
        subprocess.run(["git", *_BENCH_GIT, "-C", str(tmp), "checkout", "-q", "--detach", commit], check=True,
                       capture_output=True)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit(f"{who}: cannot check out {commit} of {git_dir_}: {exc.stderr.decode(errors='replace')}")
    try:
        tmp.rename(dest)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def tree_at(git_dir_: Path, commit: str, dest: Path, history: bool, who: str = "bench") -> Path:
    """The tree of ``commit``: a git checkout with its history (``history``, in ``dest`` with a ``+history`` suffix:
    a tree of its own) or the files alone (``git archive``)."""
    if history:
        return checkout_tree(git_dir_, commit, dest.with_name(dest.name + "+history"), who)
    return extract_tree(git_dir_, commit, dest, who)
