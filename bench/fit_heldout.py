"""Read a held-out half once with weights fitted on the other: hand-set against fitted, from one run's evidence.

A salted round (issue 23's rule) fits on the tuning half (bench_corpus.py on its repositories, then
fit_weights.py on that run) and reads the held-out half once with the fitted weights fixed. This scores a
held-out run (bench_corpus.py's ``--out`` JSON and the evidence it dumped) under the hand-set weights and under
the fit's final changes (``--fit``: fit_weights.py's ``--out`` JSON, its ``final_changes``; or ``--set
NAME=VALUE``), both through ``ranking.combine``: macro (mean over languages) all@1/5/10, any@5 and MRR, and the
tasks gained and lost at each cut-off. The hand-set column is the boot's own ranking (checked: how many tasks'
gold ranks equal the run's).

    .venv/bin/python bench/fit_heldout.py --results HELD.json --evidence TREES/evidence --fit FIT.json [--set NAME=VALUE] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import corpus_score as cs  # noqa: E402
import fit_weights  # noqa: E402

__all__ = ["score", "main"]

CUTS = ("all@1", "all@5", "any@5", "all@10")


def score(ranker, tasks, changes: dict) -> dict:
    """Per-language and macro figures, hand-set against ``changes``, with the gained and lost task ids."""
    hand, fitted = ranker.weights({}), ranker.weights(changes)
    rows, moved = [], {c: {"gained": [], "lost": []} for c in CUTS}
    for t in tasks:
        a = cs.gold_ranks(t.gold, ranker.rank(t.evidence, hand))
        b = cs.gold_ranks(t.gold, ranker.rank(t.evidence, fitted)) if changes else a
        rows.append({"id": t.id, "repo": t.repo, "lang": t.lang, "hand": a, "fitted": b})
        sa, sb = cs.task_scores(a), cs.task_scores(b)
        for c in CUTS:
            if sb[c] > sa[c]:
                moved[c]["gained"].append(t.id)
            elif sb[c] < sa[c]:
                moved[c]["lost"].append(t.id)
    per_lang = cs.by_language(rows, ("hand", "fitted"))
    return {"per_lang": per_lang, "macro": cs.macro(per_lang, ("hand", "fitted")), "moved": moved, "rows": rows}


def _value(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, required=True, help="bench_corpus.py --out JSON of the held-out run")
    ap.add_argument("--evidence", type=Path, required=True, help="that run's evidence folder")
    ap.add_argument("--fit", type=Path, help="fit_weights.py --out JSON: its final_changes are the fitted weights")
    ap.add_argument("--set", action="append", default=[], type=_value, help="NAME=VALUE on top of --fit (repeatable)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    changes: dict = {}
    if args.fit:
        changes.update({n: v[1] for n, v in json.loads(args.fit.read_text())["summary"]["final_changes"].items()})
    changes.update(dict(args.set))
    rows = [r for r in json.loads(args.results.read_text())["rows"] if not r.get("error")]
    ranker = fit_weights.Ranker()
    evidence = {}
    for path in sorted(args.evidence.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line) if line.strip() else {}
            if "evidence" in item:
                evidence[item["id"]] = item["evidence"]
    tasks = [fit_weights.Task(r, ranker.evidence(evidence[r["id"]]), set()) for r in rows if r["id"] in evidence]
    out = score(ranker, tasks, changes)
    same = sum(r["hand"] == b["brain"] for r, b in zip(out["rows"], [r for r in rows if r["id"] in evidence]))
    if args.json:
        print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=1))
        return 0
    m = out["macro"]
    print(f"{len(tasks)} tasks ({len(rows) - len(tasks)} without evidence); hand-set = the boot's ranks on {same}")
    print(f"changes: {changes or 'none'}")
    for c in CUTS + ("mrr",):
        line = f"  macro {c}: hand-set {m['hand'][c]:.3f}  fitted {m['fitted'][c]:.3f}"
        if c in out["moved"]:
            line += f"  (+{len(out['moved'][c]['gained'])}/-{len(out['moved'][c]['lost'])} tasks)"
        print(line)
    for c in ("all@5",):
        for kind in ("gained", "lost"):
            if out["moved"][c][kind]:
                print(f"  {c} {kind}: {', '.join(out['moved'][c][kind])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
