"""The function ranking's places after the first few go to the best definition of each top file not yet shown.

Why: on Django the first ten definitions often all come from the file the text names most, while the fix is
the best definition of the 2nd–5th ranked file (fn_spread's docstring); these tests pin the rule itself on
hand-made rankings, and that combining real evidence applies it."""

from __future__ import annotations

from brain.search.fn_spread import file_order, spread_files
from brain.search.function_evidence import FunctionEvidence, RecordedGraph
from brain.search.functions import DefRow
from brain.search.rank_functions import combine_functions
from brain.search.weights import shipped_weights

F = {"spread_keep": 2, "spread_slots": 2, "spread_files": 3, "kind_factor": {"function": 1.0, "method": 0.9, "class": 0.6}}


def _row(i: int, path: str, name: str, kind: str = "function") -> DefRow:
    return DefRow(i, path, name, name, kind, i * 10, i * 10 + 5, i * 10 + 1, True, f"def {name}()")


def _ranking(rows, score, files, params=F, limit=None):
    def key(i):
        return -score[i], rows[i].path, rows[i].start, rows[i].qual

    order = sorted(score, key=key)[: limit or len(score)]
    return [rows[i].qual for i in spread_files(order, score, rows, files, params, key)]


def test_a_top_file_not_shown_gets_its_best_definition_right_after_the_kept_places():
    rows = {i: _row(i, "a.py", f"a{i}") for i in range(1, 6)}
    rows.update({6: _row(6, "b.py", "b_low"), 7: _row(7, "b.py", "b_best"), 8: _row(8, "c.py", "c_best")})
    score = {1: 9.0, 2: 8.0, 3: 7.0, 4: 6.0, 5: 5.0, 6: 1.0, 7: 2.0, 8: 3.0}
    # the file ranking puts c.py before b.py: their best definitions take places 3 and 4 in that order
    assert _ranking(rows, score, ["a.py", "c.py", "b.py"]) == ["a1", "a2", "c_best", "b_best", "a3", "a4", "a5", "b_low"]
    # a limited ranking stays as long, and the pick may come from beyond its end
    assert _ranking(rows, score, ["a.py", "b.py"], limit=4) == ["a1", "a2", "b_best", "a3"]


def test_files_already_shown_or_below_the_top_files_take_no_place_and_zero_slots_is_off():
    rows = {1: _row(1, "a.py", "a1"), 2: _row(2, "b.py", "b1"), 3: _row(3, "a.py", "a2"), 4: _row(4, "d.py", "d1")}
    score = {1: 9.0, 2: 8.0, 3: 7.0, 4: 1.0}
    assert _ranking(rows, score, ["a.py", "b.py", "c.py", "d.py"]) == ["a1", "b1", "a2", "d1"]  # d.py is 4th of 3
    assert _ranking(rows, score, ["d.py", "a.py"], dict(F, spread_slots=0)) == ["a1", "b1", "a2", "d1"]
    assert _ranking(rows, score, ["d.py", "a.py"]) == ["a1", "b1", "d1", "a2"]


def test_the_file_order_is_read_back_from_the_file_prior_of_the_evidence():
    ev = FunctionEvidence(graph=RecordedGraph())
    ev.add(_row(1, "second.py", "C", "class"), "file", 0.5 * 0.6, "in a ranked file")  # a class's prior is scaled
    ev.add(_row(2, "first.py", "f"), "file", 0.8, "in a ranked file")
    ev.add(_row(3, "second.py", "g"), "file", 0.5, "in a ranked file")
    ev.add(_row(4, "unranked.py", "h"), "body", 1.0, "full-text match")
    assert file_order(ev, F) == ["first.py", "second.py"]


def test_combining_evidence_gives_the_second_file_a_place_in_the_top_ten():
    ev = FunctionEvidence(graph=RecordedGraph())
    for i in range(1, 13):  # twelve matching definitions of the best file
        row = _row(i, "best.py", f"m{i}")
        ev.graph.files.setdefault("best.py", []).append(i)
        ev.add(row, "file", 1.0, "in a ranked file")
        ev.add(row, "body", 1.0 - i / 100, "full-text match")
    fix = _row(20, "second.py", "fix")
    ev.graph.files["second.py"] = [20]
    ev.add(fix, "file", 0.7, "in a ranked file")
    ev.add(fix, "body", 0.5, "full-text match")
    for i in list(range(1, 13)) + [20]:
        ev.graph.rows[i] = ev.rows[i]
    weights = shipped_weights()  # shipped off (decision 0069): turned on here to test the rule
    on = [h.qual for h in combine_functions(ev, weights.replace(functions={"spread_slots": 2}), limit=10)]
    off = [h.qual for h in combine_functions(ev, weights.replace(functions={"spread_slots": 0}), limit=10)]
    assert "fix" not in off and on.index("fix") == weights.functions["spread_keep"]
    assert on[:5] == off[:5]
