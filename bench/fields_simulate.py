"""What a member-name lift would do to the file ranking, re-ranked from `fields_measure.py`'s rows (exact for a
lift applied last, to the final scores: the rows hold the 40 files' scores and the linked files).

A file writing a name the best file declares (few files writing it: df <= ``max_df``, and at most ``max_linked``
files linked in all) gets its score times 1 + k, never past ``cap`` x the best file's score.

    .venv/bin/python bench/fields_simulate.py ROWS.jsonl [ROWS.jsonl ...] [--candidates]
"""

from __future__ import annotations

import itertools
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import calls_simulate  # noqa: E402
from calls_simulate import ranks  # noqa: E402


def lifted_scores(r: dict, k: float, cap: float, kind: str, max_df: int, min_names: int, source: str,
                  gate: float, max_linked: int, mode: str = "mult") -> dict[str, float]:
    files, scores = r["files"], r["scores"]
    if len(files) < 2 or scores[0] <= 0:
        return {}
    if gate and scores[0] < gate * scores[min(4, len(scores) - 1)]:
        return {}
    found: set[str] = set()
    for src in (("link", "link2") if source == "both" else (source,)):
        got = {p for p, (d, n, _) in (r.get(src) or {}).get(kind, {}).items() if d <= max_df and n >= min_names}
        if len(got) <= max_linked:
            found |= got
    top = scores[0]
    out = {}
    for i, p in enumerate(files[1:], 1):
        if p in found and scores[i] > 0:
            # mult: the file's score times 1 + k; share: plus k x the best file's score; never past cap x the best's
            new = scores[i] * (1 + k) if mode == "mult" else scores[i] + k * top
            out[p] = max(scores[i], min(new, cap * top))
    return out


def evaluate(rows: list[dict], **kw) -> dict:
    return calls_simulate.evaluate(rows, lifted_scores, **kw)


# chosen on the tuning half before any held-out figure was read; `--candidates` scores only these
_ALL = dict(cap=0.95, source="link", gate=0, max_linked=40, max_df=2, min_names=2)
CANDIDATES: dict[str, dict] = {
    # names the best file's symbol table records, each written by it and one other file; 2+ of them: a share
    "F1": dict(_ALL, kind="filesyms", mode="share", k=0.1),
    # the same, a lift of the file's own score (x 1.2)
    "F2": dict(_ALL, kind="filesyms", mode="mult", k=0.2),
    # the members of the best-ranked definitions' class, x 2
    "F3": dict(_ALL, kind="members", mode="mult", k=1.0),
    # the code-like names the best definitions' bodies write (best two files), df <= 3: a share
    "F4": dict(_ALL, kind="body", mode="share", k=0.1, source="both", max_df=3),
}


line = calls_simulate.line


def load(paths: list[str]) -> list[dict]:
    seen, rows = set(), []
    for p in paths:
        for ln in open(p):
            r = json.loads(ln)
            if r.get("error") or "scores" not in r or r["id"] in seen:
                continue
            seen.add(r["id"])
            rows.append(r)
    return rows


def main(paths: list[str]) -> None:
    only = "--candidates" in paths
    paths = [p for p in paths if p != "--candidates"]
    rows = load(paths)
    print(f"{len(rows)} tasks, {len({r['repo'] for r in rows})} repositories")
    base = evaluate(rows)
    print("base", {k: round(v, 3) for k, v in base["macro"].items()})
    if only:
        for name, kw in CANDIDATES.items():
            print(f"{name}: {line(evaluate(rows, **kw))}")
        return
    for kind, source, max_df, min_names, max_linked, mode, k, gate in itertools.product(
            ("members", "filesyms", "body"), ("link", "both"), (2, 3, 5, 8, 12), (1, 2), (3, 8, 40),
            ("mult", "share"), (0.1, 0.2, 0.35, 0.5, 1.0), (0, 1.5)):
        res = evaluate(rows, k=k, cap=0.95, kind=kind, max_df=max_df, min_names=min_names, source=source,
                       gate=gate, max_linked=max_linked, mode=mode)
        print(f"{kind:8} {source:4} df<={max_df:2d} names>={min_names} linked<={max_linked:2d} {mode:5} k {k:.2f} "
              f"gate {gate}: " + line(res))


if __name__ == "__main__":
    main(sys.argv[1:])
