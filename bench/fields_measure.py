"""Reach and precision of a *member-name* link for a fix's second file (issue 23, the `fields` work).

Decision 0081 found the fixed file a text never names is mostly a user of what the fix changes (a deparser,
visitor or validator handling a new field). This reads that link: for each sampled corpus task (bench_corpus's
draw, `--per-repo`) of the chosen half (`calls_split`), on a real checkout of its base commit, the boot's file
ranking (40 files) and function ranking (20 definitions), then the names the best file declares, and the few
other files whose code writes each of them (the code index's FTS, `CodeView.files_writing`):

* ``members``: the names declared under the class of the best file's first ranked definitions (its methods,
  attributes, enum members as the symbol table records them; the seed's own name for a top-level function);
* ``filesyms``: every name the best file's symbol table records (any class, any kind);
* ``body``: the code-like identifiers (camelCase, snake_case, digits) the seeds' bodies write.

A name counts only when few files write it (``df``: code_vocab's document count, the best file included,
2..``MAX_DF``); each linked file keeps [its rarest name's df, how many names link it, that name]. The import
neighbours of the best file beside them, for comparison. One JSON line per task; `--report` summarizes.

    .venv/bin/python bench/fields_measure.py --corpus C --mirrors M --reserved R --trees T --half tune --out O.jsonl
    .venv/bin/python bench/fields_measure.py --report O.jsonl [--max-df N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import bench_corpus as bc  # noqa: E402
import calls_measure  # noqa: E402
import locbench  # noqa: E402
import reserved  # noqa: E402

SEED_FNS = 3
MAX_DF = 12  # a name written in more files than this is not recorded
MIN_LEN = 4
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")


def code_like(word: str) -> bool:
    inner = word.strip("_")
    return len(inner) >= MIN_LEN and ("_" in inner or bool(_CAMEL.search(inner)) or any(c.isdigit() for c in inner))


def doc_counts(db, words: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    terms = sorted({w.lower() for w in words})
    for i in range(0, len(terms), 500):
        chunk = terms[i:i + 500]
        out.update(db.execute(f"SELECT term, doc FROM code_vocab WHERE term IN ({','.join('?' * len(chunk))})",
                              chunk).fetchall())
    return out


def member_names(db, fview, hits, top: str, k: int) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """name -> kind, for the three variants (members, filesyms, body)."""
    syms = db.execute("SELECT name, kind, qual FROM code_symbols WHERE path = ?", (top,)).fetchall()
    seeds = [h for h in hits if h.path == top][:k]
    rows = {r.qual: r for r in fview.in_file(top)}
    classes, own = set(), {}
    for h in seeds:
        row = rows.get(h.qual)
        kind = row.kind if row else ""
        if kind == "class":
            classes.add(h.qual)
        elif "." in h.qual:
            classes.add(h.qual.rsplit(".", 1)[0])
        else:
            own[h.qual.rsplit(".", 1)[-1]] = "self"
    members = dict(own)
    for name, kind, qual in syms:
        if any(qual.startswith(c + ".") for c in classes):
            members.setdefault(name, kind)
    filesyms = {name: kind for name, kind, _ in syms}
    body: dict[str, str] = {}
    try:
        lines = (fview_root / top).read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    for h in seeds:
        row = rows.get(h.qual)
        if row is None:
            continue
        for w in _IDENT.findall("\n".join(lines[max(0, row.start - 1):row.end])):
            body.setdefault(w, "body")
    return members, filesyms, body


fview_root = Path(".")


def link(db, view, names: dict[str, str], top: str, cache: dict) -> dict[str, list]:
    names = {n: k for n, k in names.items() if code_like(n)}
    df = doc_counts(db, set(names))
    out: dict[str, list] = {}
    for n in sorted(names, key=lambda n: (df.get(n.lower(), 0), n)):
        d = df.get(n.lower(), 0)
        if d < 2 or d > MAX_DF:
            continue
        if n.lower() not in cache:
            cache[n.lower()] = view.files_writing(n, MAX_DF + 1)
        for q in cache[n.lower()]:
            if q == top or view.is_test(q):
                continue
            if q in out:
                out[q][1] += 1
            else:
                out[q] = [d, 1, n]
    return out


def run_repo(repo: str, tasks: list[dict], mirrors: Path, trees: Path, out) -> None:
    global fview_root
    from brain.search.functions import FunctionView

    mirror = locbench.git_dir(mirrors, repo, "fields_measure")
    tree = trees / "trees" / repo.replace("/", "+")
    fview_root = tree
    for task in tasks:
        gold = task["gold_files"]
        try:
            b, _, hits, ranked = calls_measure.ranked_at_base(tree, mirror, task)
            files = [h.path for h in ranked]
            view = b.index.code_view()
            fview = FunctionView(b.index.db)
            db = b.index.db
            t0 = time.process_time()
            links, links2 = {}, {}
            cache: dict = {}
            for which, target in ((0, links), (1, links2)):
                if len(files) <= which:
                    continue
                m, f, bd = member_names(db, fview, hits, files[which], SEED_FNS)
                target.update({"members": link(db, view, m, files[which], cache),
                               "filesyms": link(db, view, f, files[which], cache),
                               "body": link(db, view, bd, files[which], cache)})
            link_cpu = time.process_time() - t0
            fwd, back = view.import_graph()
            top = files[0] if files else None
            row = {"id": task["instance_id"], "repo": repo, "lang": task["language"], "gold": gold, "files": files,
                   "scores": [h.score for h in ranked], "fn": [h.key for h in hits[:10]],
                   "link": links, "link2": links2, "link_cpu": round(link_cpu, 4),
                   "imports": sorted(fwd.get(top, ())) if top else [],
                   "imported_by": sorted(back.get(top, ())) if top else [],
                   "nfiles": len(view.files)}
        except Exception as exc:  # reported, not fatal
            row = {"id": task["instance_id"], "repo": repo, "gold": gold, "error": f"{type(exc).__name__}: {exc}"[:300]}
        out.write(json.dumps(row) + "\n")
        out.flush()


def linked(r: dict, kind: str, max_df: int, min_names: int = 1, source: str = "link") -> set[str]:
    return {p for p, (d, n, _) in (r[source] or {}).get(kind, {}).items() if d <= max_df and n >= min_names}


KINDS = ("members", "filesyms", "body")


def report(path: Path, max_df: int, min_names: int) -> None:
    rows = list({r["id"]: r for r in map(json.loads, path.read_text().splitlines()) if not r.get("error")}.values())
    print(f"{len(rows)} tasks, {len({r['repo'] for r in rows})} repositories; max df {max_df}, min names {min_names}")
    for cond in ("top gold, 2+ gold", "all tasks"):
        c = Counter()
        for r in rows:
            gold, files = set(r["gold"]), r["files"]
            if not files:
                continue
            if cond.startswith("top") and not (files[0] in gold and len(gold) > 1):
                continue
            top = files[0]
            kinds = {k: linked(r, k, max_df, min_names) for k in KINDS}
            kinds["members-not-import"] = kinds["members"] - set(r["imports"]) - set(r["imported_by"])
            kinds["import"] = set(r["imports"])
            kinds["imported_by"] = set(r["imported_by"])
            for i, p in enumerate(files[1:], 1):
                band = "2-5" if i < 5 else "6-30" if i < 30 else "31-40"
                c[("base", band, p in gold)] += 1
                for k, s in kinds.items():
                    if p in s:
                        c[(k, band, p in gold)] += 1
            for k, s in kinds.items():
                s = s - {top}
                c[(k, "unranked", True)] += len((s & gold) - set(files))
                c[(k, "unranked", False)] += len((s - gold) - set(files))
            c[("tasks", "n", True)] += 1
        print(f"\n== {cond}: {c[('tasks', 'n', True)]} tasks")
        print(f"{'link':20} {'band':9} {'gold':>6} {'of':>6} {'prec':>6}")
        for k in ("base", *KINDS, "members-not-import", "import", "imported_by"):
            for band in ("2-5", "6-30", "31-40", "unranked"):
                g, n = c[(k, band, True)], c[(k, band, True)] + c[(k, band, False)]
                if n:
                    print(f"{k:20} {band:9} {g:6d} {n:6d} {g / n:6.1%}")
    links = {k: (lambda r, k=k: linked(r, k, max_df, min_names)) for k in KINDS}
    links["import"] = lambda r: set(r["imports"]) | set(r["imported_by"])
    tasks, missing, reach, ceiling = calls_measure.reach_and_ceiling(rows, links)
    print(f"\n{tasks} tasks with the best file fixed and another fixed file outside the top five ({missing} files)")
    for k in links:
        print(f"  {k:14} names {reach[k]:3d} of them; all@5 ceiling: +{ceiling[k]} tasks")
    cpu = sorted(r["link_cpu"] for r in rows)
    print(f"\nlink CPU per task (both seeds, three variants): median {cpu[len(cpu) // 2] * 1000:.1f} ms, "
          f"p90 {cpu[int(len(cpu) * 0.9)] * 1000:.1f} ms, max {cpu[-1] * 1000:.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--mirrors", type=Path)
    ap.add_argument("--reserved", type=Path, default=reserved.DEFAULT_RESERVED)
    ap.add_argument("--trees", type=Path)
    ap.add_argument("--half", choices=("tune", "held"), default="tune")
    ap.add_argument("--per-repo", type=int, default=10)
    ap.add_argument("--repo", action="append")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--report", type=Path)
    ap.add_argument("--max-df", type=int, default=MAX_DF)
    ap.add_argument("--min-names", type=int, default=1)
    args = ap.parse_args()
    if args.report:
        report(args.report, args.max_df, args.min_names)
        return 0
    return calls_measure.measure(args, run_repo)


if __name__ == "__main__":
    sys.exit(main())
