"""bench/corpus_score.py: the corpus benchmark's task draw, fold assignment and scores, on a tiny synthetic set."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import corpus_score as cs  # noqa: E402


def _tasks(repo: str, n: int, lang: str = "Go") -> list[dict]:
    return [{"instance_id": f"{repo}@{i:04d}", "repo": repo, "language": lang, "date": f"2023-01-{28 - i:02d}"}
            for i in range(n)]


# --- the draw ---------------------------------------------------------------------------------------------------

def test_the_draw_is_deterministic_independent_of_order_and_in_commit_order():
    tasks = _tasks("a/x", 20) + _tasks("b/y", 3)
    one = cs.sample(tasks, 5)
    two = cs.sample(list(reversed(tasks)), 5)
    assert one == two
    assert [len(one["a/x"]), len(one["b/y"])] == [5, 3]
    dates = [t["date"] for t in one["a/x"]]
    assert dates == sorted(dates)  # oldest first: one tree walks forward
    assert cs.sample(tasks, 5, seed="other")["a/x"] != one["a/x"]  # the seed decides the draw
    # a bigger draw keeps the smaller one's tasks (the hash order does not depend on the count)
    assert {t["instance_id"] for t in one["a/x"]} <= {t["instance_id"] for t in cs.sample(tasks, 8)["a/x"]}
    assert len(cs.sample(tasks, None)["a/x"]) == 20


# --- the folds --------------------------------------------------------------------------------------------------

def test_folds_group_by_repository_and_stratify_by_language():
    langs = {f"o/{lang.lower()}{i}": lang for lang, n in (("Go", 7), ("C", 5), ("Rust", 3), ("Ruby", 1)) for i in range(n)}
    folds = cs.assign_folds(langs, 5)
    assert set(folds) == set(langs) and set(folds.values()) <= set(range(5))
    for lang in ("Go", "C", "Rust"):
        per_fold = Counter(folds[r] for r, v in langs.items() if v == lang)
        assert max(per_fold.values()) - min(per_fold.get(f, 0) for f in range(5)) <= 1, (lang, per_fold)
    sizes = Counter(folds.values())
    assert max(sizes.values()) - min(sizes.values()) <= 1  # 16 repositories over 5 folds: 3 or 4 each
    assert cs.assign_folds(dict(reversed(list(langs.items()))), 5) == folds  # deterministic, not order-bound
    assert cs.assign_folds(langs, 5, seed="another") != folds
    assert cs.assign_folds({k.upper(): v for k, v in langs.items()}, 5) == {k.upper(): v for k, v in folds.items()}


def test_fewer_than_two_folds_is_refused():
    with pytest.raises(ValueError, match="at least 2 folds"):
        cs.assign_folds({"a/b": "Go"}, 1)


# --- the scores -------------------------------------------------------------------------------------------------

def test_gold_ranks_take_the_first_position_and_none_for_a_miss():
    assert cs.gold_ranks(["b", "z", "a"], ["a", "b", "a", "c"]) == [2, None, 1]


def test_task_scores_need_every_gold_file_for_all_and_one_for_any():
    s = cs.task_scores([2, 7])
    assert (s["all@1"], s["all@5"], s["all@10"], s["any@1"], s["any@5"]) == (0.0, 0.0, 1.0, 0.0, 1.0)
    assert s["mrr"] == pytest.approx(0.5)
    miss = cs.task_scores([None, 1])
    assert (miss["all@10"], miss["any@1"], miss["mrr"]) == (0.0, 1.0, 1.0)
    assert cs.task_scores([None]) == {"all@1": 0.0, "all@5": 0.0, "all@10": 0.0, "any@1": 0.0, "any@5": 0.0, "mrr": 0.0}


def test_per_language_scores_and_a_macro_where_each_language_weighs_the_same():
    rows = [
        {"repo": "a/go1", "lang": "Go", "brain": [1], "bm25": [3], "ctx": True, "tokens": 100},
        {"repo": "a/go2", "lang": "Go", "brain": [6, 1], "bm25": [1, 2], "ctx": False, "tokens": 300},
        {"repo": "a/c", "lang": "C", "brain": [None], "bm25": [1], "ctx": False, "tokens": 200},
    ]
    per = cs.by_language(rows, ("brain", "bm25"))
    assert per["Go"]["tasks"] == 2 and per["Go"]["repos"] == 2
    assert per["Go"]["brain"]["all@5"] == 0.5 and per["Go"]["bm25"]["all@5"] == 1.0
    assert per["Go"]["brain"]["in_context"] == 0.5 and per["Go"]["brain"]["tokens_max"] == 300
    assert "in_context" not in per["Go"]["bm25"]
    overall = cs.macro(per, ("brain", "bm25"))
    assert overall["brain"]["all@5"] == pytest.approx((0.5 + 0.0) / 2)  # not 1/3: languages weigh the same
    assert overall["bm25"]["any@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert (overall["tasks"], overall["repos"]) == (3, 3)
    text = cs.table(per, overall, {"brain": "ours", "bm25": "BM25"})
    lines = text.splitlines()
    assert lines[0].startswith("| language | repos | tasks | ours all@1") and "ours in context" in lines[0]
    assert lines[-1].startswith("| **macro** | 3 | 3 |") and len(lines) == 2 + 3
    assert all(line.count("|") == lines[0].count("|") for line in lines)



# --- the fitter (bench/fit_weights.py) on hand-made evidence, through the product's own combine ---------------------

def _evidence_task(fit_weights, tid: str, lang: str):
    from brain.search.ranking import Evidence

    ev = Evidence()
    ev.add("src/gold.go", "symbol", 1.0, "defines `x`")  # 1.5 under the shipped weights
    for i in range(6):  # six files with a weak text match each: 0.25 x 8 = 2.0, all above the gold file
        ev.add(f"src/other{i}.go", "bm25", 0.25, "full-text match")
    row = {"id": tid, "repo": f"o/{tid}", "lang": lang, "gold": ["src/gold.go"], "bm25": [None]}
    return fit_weights.Task(row, ev, {"symbol", "bm25"})


def test_the_fit_moves_a_weight_only_for_at_least_the_tasks_it_must_gain():
    import fit_weights

    ranker = fit_weights.Ranker()
    task = _evidence_task(fit_weights, "t1", "Go")
    assert fit_weights.metrics(ranker, task, ranker.weights(ranker.current))["all@5"] == 0.0  # rank 7
    names = ["bm25", "symbol"]
    moved = fit_weights.fit(ranker, [task], ranker.current, names, passes=2, min_gain_tasks=1.0)
    assert moved != ranker.current
    assert fit_weights.metrics(ranker, task, ranker.weights(moved))["all@5"] == 1.0
    assert set(k for k in moved if moved[k] != ranker.current[k]) <= set(names)
    # asking for two tasks' worth, one task fixed is not enough: nothing moves
    kept = fit_weights.fit(ranker, [task], ranker.current, names, passes=2, min_gain_tasks=2.0)
    assert kept == ranker.current


def test_the_corpus_benchmark_refuses_a_reserved_repository_before_reading_any_mirror(tmp_path, capsys):
    import json

    import bench_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"instance_id": "Some/Repo@1", "repo": "Some/Repo", "language": "Go",
                                  "base_commit": "0" * 40, "problem_statement": "fix it", "gold_files": ["a.go"]}) + "\n")
    reserved_list = tmp_path / "reserved.txt"
    reserved_list.write_text("some/repo\n")
    out = tmp_path / "out.json"
    code = bench_corpus.main(["--corpus", str(corpus), "--mirrors", str(tmp_path / "no-mirrors"),
                              "--reserved", str(reserved_list), "--out", str(out), "--trees", str(tmp_path / "trees")])
    assert code == 2 and "refusing reserved repositories: Some/Repo" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "trees").exists()
