"""`class_unnamed`: when the text names no definition, a class's file prior and text weigh more (decision 0071).

Why: a text that names nothing (a commit-style "support X in Y") describes a change, and the change is as often
to a class (a member added: the changed lines sit in the class body) as to one of its methods; the kind and
class-body factors that keep a class below its methods fit texts that name the method."""

from __future__ import annotations

from brain.search.function_evidence import FunctionEvidence
from brain.search.rank_functions import combine_functions
from brain.search.weights import shipped_weights

ROWS = [[1, "a.py", "Shop", "Shop", "class", 1, 40, 2, True, "class Shop:", []],
        [2, "a.py", "Shop.pay", "pay", "method", 3, 10, 4, True, "def pay(self)", []],
        [3, "b.py", "refund", "refund", "function", 1, 9, 2, True, "def refund()", []]]


def _evidence(named: bool) -> FunctionEvidence:
    defs = {"1": [["file", 0.6, "in a ranked file", 0], ["body", 0.4, "full-text match", 0]],
            "2": [["file", 0.9, "in a ranked file", 0], ["body", 0.5, "full-text match", 0]],
            "3": [["body", 0.2, "full-text match", 0]]}
    if named:
        defs["3"].append(["name", 0.5, "named `refund`", 0])
    return FunctionEvidence.from_json({"schema": 1, "rows": ROWS, "defs": defs,
                                       "graph": {"rows": ROWS, "files": {"a.py": [1, 2], "b.py": [3]}}})


def _scores(named: bool, boost: float) -> dict[str, float]:
    weights = shipped_weights().replace(functions={"class_unnamed": boost})
    return {h.qual: h.score for h in combine_functions(_evidence(named), weights)}


def test_a_text_that_names_nothing_lifts_the_class_by_the_factor():
    off, on = _scores(False, 1.0), _scores(False, 1.5)
    assert abs(on["Shop"] - 1.5 * off["Shop"]) < 1e-3
    assert on["Shop.pay"] == off["Shop.pay"] and on["refund"] == off["refund"]  # only classes move


def test_a_text_that_names_a_definition_leaves_the_class_as_it_was():
    assert _scores(True, 1.5) == _scores(True, 1.0)


def test_shipped_value():
    assert shipped_weights().functions["class_unnamed"] == 1.5
