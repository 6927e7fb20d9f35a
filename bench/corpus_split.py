"""A held-out check of a ranking change on the corpus: tuning repositories against the others, from one run.

Issue 23's rule: a ranking change is kept only if it gains on repositories it was not tuned on. This
reads the rows and the evidence ``bench_corpus.py`` wrote in one pass (``--out`` JSON and
bench/.cache/corpus/evidence/), splits each language's repositories by name (sorted; the 1st, 3rd,
5th ... are the tuning half, the others are held out), and scores on each half, per language and
macro: BM25 (the rows' own), the ranking with the change switched off (``--off NAME``: those weights
at 0, which is the ranking before the change when it only adds them), and the ranking under the
shipped weights (or ``--set NAME=VALUE`` on top, to try a value on the tuning half). The rankings
are ``ranking.combine`` over the cached evidence, the function the boot ranks with.

    .venv/bin/python bench/corpus_split.py --results OUT.json --corpus CORPUS.jsonl [--off folder --off namesake] [--set folder=0.2]
        [--language Go ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import corpus_score as cs  # noqa: E402

__all__ = ["split", "main"]

CACHE = HERE / ".cache" / "corpus"
LIMIT = 40  # the files a task boot ranks


def split(repos_by_lang: dict[str, set[str]]) -> dict[str, str]:
    """repo -> "tune" or "held": per language, sorted by name, alternating from "tune"."""
    out = {}
    for repos in repos_by_lang.values():
        for i, repo in enumerate(sorted(repos)):
            out[repo] = "tune" if i % 2 == 0 else "held"
    return out


def _value(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, required=True, help="bench_corpus.py --out JSON of the run, or its rows cache folder")
    ap.add_argument("--corpus", type=Path, help="the corpus JSONL: its repositories decide the halves (default: the rows')")
    ap.add_argument("--trees", type=Path, default=CACHE, help="the run's cache (its evidence/ folder)")
    ap.add_argument("--fingerprint", help="with a rows folder: the run's code fingerprint (default: this code's)")
    ap.add_argument("--off", action="append", default=[], help="a weight set to 0 for the `off` column")
    ap.add_argument("--set", action="append", default=[], type=_value, help="NAME=VALUE for the `on` column")
    ap.add_argument("--language", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from brain.search import ranking
    from brain.search.weights import shipped_weights

    if args.results.is_dir():  # the run's cached rows (bench_corpus.py --trees .../rows) under the current code
        from bench_corpus import code_fingerprint

        mark = args.fingerprint or code_fingerprint()
        cached = [json.loads(p.read_text()) for p in sorted(args.results.glob("*.json"))]
        rows = [r for c in cached if c.get("fingerprint") == mark for r in c["rows"]]
    else:
        rows = json.loads(args.results.read_text())["rows"]
    rows = [r for r in rows if (not args.language or r["lang"] in args.language) and not r.get("error")]
    shipped = shipped_weights()
    on = shipped.replace(dict(args.set)) if args.set else shipped
    off = on.replace({name: 0.0 for name in args.off})
    evidence: dict[str, dict] = {}
    for repo in {r["repo"] for r in rows}:
        path = args.trees / "evidence" / (repo.replace("/", "+") + ".jsonl")
        if path.exists():
            for line in path.read_text().splitlines():
                e = json.loads(line)
                evidence[e["id"]] = e["evidence"]
    by_lang: dict[str, set[str]] = defaultdict(set)
    if args.corpus:  # every repository of each language, so the halves do not depend on which ones ran
        for line in args.corpus.read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                by_lang[t["language"]].add(t["repo"])
    for r in rows:
        by_lang[r["lang"]].add(r["repo"])
    half = split(by_lang)
    scored = []
    for r in rows:
        if r["id"] not in evidence:
            continue
        ev = ranking.Evidence.from_json(evidence[r["id"]])
        ranks = {k: cs.gold_ranks(r["gold"], [h.path for h in ranking.combine(ev, w, limit=LIMIT).files])
                 for k, w in (("on", on), ("off", off))}
        scored.append({"lang": r["lang"], "repo": r["repo"], "half": half[r["repo"]], "bm25": r["bm25"], **ranks})
    keys = ("bm25", "off", "on")
    out = {}
    for which in ("tune", "held"):
        part = [s for s in scored if s["half"] == which]
        per_lang = cs.by_language(part, keys)
        out[which] = {"repos": sorted({s["repo"] for s in part}), "per_lang": per_lang, "macro": cs.macro(per_lang, keys)}
    if args.json:
        print(json.dumps(out, indent=1, sort_keys=True))
        return 0
    for which in ("tune", "held"):
        print(f"\n{which}: {len(out[which]['repos'])} repositories")
        print("| language | tasks | BM25 all@5 | off all@5 | on all@5 | BM25 any@5 | off any@5 | on any@5 | off mrr | on mrr |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for lang, v in [*out[which]["per_lang"].items(), ("**macro**", out[which]["macro"])]:
            print(f"| {lang} | {v['tasks']} | " + " | ".join(f"{v[k][m]:.2f}" for m in ("all@5", "any@5") for k in keys)
                  + f" | {v['off']['mrr']:.2f} | {v['on']['mrr']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
