"""bench/fn_misses.py: the function ranking's misses on recorded evidence, by why the gold is not in the top k."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import fit_functions as ff  # noqa: E402
import fn_misses as fm  # noqa: E402
from test_functions import shop  # noqa: E402,F401  (fixture)


def _tasks(shop, tmp_path, cases: list[tuple[str, list[str]]]):
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import gather_functions
    from brain.search.service import boot_code_view

    items = []
    for n, (text, gold) in enumerate(cases):
        found = shop.locate(text)
        ev = gather_functions(FunctionView(shop.index.db), boot_code_view(shop.index), text, found)
        items.append({"id": f"t{n}", "repo": "a/one", "lang": "Python", "fgold": gold,
                      "functions": json.loads(json.dumps(ev.to_json()))})
    (tmp_path / "ev.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return ff.load_corpus(tmp_path)


def test_a_hit_is_no_miss_and_a_miss_says_where_its_gold_stands(shop, tmp_path):
    from brain.search.weights import shipped_weights

    weights = shipped_weights()
    hit, miss = _tasks(shop, tmp_path, [("Order.total ignores the VAT rate", ["shop/orders.py::Order.total"]),
                                        ("Order.total ignores the VAT rate", ["shop/orders.py::nowhere"])])
    assert fm.classify(hit, weights, k=5) is None
    got = fm.classify(miss, weights, k=5)
    assert got["class"] == "not gathered" and got["rank"] is None and got["worst"] is None
    assert got["file_place"] == 1  # its file is the prior's first: a definition that is not there
    files = fm.file_order(hit.evidence, weights.functions["kind_factor"])
    assert files and files[0] == "shop/orders.py"


def test_evidence_recorded_with_a_retired_feature_still_combines():
    from brain.search.function_evidence import FunctionEvidence
    from brain.search.rank_functions import combine_functions

    row = [1, "a.py", "f", "f", "function", 1, 5, 2, True, "def f()", []]
    data = {"schema": 1, "rows": [row], "defs": {"1": [["file", 1.0, "in a ranked file", 0],
                                                      ["member_word", 0.5, "gone", 0]]},
            "graph": {"rows": [row], "files": {"a.py": [1]}}}
    ev = FunctionEvidence.from_json(data)
    assert [r[0] for r in ev.defs[1].reasons] == ["file"]
    assert [h.qual for h in combine_functions(ev)] == ["f"]
