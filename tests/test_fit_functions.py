"""bench/fit_functions.py (`fit_weights.py --functions`): the function weights fitted on recorded evidence."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import fit_functions as ff  # noqa: E402
from test_functions import shop  # noqa: E402,F401  (fixture)


def test_rank_all_is_the_rank_of_the_last_gold_definition():
    assert ff.rank_all(["a", "b"], ["b", "x", "a"]) == 3
    assert ff.rank_all(["a", "c"], ["a", "b"]) is None


def test_the_keep_rule_needs_a_move_a_held_out_gain_and_the_django_guard():
    assert ff.keep_rule({"body": 2.0}, 0.01, 3, 3, True)
    assert not ff.keep_rule({}, 0.01, 3, 3, True)
    assert not ff.keep_rule({"body": 2.0}, 0.01, 2, 3, True)  # too few tasks
    assert not ff.keep_rule({"body": 2.0}, 0.0, 5, 3, True)  # the macro did not rise
    assert not ff.keep_rule({"body": 2.0}, 0.01, 5, 3, False)  # Django loses
    assert not ff.keep_rule({"body": 2.0}, 0.01, 5, 3, None)  # the guard did not run


def _task(shop, text: str, gold: list[str], repo: str, lang: str) -> dict:
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import gather_functions
    from brain.search.service import boot_code_view

    found = shop.locate(text)
    ev = gather_functions(FunctionView(shop.index.db), boot_code_view(shop.index), text, found)
    return {"id": f"{repo}-{len(text)}", "repo": repo, "lang": lang, "fgold": gold,
            "functions": json.loads(json.dumps(ev.to_json()))}


def test_fitting_recorded_evidence_ranks_as_the_boot_and_moves_nothing_without_a_gain(shop, tmp_path):
    from brain.search.weights import shipped_weights

    items = [_task(shop, "Order.total ignores the VAT rate", ["shop/orders.py::Order.total"], "a/one", "Python"),
             _task(shop, "render() drops the brackets of lists in lists", ["shop/api.py::render"], "b/two", "Go")]
    (tmp_path / "ev.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    tasks = ff.load_corpus(tmp_path)
    shipped = shipped_weights()
    got = ff.ranks(tasks, shipped)
    assert sorted(got.values()) == [1, 1]
    assert ff.summary(tasks, got)["macro"]["all@1"] == 1.0
    names = ["body", "name", "file"]
    start = {n: shipped.functions[n] for n in names}
    assert ff.fit(tasks, start, names, 1, shipped, grid=(0.0, 2.0)) == start  # already best: no move gains
    held, fold_of, per_fold, final = ff.cross_validate(tasks, 2, names, 1, shipped, grid=(0.0, 2.0))
    assert set(fold_of) == {"a/one", "b/two"} and set(held) == {t.id for t in tasks} and final == start


class _Fake:
    def __init__(self, id: str, lang: str = "Go") -> None:
        self.id, self.repo, self.lang, self.features = id, "a/one", lang, {"body"}


def test_all_at_1_in_the_objective_refuses_a_move_that_trades_the_top_for_the_top_5(monkeypatch):
    from brain.search.weights import shipped_weights

    shipped = shipped_weights()
    tasks = [_Fake("a"), _Fake("b")]
    hand = shipped.functions["body"]

    def fake_ranks(ts, weights):  # body halved: a leaves the top, b enters the top 5
        moved = weights.functions["body"] != hand
        table = {"a": 2 if moved else 1, "b": 3 if moved else 6}
        return {t.id: table[t.id] for t in ts}

    monkeypatch.setattr(ff, "ranks", fake_ranks)
    assert ff._objective(tasks, {"a": 1, "b": 6}) == (0.5, 0.5833)
    assert ff._objective(tasks, {"a": 1, "b": 6}, (5, 1)) == (1.0, 0.5833)
    start = {"body": hand}
    assert ff.fit(tasks, start, ["body"], 1, shipped, grid=(0.5,)) == {"body": hand / 2}  # all@5 alone: taken
    assert ff.fit(tasks, start, ["body"], 1, shipped, grid=(0.5,), objective=(5, 1)) == start  # all@5 + all@1: even
