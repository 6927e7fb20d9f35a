"""The pure parts of the corpus benchmark: which tasks, which fold, and how a ranking scores.

Kept apart from the runner (bench_corpus.py) so the fitter (fit_weights.py) scores its rankings with the
very same functions, and so the tests check them on a tiny synthetic set without any mirror or index.

- sample: per repository, the tasks whose seeded hash is smallest (a deterministic draw that does not
  depend on the corpus order, nor on how many tasks the repository has), then visited in commit order so
  one working tree per repository moves forward and the index refreshes only what changed;
- folds: leave-repositories-out cross-validation. A repository's tasks all go to one fold (so a fold's
  figure is on repositories the weights never saw), and each language's repositories are dealt over the
  folds in a seeded order, the next one always to the fold with the fewest repositories of that language
  so far, then the fewest repositories overall (stratified: every fold holds every language it can);
- scores: per task the rank of every gold file; per language all@1/all@5/all@10 (every gold file in the
  top k), any@1/any@5, MRR of the first gold file, in context (every gold file named in the boot text),
  boot tokens; the macro is the mean over languages, each language weighing the same.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

__all__ = ["seeded_key", "sample", "commit_order", "assign_folds", "gold_ranks", "task_scores", "scores",
           "by_language", "macro", "table", "METRICS", "TABLE_METRICS"]

METRICS = ("all@1", "all@5", "all@10", "any@1", "any@5", "mrr")
TABLE_METRICS = ("all@1", "all@5", "any@5", "mrr")


def seeded_key(seed: str, name: str) -> str:
    """A stable pseudo-random sort key for ``name`` (sha256: the same on every machine and Python)."""
    return hashlib.sha256(f"{seed}\0{name}".encode()).hexdigest()


def commit_order(tasks: list[dict]) -> list[dict]:
    """Tasks oldest first (their commit date, then id): the order one tree per repository walks them."""
    return sorted(tasks, key=lambda t: (t.get("date", ""), t["instance_id"]))


def sample(tasks: list[dict], per_repo: int | None, seed: str = "corpus") -> dict[str, list[dict]]:
    """repo -> up to ``per_repo`` of its tasks (all when None), drawn by seeded hash, in commit order."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for t in tasks:
        by_repo[t["repo"]].append(t)
    out = {}
    for repo in sorted(by_repo):
        drawn = sorted(by_repo[repo], key=lambda t: seeded_key(seed, t["instance_id"]))
        out[repo] = commit_order(drawn if per_repo is None else drawn[:per_repo])
    return out


def assign_folds(repo_language: dict[str, str], k: int, seed: str = "folds") -> dict[str, int]:
    """repo -> fold in 0..k-1, grouped by repository, stratified by language, deterministic (see the module)."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, not {k}")
    by_lang: dict[str, list[str]] = defaultdict(list)
    for repo, lang in repo_language.items():
        by_lang[lang].append(repo)
    total = [0] * k
    folds: dict[str, int] = {}
    for lang in sorted(by_lang):
        here = [0] * k
        for repo in sorted(by_lang[lang], key=lambda r: seeded_key(seed, r.lower())):
            fold = min(range(k), key=lambda f: (here[f], total[f], f))
            folds[repo] = fold
            here[fold] += 1
            total[fold] += 1
    return folds


def gold_ranks(gold: list[str], files: list[str]) -> list[int | None]:
    """The 1-based rank of each gold file in ``files`` (None: not ranked)."""
    position: dict[str, int] = {}
    for i, f in enumerate(files):
        position.setdefault(f, i + 1)
    return [position.get(g) for g in gold]


def task_scores(ranks: list[int | None]) -> dict[str, float]:
    """One task's metrics from its gold files' ranks."""
    worst = max((r if r is not None else 10**9) for r in ranks) if ranks else 10**9
    best = min((r if r is not None else 10**9) for r in ranks) if ranks else 10**9
    out = {}
    for k in (1, 5, 10):
        out[f"all@{k}"] = float(worst <= k)
    for k in (1, 5):
        out[f"any@{k}"] = float(best <= k)
    out["mrr"] = 1.0 / best if best < 10**9 else 0.0
    return out


def scores(rows: list[dict], key: str) -> dict[str, float]:
    """Mean metrics of ``rows`` for the ranking ``key`` (each row holds ``row[key]``: the gold ranks)."""
    n = len(rows)
    if not n:
        return {m: 0.0 for m in METRICS}
    sums: dict[str, float] = defaultdict(float)
    for row in rows:
        for m, v in task_scores(row[key]).items():
            sums[m] += v
    out = {m: sums[m] / n for m in METRICS}
    if key == "brain" and all("ctx" in row for row in rows):
        out["in_context"] = sum(bool(row["ctx"]) for row in rows) / n
    if key == "brain" and rows and all("code" in row for row in rows):
        out["code_shown"] = sum(bool(row["code"]) for row in rows) / n
    if key == "brain" and all("tokens" in row for row in rows):
        out["tokens_max"] = max(row["tokens"] for row in rows)
        out["tokens_median"] = sorted(row["tokens"] for row in rows)[(n - 1) // 2]
    return out


def code_files(result: dict) -> list[str]:
    """The files whose code a boot shows: its code slot's parts, one definition (or a file's lines) each, as
    ``path::name`` (``brain boot --json`` sections). "Code shown" = a gold file among them: depth, where "in
    context" counts a gold file named anywhere in the text."""
    return list(dict.fromkeys(s["source"].split("::", 1)[0] for s in result.get("sections", [])
                              if s.get("slot") == "code" and "::" in s.get("source", "")))


def by_language(rows: list[dict], keys: tuple[str, ...]) -> dict[str, dict]:
    """language -> {tasks, repos, key: scores} for each ranking key."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["lang"]].append(row)
    return {lang: {"tasks": len(rs), "repos": len({r["repo"] for r in rs}), **{k: scores(rs, k) for k in keys}}
            for lang, rs in sorted(groups.items())}


def macro(per_lang: dict[str, dict], keys: tuple[str, ...]) -> dict:
    """The mean over languages of each ranking's metrics (each language weighs the same)."""
    out: dict = {"tasks": sum(v["tasks"] for v in per_lang.values()),
                 "repos": sum(v["repos"] for v in per_lang.values())}
    for key in keys:
        entries = [v[key] for v in per_lang.values()]
        names = [m for m in (entries[0] if entries else {}) if not m.startswith("tokens")]
        out[key] = {m: sum(e[m] for e in entries) / len(entries) for m in names} if entries else {}
    return out


def table(per_lang: dict[str, dict], overall: dict, columns: dict[str, str],
          metrics: tuple[str, ...] = TABLE_METRICS, context_key: str | None = "brain") -> str:
    """A markdown table: one row per language and the macro; ``columns`` maps ranking key -> its heading."""
    head = ["language", "repos", "tasks"]
    for key, name in columns.items():
        head += [f"{name} {m}" for m in metrics]
        if key == context_key:
            head += [f"{name} in context", f"{name} code shown"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for lang, entry in [*per_lang.items(), ("macro", overall)]:
        cells = [f"**{lang}**" if lang == "macro" else lang, str(entry["repos"]), str(entry["tasks"])]
        for key in columns:
            s = entry.get(key, {})
            cells += [f"{s[m]:.2f}" if m in s else "—" for m in metrics]
            if key == context_key:
                cells += [f"{s[m]:.2f}" if m in s else "—" for m in ("in_context", "code_shown")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
