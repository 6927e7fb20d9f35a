"""Held-out check: does the boot rank the files a commit changed, on repositories no change was tuned on?

Tasks come from the history of local bare mirrors (one `<owner>+<name>/repo` per project, as for
bench_multilang.py): recent non-merge commits whose subject looks like a fix or a feature (not a
release, docs, CI or formatting commit) and that change 1-5 non-test source files (brain's own
`is_test_path` decides tests). The task text is the commit's subject and body, trailers stripped;
gold = the changed non-test source files the parent holds (files the commit adds are left out). Each commit's parent tree is extracted once into the
trees folder (`git archive`), `brain init` + reindex are run there, and the task is booted under an
8,000-token budget. Commit messages are written after the fix and often name the changed code,
so absolute scores are optimistic: compare versions of brain on the same tasks.

    PYTHONPATH=<brain>/src python bench/bench_heldout.py --mirrors DIR --trees DIR [--repo owner/name ...]
        [--per-repo 40] [--out FILE]
    python bench/bench_heldout.py --compare BEFORE.json AFTER.json [--out FILE]

Each version of brain needs its own trees folder (the index inside `.brain` is version-specific).
Nothing fetched is committed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import locbench  # beside this script
import reserved  # beside this script

BUDGET = 8000
# held-out repositories (none in the development sets) and their language; ripgrep, gson, nlohmann/json,
# flask and requests, used before, are reserved for independent checks now (reserved.py) and were replaced
REPOS = {
    "spf13/cobra": "Go",
    "sharkdp/hyperfine": "Rust",
    "jhy/jsoup": "Java",
    "koajs/koa": "JavaScript",
    "DaveGamble/cJSON": "C",
    "gabime/spdlog": "C++",
    "pallets/click": "Python",
    "urfave/cli": "Go",
    "serde-rs/json": "Rust",
    "square/javapoet": "Java",
    "sindresorhus/got": "JavaScript",
    "redis/hiredis": "C",
    "Tencent/rapidjson": "C++",
    "encode/httpx": "Python",
}
SOURCE = {
    "Go": (".go",), "Rust": (".rs",), "Java": (".java",), "JavaScript": (".js", ".mjs", ".cjs", ".ts"),
    "C": (".c", ".h"), "C++": (".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh"), "Python": (".py",),
}
SKIP_SUBJECT = re.compile(
    r"^(merge|revert|release|bump|chore|docs?\b|ci\b|build\b|style|typo|format|update (the )?(readme|changelog|docs?)"
    r"|v?\d+\.\d+)|\b(changelog|readme|version \d|dependabot|pre-commit|lint(er|ing)?\b|gofmt|rustfmt|clang-format"
    r"|copyright|license|update version|indentation)\b", re.I)
TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|change-id|cc|fixes|closes|ref)\s*:", re.I)
KS_ALL = (1, 5, 10)


def git_dir(mirrors: Path, repo: str) -> Path:
    return locbench.git_dir(mirrors, repo, "bench_heldout")


def git(gd: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(gd), *args], capture_output=True, text=True,
                          check=True, errors="replace").stdout


def message_text(message: str) -> str:
    lines = [ln for ln in message.strip().splitlines() if not TRAILER.match(ln.strip())]
    return "\n".join(lines).strip()


def select_tasks(gd: Path, repo: str, lang: str, per_repo: int, scan: int = 600) -> list[dict]:
    """Up to ``per_repo`` recent fix/feature commits changing 1-5 non-test source files."""
    from brain.search.code import is_test_path

    log = git(gd, "log", "--no-merges", f"-n{scan}", "--format=%x00%H %P%x01%B%x02", "--name-only", "HEAD")
    tasks = []
    for chunk in log.split("\x00")[1:]:
        head, _, rest = chunk.partition("\x01")
        message, _, names = rest.partition("\x02")
        shas = head.split()
        if len(shas) != 2:  # root or merge
            continue
        sha, parent = shas
        subject = message.strip().splitlines()[0] if message.strip() else ""
        if not subject or SKIP_SUBJECT.search(subject):
            continue
        changed = [n for n in names.split("\n") if n.strip()]
        source = [n for n in changed if n.endswith(SOURCE[lang]) and not is_test_path(n)]
        if not 1 <= len(source) <= 5:
            continue
        # files the commit added do not exist in the parent tree: gold is what the parent holds
        status = git(gd, "diff", "--name-status", "--no-renames", parent, sha, "--", *source)
        gold = [ln.split("\t", 1)[1] for ln in status.splitlines() if ln[:1] in "MD"]
        if not gold:
            continue
        text = message_text(message)
        if len(text) < 15:
            continue
        tasks.append({"id": f"{repo}@{sha[:10]}", "repo": repo, "lang": lang, "commit": sha, "parent": parent,
                      "text": text, "gold": sorted(gold)})
        if len(tasks) >= per_repo:
            break
    return tasks


HISTORY = False  # --history: trees are git checkouts at the parent commit (brain reads their past commits)


def tree_for(trees: Path, gd: Path, repo: str, commit: str) -> Path:
    return locbench.tree_at(gd, commit, trees / f"{repo.replace('/', '+')}@{commit}", HISTORY, "bench_heldout")


def run_task(trees: Path, gd: Path, task: dict) -> dict:
    import brain as brainlib

    folder = tree_for(trees, gd, task["repo"], task["parent"])
    started = time.perf_counter()
    b = brainlib.init(folder)
    b.reindex()
    result = brainlib.open(folder).boot(task["text"], budget=BUDGET, record=False).to_dict()
    files = result["files"]
    position = {f: i + 1 for i, f in reversed(list(enumerate(files)))}
    ranks = [position.get(g) for g in task["gold"]]
    seconds = time.perf_counter() - started
    # the locate ranking beside the boot's, with its reasons for the gold files and the top three
    from brain.search.locate import locate

    hits = locate(b.index.code_view(), task["text"], limit=40).files
    located = [h.path for h in hits]
    reasons = {h.path: h.reasons for i, h in enumerate(hits) if h.path in task["gold"] or i < 3}
    return {"id": task["id"], "lang": task["lang"], "repo": task["repo"], "gold": task["gold"], "ranks": ranks,
            "ctx": all(g in result["text"] for g in task["gold"]), "top": files[:10],
            "locate": [located.index(g) + 1 if g in located else None for g in task["gold"]], "reasons": reasons,
            "seconds": round(seconds, 2)}


def scores(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"tasks": 0}
    out = {"tasks": n}
    for k in KS_ALL:
        out[f"all@{k}"] = round(sum(all(r is not None and r <= k for r in row["ranks"]) for row in rows) / n, 3)
    out["any@5"] = round(sum(any(r is not None and r <= 5 for r in row["ranks"]) for row in rows) / n, 3)
    out["ctx"] = round(sum(row["ctx"] for row in rows) / n, 3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path)
    ap.add_argument("--trees", type=Path)
    ap.add_argument("--repo", action="append", help="owner/name (repeatable; default: all held-out repositories)")
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--out", type=Path, help="results JSON (rows appended/replaced by id)")
    ap.add_argument("--tasks-only", action="store_true", help="print the selected tasks and stop")
    ap.add_argument("--history", action="store_true", help="trees as git checkouts at the parent commit, so brain "
                    "has the project's history up to it (never the commit itself); default: `git archive`")
    ap.add_argument("--reserved", type=Path, default=reserved.DEFAULT_RESERVED,
                    help="reserved owner/name list: a run naming one of them is refused")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="compare two results files (per language and repository, tasks that moved) and stop")
    args = ap.parse_args(argv)
    if args.compare:
        report = compare(*(json.loads(p.read_text())["rows"] for p in args.compare))
        print(json.dumps(report, indent=1))
        if args.out:
            args.out.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    if not args.mirrors or not args.trees:
        ap.error("--mirrors and --trees are needed to run tasks")

    global HISTORY
    HISTORY = args.history
    repos = args.repo or list(REPOS)
    try:
        reserved.refuse_reserved(repos, reserved.read_reserved(args.reserved))
    except reserved.BenchRefusal as exc:
        print(f"bench_heldout: {exc}", file=sys.stderr)
        return exc.exit_code
    unknown = [r for r in repos if r not in REPOS]
    if unknown:
        ap.error(f"not a held-out repository of this benchmark: {', '.join(unknown)}")
    args.trees.mkdir(parents=True, exist_ok=True)
    previous = {}
    if args.out and args.out.is_file():
        previous = {row["id"]: row for row in json.loads(args.out.read_text())["rows"]}
    for repo in repos:
        gd = git_dir(args.mirrors, repo)
        tasks = select_tasks(gd, repo, REPOS[repo], args.per_repo)
        if args.tasks_only:
            for t in tasks:
                print(t["id"], t["gold"], "|", t["text"].splitlines()[0][:80])
            continue
        for task in tasks:
            try:
                row = run_task(args.trees, gd, task)
            except Exception as exc:  # a tree brain cannot index is reported, not fatal
                row = {"id": task["id"], "lang": task["lang"], "repo": repo, "gold": task["gold"],
                       "ranks": [None] * len(task["gold"]), "ctx": False, "error": repr(exc)}
            previous[row["id"]] = row
            print(row["id"], row["ranks"], row.get("seconds"), row.get("error", ""), flush=True)
            if args.out:
                write(args.out, list(previous.values()))
    if args.out and not args.tasks_only:
        rows = list(previous.values())
        write(args.out, rows)
        print(json.dumps(summary(rows), indent=1))
    return 0


def summary(rows: list[dict]) -> dict:
    """Scores per language, their macro average, and per repository; rows that failed (a tree the
    snapshot could not give whole) are counted apart, not scored."""
    by_repo, by_lang = defaultdict(list), defaultdict(list)
    errors = [row["id"] for row in rows if row.get("error")]
    rows = [row for row in rows if not row.get("error")]
    for row in rows:
        by_repo[row["repo"]].append(row)
        by_lang[row["lang"]].append(row)
    per_lang = {lang: scores(rs) for lang, rs in sorted(by_lang.items())}
    keys = [k for k in next(iter(per_lang.values()), {}) if k != "tasks"]
    macro = {k: round(sum(s[k] for s in per_lang.values()) / len(per_lang), 3) for k in keys} if per_lang else {}
    return {"macro": macro, "errors": errors, "per_lang": per_lang, "per_repo": {r: scores(rs) for r, rs in sorted(by_repo.items())}}


def _worst(ranks: list) -> int:
    return max(r if r is not None else 10**6 for r in ranks)


def _best(ranks: list) -> int:
    return min(r if r is not None else 10**6 for r in ranks)


def compare(before: list[dict], after: list[dict]) -> dict:
    """Both runs scored on the tasks both ran, and the tasks whose last or first gold file moved."""
    b = {r["id"]: r for r in before if not r.get("error")}
    a = {r["id"]: r for r in after if not r.get("error")}
    ids = [i for i in b if i in a]
    sb, sa = summary([b[i] for i in ids]), summary([a[i] for i in ids])
    table = {}
    for part in ("per_lang", "per_repo"):
        table[part] = {k: {m: [sb[part][k][m], sa[part][k][m]] for m in sb[part][k]} for k in sb[part]}
    table["macro"] = {m: [sb["macro"][m], sa["macro"][m]] for m in sb["macro"]}
    moved = {"worse": [], "better": []}
    for i in ids:
        rb, ra = b[i]["ranks"], a[i]["ranks"]
        if (_worst(ra), _best(ra)) == (_worst(rb), _best(rb)):
            continue
        worse = _worst(ra) > _worst(rb) or (_worst(ra) == _worst(rb) and _best(ra) > _best(rb))
        row = {"id": i, "gold": b[i]["gold"], "before": rb, "after": ra,
               "after_reasons": a[i].get("reasons", {}), "after_top": a[i].get("top", [])[:8]}
        moved["worse" if worse else "better"].append(row)
    return {**table, **moved}


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"summary": summary(rows), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
