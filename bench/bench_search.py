"""Search speed: bulk indexing of 100,000 short documents and query latency.

    .venv/bin/python bench/bench_search.py [--docs 100000] [--queries 1000]

Indexes N short generated documents (a title and ~25 words drawn Zipf-like from a
40,000-word vocabulary, one in five written as an identifier: `snake_case`,
`camelCase`, `PascalCase`, `dotted.name`) through the library's
`SearchIndex.add_documents`, then runs queries of one to three words through
`SearchIndex.search` (ranking, snippets and all). Baseline in the same run: the
same documents inserted raw into a plain FTS5 table (default tokenizer, no
identifier splitting, no snippets), so the ratio shows what the identifier-aware
layer costs. Targets: >= 20,000 documents/s, query p95 <= 10 ms.

    .venv/bin/python bench/bench_search.py --scale 5000,50000 [--queries 500]

Scaling (issue 21): the same notes at each size, queried with words drawn from the notes'
own Zipf-shaped use (common words included: what makes FTS5 rank thousands of matches), CPU
time per query through `SearchIndex.search`, and the same expressions on the plain FTS5 table
(`ORDER BY bm25 LIMIT 10`, every match ranked). Target: brain's p95 at the largest size within
2x of the smallest. Writes bench/results/search-scale.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "po", "si", "de", "fa", "gu", "ho", "ji", "be", "zo", "wa",
             "qui", "tr", "st", "an", "el", "or", "um", "ix")


def vocabulary(n: int, rng: random.Random) -> list[str]:
    """n distinct made-up words (a real corpus has a large vocabulary with a Zipf-shaped use)."""
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3, 3, 4))))] = None
    return list(words)


def identifier(a: str, b: str, style: int) -> str:
    return (f"{a}_{b}", f"{a}{b.capitalize()}", f"{a.capitalize()}{b.capitalize()}", f"{a}.{b}")[style]


def corpus(seed: int = 7):
    """The vocabulary (most used first) and the cumulative Zipf weights to draw from it."""
    rng = random.Random(seed)
    vocab = vocabulary(40_000, rng)
    cum, total = [], 0.0
    for rank in range(1, len(vocab) + 1):
        total += 1.0 / rank ** 1.05
        cum.append(total)
    return vocab, cum


def make_docs(n: int, seed: int = 7):
    """Short notes: a title and ~25 words, one in five an identifier (snake, camel, Pascal or dotted)."""
    vocab, cum = corpus(seed)
    rng = random.Random(seed + 1)
    for i in range(n):
        words = rng.choices(vocab, cum_weights=cum, k=28)
        body = [identifier(w, words[j - 1], rng.randrange(4)) if rng.random() < 0.2 else w
                for j, w in enumerate(words[2:], 2)]
        yield f"notes/n{i:06d}.md", "note", f"# {words[0]} {words[1]}\n\n" + " ".join(body) + "\n"


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def typed_queries(n: int, seed: int = 13) -> list[str]:
    """One to three words drawn as the notes use them (Zipf): common words come up as often as in the notes."""
    vocab, cum = corpus()
    rng = random.Random(seed)
    return [" ".join(rng.choices(vocab[:20_000], cum_weights=cum[:20_000], k=rng.choice((1, 2, 3))))
            for _ in range(n)]


def scale(sizes: list[int], queries: int) -> int:
    """p50/p95/p99 CPU ms per query at each size, brain and plain FTS5, and the ratios of the largest to the smallest."""
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from brain.search.index import CANDIDATES, SearchIndex

    asked = typed_queries(queries)
    load_start = os.getloadavg()[0]
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / ".brain").mkdir()
            docs = list(make_docs(n))
            index = SearchIndex(tmp / ".brain", tmp, tmp / ".brain" / "runtime")
            index.add_documents(docs)
            base = sqlite3.connect(tmp / "baseline.db", isolation_level=None)
            base.execute("CREATE VIRTUAL TABLE d USING fts5(path UNINDEXED, body)")
            base.execute("BEGIN")
            base.executemany("INSERT INTO d(path, body) VALUES (?, ?)", [(p, t) for p, _, t in docs])
            base.execute("COMMIT")
            ours, plain = [], []
            for q in asked[:50]:  # warm-up
                index.search(q, limit=10)
            for q in asked:
                c = time.process_time()
                index.search(q, limit=10)
                ours.append((time.process_time() - c) * 1000)
                expr = " ".join('"' + w.replace('"', '""') + '"' for w in q.split())
                c = time.process_time()
                base.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10", (expr,)).fetchall()
                plain.append((time.process_time() - c) * 1000)
            index.close()
            base.close()
        rows.append({"notes": n, **{f"brain_p{p}_ms": round(pct(ours, p), 2) for p in (50, 95, 99)},
                     **{f"fts5_p{p}_ms": round(pct(plain, p), 2) for p in (50, 95, 99)}})
    first, last = rows[0], rows[-1]
    result = {"queries": queries, "candidates": CANDIDATES, "rows": rows,
              "brain_p95_ratio": round(last["brain_p95_ms"] / first["brain_p95_ms"], 2),
              "fts5_p95_ratio": round(last["fts5_p95_ms"] / first["fts5_p95_ms"], 2),
              "load_start": round(load_start, 2), "load_end": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    print(f"{queries} typed queries (Zipf-drawn words, common ones included), CPU ms per query; "
          f"brain ranks at most {CANDIDATES} matches")
    print("| notes | brain p50 / p95 / p99 | plain FTS5 p50 / p95 / p99 | p95 brain / FTS5 |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['notes']:,} | {r['brain_p50_ms']} / {r['brain_p95_ms']} / {r['brain_p99_ms']} | "
              f"{r['fts5_p50_ms']} / {r['fts5_p95_ms']} / {r['fts5_p99_ms']} | "
              f"{r['brain_p95_ms'] / r['fts5_p95_ms']:.2f} |")
    print(f"p95 {last['notes']:,} / {first['notes']:,} notes: brain {result['brain_p95_ratio']} (target <= 2), "
          f"plain FTS5 {result['fts5_p95_ratio']}; load average {result['load_start']} at start, "
          f"{result['load_end']} at end on {result['cpus']} CPUs")
    out = Path(__file__).resolve().parent / "results" / "search-scale.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out.relative_to(out.parents[2])}")
    return 0 if result["brain_p95_ratio"] <= 2 else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--scale", metavar="N,N", help="the scaling run: note counts, smallest first (5000,50000)")
    args = ap.parse_args(argv)
    if args.scale:
        return scale([int(x) for x in args.scale.split(",")], args.queries)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from brain.search.index import SearchIndex

    vocab, _ = corpus()
    rng = random.Random(11)
    queries = []
    for _ in range(args.queries):
        # what people search for: one to three words of specific (not the 50 commonest) vocabulary,
        # sometimes written as an identifier
        picked = [vocab[rng.randrange(50, 20_000)] for _ in range(rng.choice((1, 2, 3)))]
        if len(picked) > 1 and rng.random() < 0.3:
            picked = [identifier(picked[0], picked[1], rng.randrange(4))] + picked[2:]
        queries.append(" ".join(picked))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / ".brain").mkdir()
        index = SearchIndex(tmp / ".brain", tmp, tmp / ".brain" / "runtime")
        docs = list(make_docs(args.docs))
        started, cpu = time.perf_counter(), time.process_time()
        index.add_documents(docs)
        index_seconds, index_cpu = time.perf_counter() - started, time.process_time() - cpu
        for q in queries[:100]:  # warm-up: a long-running server answers from a warm page cache
            index.search(q, limit=10)
        latencies, cpu_latencies = [], []
        hits = 0
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            hits += len(index.search(q, limit=10))
            latencies.append((time.perf_counter() - t) * 1000)
            cpu_latencies.append((time.process_time() - c) * 1000)
        index.close()

        base = sqlite3.connect(tmp / "baseline.db", isolation_level=None)
        base.execute("CREATE VIRTUAL TABLE d USING fts5(path UNINDEXED, body)")
        started, cpu = time.perf_counter(), time.process_time()
        base.execute("BEGIN")
        base.executemany("INSERT INTO d(path, body) VALUES (?, ?)", [(p, t) for p, _, t in docs])
        base.execute("COMMIT")
        base_seconds, base_cpu = time.perf_counter() - started, time.process_time() - cpu
        base_lat, base_cpu_lat = [], []
        for q in queries[:100]:
            base.execute("SELECT path FROM d WHERE d MATCH ? LIMIT 10", ('"' + q.split()[0] + '"',)).fetchall()
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            expr = " ".join('"' + w.replace('"', '""') + '"' for w in q.split())
            base.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10", (expr,)).fetchall()
            base_lat.append((time.perf_counter() - t) * 1000)
            base_cpu_lat.append((time.process_time() - c) * 1000)
    rate = args.docs / index_seconds
    base_rate = args.docs / base_seconds
    print(f"documents: {args.docs}, queries: {args.queries} (hits returned: {hits})")
    print("| measure | brain search | plain FTS5 baseline | ratio |")
    print("|---|---|---|---|")
    print(f"| index documents/s (wall clock) | {rate:,.0f} | {base_rate:,.0f} | {rate / base_rate:.2f} |")
    cpu_rate, base_cpu_rate = args.docs / index_cpu, args.docs / base_cpu
    print(f"| index documents/s (CPU time of this process) | {cpu_rate:,.0f} | {base_cpu_rate:,.0f} | "
          f"{cpu_rate / base_cpu_rate:.2f} |")
    for p in (50, 95, 99):
        a, b = pct(latencies, p), pct(base_lat, p)
        print(f"| query p{p} ms (wall clock) | {a:.2f} | {b:.2f} | {a / b if b else float('inf'):.1f} |")
    for p in (50, 95, 99):
        a, b = pct(cpu_latencies, p), pct(base_cpu_lat, p)
        print(f"| query p{p} ms (CPU time) | {a:.2f} | {b:.2f} | {a / b if b else float('inf'):.1f} |")
    print(f"mean query ms: {statistics.mean(latencies):.2f}; load average at the end: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    ok = rate >= 20_000 and pct(latencies, 95) <= 10
    print("targets (>= 20,000 docs/s, p95 <= 10 ms; wall clock):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
