"""The project's history as evidence for the file ranking: past commits like the task, and co-change.

Two features, read from the history tables of the index (see ``history_store``):

- ``history``: BM25 of the task's words over past commit messages; the files of the best
  ``TOP_COMMITS`` commits get each commit's similarity (relative to the best one, as the other
  BM25 features), shared among the commit's files, and the sum per file is normalised by the
  best file's, then scaled by how like the task the closest commit really is (``likeness``: an
  absolute cosine, full at ``LIKENESS_FULL``), so a report no past commit resembles (its
  environment section matching an unrelated commit) lends history little: the ``history`` weight
  for the file most past commits like this task changed, when one of them is close. A fix
  spreads over files the text never names, and the commits that fixed the same kind of
  problem before name them ("fix timeout in retry" -> the files retries live in).
- ``cochange``: for the best few candidate files, the files that changed together with them
  in past commits, by a confidence rather than raw counts: ``n(a, b) / sqrt(n(a) n(b))``
  (commits touching both, over how often each changes), at least ``COCHANGE_MIN`` commits
  together; each gets the ``cochange`` share x confidence of the candidate's score, like the
  neighbours of ``ranking._lend_to_neighbours``; and one with evidence of its own is lifted too
  (``lending._lift_cochanged``, the ``cochange_lift`` weight, decision 0072): its score times
  1 + weight x confidence, capped below the best file it changes with.

A repository without history has empty tables: both features add nothing and cost one query.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter, defaultdict
from ..lazyre import lazy

from .tokenize import tokens

__all__ = ["TOP_COMMITS", "COCHANGE_MIN", "MAX_COCHANGED", "history_evidence", "cochanged", "HISTORY_REASON",
           "COCHANGE_REASON"]

# The weights (weights.json: features.history 1.5, shares.cochange 0.1) are modest on purpose: the evidence is complementary (history alone put a fixed file in the top
# 5 for 20 of 180 corpus tasks where neither the ranking without it nor BM25 did) but a repository's history
# also holds much unrelated work, and a strong weight reshuffles the edge of the top 5 (3.0 / 0.25 lost 0.016
# all@5 on the six-language set while gaining 0.025 on the corpus slice). 1.5 / 0.1 gained on both
# (bench/bench_history.py --sweep: six languages 0.737 -> 0.759, corpus slice 0.485 -> 0.500), well below the
# full-text weight (8.0): history reorders plausible files rather than overruling what the text names.
# The co-change weight is a share of the candidate's score, as the twin (0.3) and import (0.12) shares are.
# Both live in weights.json (`history`, `cochange`), to be fitted. With the likeness scale (decision 0063) the
# history weight is 10: without it 6 lost 4 six-language tasks and gained 3 against no history at all, since
# the closest commits got full weight even when none was like the task.
TOP_COMMITS = 25  # commits whose files share the history feature
LIKENESS_FULL = 0.5  # the task-to-closest-commit cosine (``likeness``) at which history counts in full
MAX_TERMS = 200
COCHANGE_SEEDS = 3
COCHANGE_MIN = 2  # commits together before a pair counts: one shared commit is chance
MAX_SEED_COMMITS = 400  # the newest commits of a candidate read for co-change (a hot file has thousands)
MAX_COCHANGED = 8  # files a candidate lends to, best first
HISTORY_REASON = "changed by a past commit like this task"
COCHANGE_REASON = "changes together with"
SUBJECT_SHOWN = 48  # characters of a commit subject in a reason: the boot has a token budget
_SHOWN = lazy(r"[^\w .,:;()#'/+\-=<>\[\]]")


def _shown(subject: str) -> str:
    """A commit subject as the boot shows it: untrusted text, so short, one line, plain characters."""
    text = _SHOWN.sub(" ", subject.replace("`", "'"))
    text = " ".join(text.split())
    return text if len(text) <= SUBJECT_SHOWN else text[:SUBJECT_SHOWN - 1].rstrip() + "…"


def _similar_commits(db: sqlite3.Connection, words: list[str]) -> list[tuple[int, float]]:
    terms = [w for w in dict.fromkeys(words) if len(w) > 1][:MAX_TERMS]
    if not terms:
        return []
    query = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    try:
        rows = db.execute("SELECT rowid, bm25(hist_fts) AS s FROM hist_fts WHERE hist_fts MATCH ? ORDER BY s LIMIT ?",
                          (query, TOP_COMMITS)).fetchall()
    except sqlite3.OperationalError:  # no history tables (an index built before them, or no refresh yet)
        return []
    return [(rowid, -s) for rowid, s in rows if s < 0]


def history_evidence(view, words: list[str], add) -> None:
    """``add(path, value, reason)`` for the files past commits similar to the task changed, at unit weight
    (1.0 for the file those commits point at most; the ``history`` weight of ``weights.json`` scales it)."""
    commits = _similar_commits(view.db, words)
    if not commits:
        return
    top = commits[0][1] or 1.0
    similarity = {rowid: s / top for rowid, s in commits}
    marks = ",".join("?" * len(similarity))
    files: dict[int, list[str]] = defaultdict(list)
    for commit_id, path in view.db.execute(
            f"SELECT commit_id, path FROM hist_files WHERE commit_id IN ({marks})", list(similarity)):
        if path in view.files and not view.is_test(path):
            files[commit_id].append(path)
    subjects = dict((rowid, (sha, subject)) for rowid, sha, subject in view.db.execute(
        f"SELECT id, sha, subject FROM hist_commits WHERE id IN ({marks})", list(similarity)))
    score: dict[str, float] = defaultdict(float)
    best: dict[str, tuple[float, int]] = {}
    for commit_id, paths in files.items():
        share = similarity[commit_id] / math.sqrt(len(paths))  # a commit changing many files says less of each
        for path in paths:
            score[path] += share
            if share > best.get(path, (0.0, 0))[0]:
                best[path] = (share, commit_id)
    if not score:
        return
    scale = min(1.0, likeness(view.db, words, list(similarity)) / LIKENESS_FULL)
    if scale <= 0:
        return
    peak = max(score.values())
    for path, value in score.items():
        sha, subject = subjects.get(best[path][1], ("", ""))
        add(path, scale * value / peak, f"{HISTORY_REASON} ({sha[:7]}: {_shown(subject)})")


def likeness(db: sqlite3.Connection, words: list[str], commit_ids: list[int]) -> float:
    """How like the task the closest of ``commit_ids`` is, in absolute terms (0..1): the cosine of the
    task's and the commit's word sets, each word weighted by its IDF over the commit messages
    (``log(1 + N / df)``; the task's words no commit writes are left out, history cannot match them).
    The BM25 ranking of the commits says only which are closest; this says whether any is close."""
    query = set(words)
    if not query or not commit_ids:
        return 0.0
    marks = ",".join("?" * len(commit_ids))
    messages = [{w for w in tokens(text, stop=True) if len(w) > 1} for (text,) in db.execute(
        f"SELECT message FROM hist_fts WHERE rowid IN ({marks})", commit_ids)]
    terms = sorted(query.union(*messages))
    df: dict[str, int] = {}
    try:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hist_vocab USING fts5vocab(main, hist_fts, row)")
        for i in range(0, len(terms), 500):
            chunk = terms[i:i + 500]
            df.update(db.execute(f"SELECT term, doc FROM temp.hist_vocab WHERE term IN "
                                 f"({','.join('?' * len(chunk))})", chunk).fetchall())
    except sqlite3.OperationalError:  # no fts5vocab (an SQLite built without it): no measure, no feature
        return 0.0
    n = db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0] or 1
    idf = {t: math.log(1 + n / max(d, 1)) for t, d in df.items()}
    task_norm = math.sqrt(sum(idf.get(t, 0.0) ** 2 for t in query if df.get(t)))
    best = 0.0
    for message in messages:
        norm = math.sqrt(sum(idf.get(t, math.log(1 + n)) ** 2 for t in message))
        if norm and task_norm:
            shared = sum(idf.get(t, math.log(1 + n)) ** 2 for t in message if t in query)
            best = max(best, shared / (norm * task_norm))
    return best


def cochanged(view, seed: str, changes: dict[str, int]) -> list[tuple[str, float, str]]:
    """(file, confidence, reason) for the files that changed together with ``seed`` in past commits, best
    first (at most ``MAX_COCHANGED``); ``changes`` caches how often each file changed, across seeds. The
    ranking lends each the ``cochange`` share times the confidence of the seed's score, when ``seed`` is
    one of the best files (``ranking.combine``)."""
    db = view.db
    try:
        ids = [r[0] for r in db.execute("SELECT commit_id FROM hist_files WHERE path = ? ORDER BY commit_id DESC "
                                        "LIMIT ?", (seed, MAX_SEED_COMMITS))]
    except sqlite3.OperationalError:  # no history tables
        return []
    if len(ids) < COCHANGE_MIN:
        return []
    marks = ",".join("?" * len(ids))
    together = Counter(path for (path,) in db.execute(
        f"SELECT path FROM hist_files WHERE commit_id IN ({marks})", ids) if path != seed)
    pairs = {p: n for p, n in together.items() if n >= COCHANGE_MIN and p in view.files and not view.is_test(p)}
    if not pairs:
        return []
    unknown = [p for p in pairs if p not in changes]
    for i in range(0, len(unknown), 500):
        chunk = unknown[i:i + 500]
        changes.update(db.execute(f"SELECT path, COUNT(*) FROM hist_files WHERE path IN "
                                  f"({','.join('?' * len(chunk))}) GROUP BY path", chunk).fetchall())
    ranked = sorted(((n / math.sqrt(len(ids) * max(changes.get(p, n), n)), p, n) for p, n in pairs.items()),
                    key=lambda t: (-t[0], t[1]))[:MAX_COCHANGED]
    return [(path, confidence, f"{COCHANGE_REASON} `{seed}` ({n} of its {len(ids)} commits)")
            for confidence, path, n in ranked]
